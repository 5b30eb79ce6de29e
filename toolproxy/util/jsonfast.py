"""JSON text to Python values, as `json.loads` reads it, via orjson where that is the same.

orjson parses several times faster than the json module but reads a few texts its own
way: integers beyond 64 bits become floats, and NaN, Infinity, numbers that overflow to
infinity and lone surrogate escapes are errors. `loads` gives orjson's reading only when
the text has none of those (an integer of 20 or more digits sends it to the json module,
as does any orjson error), so every caller sees exactly what `json.loads` would return or
raise. Duplicate keys: both keep the last value. Pure.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

_LONG_NUMBER = re.compile(r"[0-9]{20}")  # ASCII: JSON numbers are


SLOW = object()  # `fast_loads`: "read this one with the json module"


def fast_loads(text: str) -> Any:
    """orjson's reading of `text` when it is certainly `json.loads`'s, else `SLOW`."""
    if has_long_number(text):
        return SLOW
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # NaN, overflow, lone surrogates: the json module decides
        return SLOW


def loads(text: str) -> Any:
    """`json.loads(text)`, faster; raises ValueError (json.JSONDecodeError) as it does."""
    value = fast_loads(text)
    return json.loads(text) if value is SLOW else value


def has_long_number(text: str) -> bool:
    """Does the text hold a run of 20+ digits (an integer orjson would read as a float)?"""
    return _LONG_NUMBER.search(text) is not None


_JSON_SCALARS = (str, int, bool, type(None))


def plain_json(value: Any) -> bool:
    """Only JSON's own values (str keys, finite numbers, no YAML sets, bytes or dates)?
    The fast validators (jsonschema-rs, `quickerrors`) are only asked about such values."""
    pending = [value]
    while pending:
        v = pending.pop()
        t = type(v)
        if t is dict:
            if any(type(k) is not str for k in v):
                return False
            pending.extend(v.values())
        elif t is list:
            pending.extend(v)
        elif t is float:
            if v != v or v in (math.inf, -math.inf):
                return False
        elif t not in _JSON_SCALARS:
            return False
    return True
