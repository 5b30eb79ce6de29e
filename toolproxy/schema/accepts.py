"""The predicates a quick schema compiles into (`schema.quick`): the JSON types as
jsonschema tests them, and the combinators that build an accept from its parts (all of, any
of, an object's properties, an array's items, numeric bounds, lengths). Each takes a value
and says True only when jsonschema would find no error for the keyword it stands for. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

Accept = Callable[[Any], bool]


def always(value: Any) -> bool:
    return True


def never(value: Any) -> bool:
    return False


def is_int(v: Any) -> bool:
    t = type(v)
    return t is int or (t is float and v.is_integer())


def is_number(v: Any) -> bool:
    t = type(v)
    return t is int or t is float


TYPE_TESTS: Final[dict[str, Callable[[Any], bool]]] = {
    "string": lambda v: type(v) is str,
    "integer": is_int,
    "number": is_number,
    "boolean": lambda v: type(v) is bool,
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "null": lambda v: v is None,
}
TYPE_NAMES: Final = frozenset(TYPE_TESTS)


def all_of(checks: list[Accept]) -> Accept:
    """One predicate that holds when every check does (no generator on the common sizes)."""
    checks = [c for c in checks if c is not always]
    if not checks:
        return always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks
        return lambda v: a(v) and b(v)
    if len(checks) == 3:
        a, b, c = checks
        return lambda v: a(v) and b(v) and c(v)

    def accept(v: Any) -> bool:
        for check in checks:
            if not check(v):
                return False
        return True

    return accept


def numeric(holds: Callable[[Any, Any], bool], bound: Any) -> Accept:
    def accept(v: Any) -> bool:
        t = type(v)
        if t is int or t is float:
            return v == v and holds(v, bound)
        return not (isinstance(v, int) or isinstance(v, float))  # not a number: no bound

    return accept


def sized(kind: type, sign: int, limit: int) -> Accept:
    if sign > 0:
        return lambda v: type(v) is not kind or len(v) >= limit  # type: ignore[arg-type]
    return lambda v: type(v) is not kind or len(v) <= limit  # type: ignore[arg-type]


# the type tests that are one exact type: a property under one of them is checked in
# `object_of`'s loop by comparing types, without calling the test
_STRING: Final = TYPE_TESTS["string"]
_BOOLEAN: Final = TYPE_TESTS["boolean"]
_OBJECT: Final = TYPE_TESTS["object"]
_ARRAY: Final = TYPE_TESTS["array"]


def exact_type(check: Accept) -> Any:
    """The exact type `check` asks for, or `check` itself when it is not one of those tests
    (by identity: a lookup keyed by `id()` boxed a new int for every property)."""
    if check is _STRING:
        return str
    if check is _BOOLEAN:
        return bool
    if check is _OBJECT:
        return dict
    if check is _ARRAY:
        return list
    return check


def object_of(
    checks: dict[str, Accept], needed: tuple[str, ...], extra: Accept, strict: bool = False
) -> Accept:
    """`properties`, `required` and `additionalProperties` at once; `strict`: with
    `"type": "object"` too (anything but a plain dict fails), one test where two were."""
    passes = always  # a closure's own: no module lookup per property
    # name -> its accept, or the exact type (str, bool, dict, list) its test asks for
    plan: dict[str, Any] = {name: exact_type(c) for name, c in checks.items()}

    def accept(v: Any) -> bool:
        if type(v) is not dict:  # not strict: other types pass, a dict subclass goes
            return False if strict else not isinstance(v, dict)  # to jsonschema
        for name in needed:
            if name not in v:
                return False
        for name, value in v.items():
            check = plan.get(name, extra)
            if type(check) is type:
                if type(value) is not check:
                    return False
            elif check is not passes and not check(value):
                return False
        return True

    return accept


def items_of(check: Accept) -> Accept:
    if check is always:
        return always

    def accept(v: Any) -> bool:
        if type(v) is not list:
            return not isinstance(v, list)
        return all(check(item) for item in v)

    return accept


def any_of(subs: list[Accept]) -> Accept:
    if always in subs:
        return always
    return lambda v: any(sub(v) for sub in subs)
