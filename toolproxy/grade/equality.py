"""Equality of JSON values as the matchers read it (`exact`, `any_of`, `unordered`, pairing
calls by their arguments, replay's divergence): numbers by value (1 is 1.0, but True is not
1), a bool or None only itself, lists and tuples item by item, dicts by keys then values.
`deep_equal` compares two strs, ints or floats itself and anything else in C when the
compiled core is built (`nativeequal.c`, which hands back what it does not read), else by
`deep_equal_py`, the Python the C is held to. Pure.
"""

from __future__ import annotations

from typing import Any, Final

from toolproxy.util.compiled import native


def is_number(value: Any) -> bool:
    """A JSON number: int or float, not bool. By `isinstance`, so an int or float
    subclass counts (an `IntEnum` a caller put in an expectation), where
    `schema.accepts.is_number` tests the exact types a JSON parser makes: not one body
    written twice, and not to be merged into it."""
    # `int | float` in isinstance builds a union object per call in compiled code
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, float)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, list) or isinstance(value, tuple)


def _scalar_equal(a: Any, b: Any) -> bool:
    if is_number(a) and is_number(b):
        return bool(a == b)
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    return type(a) is type(b) and bool(a == b)


def _plain(t: type) -> bool:
    """str, int or float (pointer tests: a set lookup hashes the type first)."""
    return t is str or t is int or t is float


# `nativeequal.c`'s comparison (the same answers, or None: ask `deep_equal_py`)
NATIVE_EQUAL: Final = native("toolproxy.grade.nativeequal", "equal")


def deep_equal(a: Any, b: Any) -> bool:
    """Equal by value at any depth: numbers by value (1 is 1.0, not True), a bool or None
    only itself, lists and tuples item by item, dicts by keys then values. Two strs, ints
    or floats compared here; anything else in C when built (`nativeequal.c`), else (or
    when it hands back) by `deep_equal_py`."""
    t = type(a)
    if t is type(b) and _plain(t):  # most arguments: no stack to build
        return bool(a == b)
    if NATIVE_EQUAL is not None:
        found = NATIVE_EQUAL(a, b)
        if found is not None:
            return found
    return deep_equal_py(a, b)


def deep_equal_py(a: Any, b: Any) -> bool:
    """`deep_equal` in Python only (iterative, so deep values cannot overflow the stack;
    what the C reading is held to)."""
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        t = type(x)
        if t is type(y) and _plain(t):  # two strings, or two numbers of one type
            if x != y:
                return False
        elif isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            for k in x:
                pending.append((x[k], y[k]))
        elif _is_sequence(x) and _is_sequence(y):
            if len(x) != len(y):
                return False
            for i in range(len(x)):
                pending.append((x[i], y[i]))
        elif isinstance(x, dict) or isinstance(y, dict) or _is_sequence(x) or _is_sequence(y):
            return False
        elif not _scalar_equal(x, y):
            return False
    return True
