"""JSON text to Python values, as `json.loads` reads it, via orjson where that is the same.

orjson parses several times faster than the json module but reads a few texts its own
way: integers outside 64 bits (from -2**63 to 2**64 - 1) become floats, and NaN, Infinity,
numbers that overflow to infinity and lone surrogate escapes are errors. `loads` gives
orjson's reading only when it has none of those: any orjson error, and any float in its
reading of a text holding a run of 19 or more digits (-9223372036854775809 has 19), send the
text to the json module. So every caller sees exactly what `json.loads` would return or
raise. Walking the reading for a float first (a schema or a case line seldom has one) and
scanning for digit runs only then reads a tool schema in 4.2 µs instead of 7.1 µs, a case
line in 2.3 µs instead of 4.0 µs (compiled; arguments, a quarter of which hold floats, as
before). Duplicate keys: both keep the last value.

`canonical_dumps` is the other way: the text hashes are taken of (sorted keys, no spaces,
UTF-8 as is), from orjson when it writes the json module's very text: for values of dicts
with string keys, lists, strings, integers, booleans and None (orjson writes some floats
its own way, 1e-06 as 1e-6; integers beyond 64 bits and lone surrogates it refuses). A tool
schema of BFCL's (374 characters on average) is written in 3.4 µs against the json
module's 10.0 µs, the check included. `error_where` words a decode error with where it
stopped, for the messages that point at a line or column of their own. Pure.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any, Final

import orjson

_LONG_NUMBER: Final = re.compile(r"[0-9]{19}")  # ASCII: JSON numbers are


SLOW: Final = object()  # `fast_loads`: "read this one with the json module"


def fast_loads(text: str) -> Any:
    """orjson's reading of `text` when it is certainly `json.loads`'s, else `SLOW`."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:  # NaN, overflow, lone surrogates: the json module decides
        return SLOW
    if holds_float(value) and has_long_number(text):  # a float may be a long integer
        return SLOW
    return value


def loads(text: str) -> Any:
    """`json.loads(text)`, faster; raises ValueError (json.JSONDecodeError) as it does."""
    value = fast_loads(text)
    return json.loads(text) if value is SLOW else value


def has_long_number(text: str) -> bool:
    """Does the text hold a run of 19+ digits (maybe an integer orjson reads as a float)?"""
    return _LONG_NUMBER.search(text) is not None


def holds_float(value: object) -> bool:
    """Is there a float anywhere in a JSON value (dicts and lists walked)?"""
    pending: list[object] = [value]
    while pending:
        v = pending.pop()
        if isinstance(v, float):
            return True
        if isinstance(v, dict):
            for item in v.values():
                pending.append(item)
        elif isinstance(v, list):
            pending.extend(v)
    return False


def canonical_dumps(value: Any) -> str:
    """`json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`,
    raising as it does, via orjson when that writes the same text (JSON's own values, no
    floats and no subclasses: `plain_json(value, floats=False)`)."""
    if plain_json(value, floats=False):
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
        except orjson.JSONEncodeError:  # an integer beyond 64 bits, a lone surrogate
            pass
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# `sorted_bytes`' options: subclasses, dates and dataclasses are passed through to no
# `default`, so refused (they take the canonical text), as orjson refuses integers beyond
# 64 bits, bytes, sets and keys that are not strings. Typed Any and held here with
# orjson.dumps: compiled, the int is not boxed nor the function looked up per call.
_KEY_OPTIONS: Final[Any] = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)
_DUMPS: Final = orjson.dumps


def sorted_bytes(value: Any) -> bytes | None:
    """orjson's text of a JSON value, keys sorted: a dict key for values, written without
    walking the value first. Values of one canonical text (`canonical_dumps`) have the same
    bytes, and finite JSON values of different texts have different bytes; but orjson
    writes NaN and the infinities as null, and a UUID or an Enum member as its value, so a
    hit by these bytes is compared with the value. None when orjson refuses the value
    (`_KEY_OPTIONS`)."""
    try:
        return _DUMPS(value, option=_KEY_OPTIONS)
    except orjson.JSONEncodeError:
        return None


def pretty_dumps(value: Any) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False)`, raising as it does, via orjson
    when that writes the same text: JSON's own values (`plain_json`) whose floats are 0 or
    between 1e-4 and 1e16 in size (below, orjson writes 1.5e-05 as 0.000015 and 2.5e-07
    as 2.5e-7). With `indent` the json module encodes in Python: a report of 90,818 cases
    took 0.52 s, orjson 0.02 s."""
    if plain_json(value) and _floats_alike(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        except orjson.JSONEncodeError:  # an integer beyond 64 bits, a lone surrogate
            pass
    return json.dumps(value, indent=2, ensure_ascii=False)


def _floats_alike(value: Any) -> bool:
    """Does every float in a JSON value read the same in orjson's text as in json's?"""
    pending: list[Any] = [value]
    while pending:
        v = pending.pop()
        t = type(v)
        if t is float:
            size = abs(v)
            if size != 0.0 and not (1e-4 <= size < 1e16):
                return False
        elif t is dict:
            pending.extend(v.values())
        elif t is list:
            pending.extend(v)
    return True


def canonical_sha256(value: Any) -> str:
    """The SHA-256 hex digest of `canonical_dumps(value)` in UTF-8 (a lone surrogate, which
    a schema may carry as an escape, is hashed rather than refused)."""
    return text_sha256(canonical_dumps(value))


def text_sha256(text: str) -> str:
    """`canonical_sha256` of the value whose canonical text is `text`."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def plain_json(value: Any, floats: bool = True) -> bool:
    """Only JSON's own values (str keys, finite numbers, no YAML sets, bytes or dates)?
    The fast validators (jsonschema-rs, `quickerrors`) are only asked about such values.
    `floats=False`: and no float at all (what `canonical_dumps` leaves to orjson)."""
    pending = [value]
    while pending:
        v = pending.pop()
        t = type(v)
        if t is dict:
            d: dict[Any, Any] = v
            for k, item in d.items():
                if type(k) is not str:
                    return False
                if not _leaf(item):  # strings, the most of a schema, are never pushed
                    pending.append(item)
        elif t is list:
            items: list[Any] = v
            for item in items:
                if not _leaf(item):
                    pending.append(item)
        elif t is float:
            if not floats or v != v or v in (math.inf, -math.inf):
                return False
        elif not _leaf(v):
            return False
    return True


def _leaf(v: Any) -> bool:
    """A str, int, bool or None: JSON as it is."""
    t = type(v)
    return t is str or t is int or t is bool or v is None


def error_where(exc: json.JSONDecodeError, where: str) -> str:
    """json's message, then where it stopped (`where`: 'char 17', 'column 5', 'line 2'):
    'Expecting value at column 5'. Some messages already end in "at" ("Unterminated
    string starting at"): no second one."""
    joiner = " " if exc.msg.endswith(" at") else " at "
    return f"{exc.msg}{joiner}{where}"
