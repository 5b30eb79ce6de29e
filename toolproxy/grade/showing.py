"""`show`: a value shortened for a failure's detail, as `reprlib.Repr` shortens it
(`expected 'Paris', got 'Lyon'`, a failing `any_of`'s choices). Pure.

JSON's types (and tuples) are written here, exactly as reprlib writes them: its dispatch
runs as Python, about 9,000 instructions for a failing `any_of`'s choices (callgrind).
Anything else goes to reprlib itself.
"""

from __future__ import annotations

import reprlib
from typing import Any, Final

_SHOW = reprlib.Repr(maxlevel=3, maxstring=80, maxother=80, maxlist=6, maxdict=6)
# `_SHOW`'s limits, for `_short` (an int's is reprlib's default `maxlong`, a tuple's `maxtuple`)
_LEVEL: Final = 3
_STRING: Final = 80
_OTHER: Final = 80
_LONG: Final = 40
_ITEMS: Final = 6  # maxlist, maxtuple and maxdict alike
_FILL: Final = "..."


class _Foreign(Exception):
    """A value `_short` leaves to reprlib (a set, a dict with a key that is not a str, ...)."""


def show(value: Any) -> str:
    """A short repr of `value`, safe on deeply nested values: `_SHOW.repr(value)` exactly."""
    try:
        return _short(value, _LEVEL)
    except _Foreign:
        pass
    try:
        return _SHOW.repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails must not fail grading
        return f"<{type(value).__name__}>"


def _short(x: Any, level: int) -> str:
    """`_SHOW.repr1(x, level)` for str, int, float, bool, None, list, tuple and a dict
    with str keys, at any depth; `_Foreign` for anything else."""
    kind = type(x)
    if kind is str:
        return _short_str(x)
    if kind is int:
        return _cut(repr(x), _LONG)
    if kind is float or kind is bool or x is None:
        return _cut(repr(x), _OTHER)
    if kind is list:
        return _short_items(x, level, "[", "]")
    if kind is tuple:
        return _short_items(list(x), level, "(", ")", ",")
    if kind is dict:
        return _short_dict(x, level)
    raise _Foreign


def _short_str(x: str) -> str:
    text = repr(x[:_STRING])
    if len(text) <= _STRING:
        return text
    i = (_STRING - 3) // 2  # as `_elide` keeps them: the repr of the ends, elided
    return _elide(repr(x[:i] + x[len(x) - (_STRING - 3 - i) :]), _STRING)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else _elide(text, limit)


def _elide(text: str, limit: int) -> str:
    """`text`'s ends around the fill, `limit` characters in all (as reprlib cuts)."""
    i = (limit - 3) // 2
    return text[:i] + _FILL + text[len(text) - (limit - 3 - i) :]


def _short_items(items: list[Any], level: int, left: str, right: str, trail: str = "") -> str:
    """A list's or tuple's (`trail`: what follows a lone item, a 1-tuple's comma)."""
    if not items:
        return left + right
    if level <= 0:
        return left + _FILL + right
    pieces = [_short(items[k], level - 1) for k in range(min(len(items), _ITEMS))]
    if len(items) > _ITEMS:
        pieces.append(_FILL)
    return left + ", ".join(pieces) + (trail if len(items) == 1 else "") + right


def _short_dict(x: dict[Any, Any], level: int) -> str:
    if not x:
        return "{}"
    if level <= 0:
        return "{" + _FILL + "}"
    for key in x:
        if type(key) is not str:
            raise _Foreign  # reprlib sorts keys of one kind, and others as they come
    keys = sorted(x)
    pieces = [
        _short_str(keys[k]) + ": " + _short(x[keys[k]], level - 1)
        for k in range(min(len(keys), _ITEMS))
    ]
    if len(keys) > _ITEMS:
        pieces.append(_FILL)
    return "{" + ", ".join(pieces) + "}"
