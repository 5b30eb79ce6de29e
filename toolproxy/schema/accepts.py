"""The predicates a quick schema compiles into (`schema.quick`): the JSON types as
jsonschema tests them, and the combinators that build an accept from its parts (all of, any
of, an object's properties, an array's items, numeric bounds, lengths). Each is an `Accept`
whose `ok(value)` says True only when jsonschema would find no error for the keyword it
stands for. Pure.

Accepts are small classes, not closures: compiled by mypyc, an accept asking its parts
(`part.ok(value)`) is a call through the class's method table, where calling a closure went
through Python's generic call protocol and parsed its argument (about 500 instructions a
property on BFCL's schemas, more than the test itself).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final


class Accept:
    """A predicate over a JSON value: True only when jsonschema finds no error for what it
    stands for (False: maybe invalid, ask jsonschema). Callable as a function too."""

    def ok(self, v: Any) -> bool:
        raise NotImplementedError

    def __call__(self, v: Any) -> bool:
        return self.ok(v)


class _Always(Accept):
    def ok(self, v: Any) -> bool:
        return True


class _Never(Accept):
    def ok(self, v: Any) -> bool:
        return False


always: Final = _Always()
never: Final = _Never()


class _Exact(Accept):
    """One exact type (a subclass, or a bool for a number, is left to jsonschema)."""

    def __init__(self, kind: type) -> None:
        self.kind = kind

    def ok(self, v: Any) -> bool:
        return type(v) is self.kind


class _Integer(Accept):
    def ok(self, v: Any) -> bool:
        return is_int(v)


class _Number(Accept):
    def ok(self, v: Any) -> bool:
        return is_number(v)


class _Null(Accept):
    def ok(self, v: Any) -> bool:
        return v is None


def is_int(v: Any) -> bool:
    t = type(v)
    return t is int or (t is float and v.is_integer())


def is_number(v: Any) -> bool:
    t = type(v)
    return t is int or t is float


TYPE_TESTS: Final[dict[str, Accept]] = {
    "string": _Exact(str),
    "integer": _Integer(),
    "number": _Number(),
    "boolean": _Exact(bool),
    "object": _Exact(dict),
    "array": _Exact(list),
    "null": _Null(),
}
TYPE_NAMES: Final = frozenset(TYPE_TESTS)


def type_test(name: str, v: Any) -> int:
    """`TYPE_TESTS[name].ok(v)` as 1 or 0, and -1 for a name that is not a type's, by
    comparing `name` with each (a lookup and the accept's call cost ~200 instructions, a
    leaf's type test in `glance`). The same tests as `TYPE_TESTS`, on the same `is_int` and
    `is_number`, written twice on purpose: an accept built on this one would compare names
    at each `ok` of a compiled schema, where its own class knows its type; a test holds the
    two to the same answers."""
    if name == "string":
        return 1 if type(v) is str else 0
    if name == "integer":
        return 1 if is_int(v) else 0
    if name == "number":
        return 1 if is_number(v) else 0
    if name == "boolean":
        return 1 if type(v) is bool else 0
    if name == "object":
        return 1 if type(v) is dict else 0
    if name == "array":
        return 1 if type(v) is list else 0
    if name == "null":
        return 1 if v is None else 0
    return -1


class _AllOf(Accept):
    def __init__(self, checks: list[Accept]) -> None:
        self.checks = checks

    def ok(self, v: Any) -> bool:
        for check in self.checks:
            if not check.ok(v):
                return False
        return True


class _Both(Accept):
    """Two checks (the common size: a list walked for two cost more than the tests)."""

    def __init__(self, a: Accept, b: Accept) -> None:
        self.a, self.b = a, b

    def ok(self, v: Any) -> bool:
        return self.a.ok(v) and self.b.ok(v)


def all_of(checks: list[Accept]) -> Accept:
    """One accept that holds when every check does."""
    checks = [c for c in checks if c is not always]
    if not checks:
        return always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        return _Both(checks[0], checks[1])
    return _AllOf(checks)


class _AnyOf(Accept):
    def __init__(self, subs: list[Accept]) -> None:
        self.subs = subs

    def ok(self, v: Any) -> bool:
        for sub in self.subs:
            if sub.ok(v):
                return True
        return False


def any_of(subs: list[Accept]) -> Accept:
    """One accept that holds when some alternative does (a list of types, `anyOf`)."""
    if always in subs:
        return always
    return _AnyOf(list(subs))


# the numeric bounds by keyword: each holds for numbers on its side of the bound
BOUNDS: Final = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


class _Bound(Accept):
    def __init__(self, keyword: str, bound: Any) -> None:
        if keyword not in BOUNDS:
            raise ValueError(f"not a numeric bound: {keyword!r}")
        self.op = BOUNDS.index(keyword)
        self.bound = bound

    def ok(self, v: Any) -> bool:
        t = type(v)
        if not (t is int or t is float):
            return not (isinstance(v, int) or isinstance(v, float))  # not a number: no bound
        if v != v:  # NaN: jsonschema decides
            return False
        op, bound = self.op, self.bound
        if op == 0:
            return bool(v >= bound)
        if op == 1:
            return bool(v <= bound)
        if op == 2:
            return bool(v > bound)
        return bool(v < bound)


def numeric(keyword: str, bound: Any) -> Accept:
    """`minimum`, `maximum`, `exclusiveMinimum` or `exclusiveMaximum` at `bound`."""
    return _Bound(keyword, bound)


class _Sized(Accept):
    def __init__(self, kind: type, sign: int, limit: int) -> None:
        self.kind, self.sign, self.limit = kind, sign, limit

    def ok(self, v: Any) -> bool:
        if type(v) is not self.kind:
            return True
        n = len(v)  # type: ignore[arg-type]  # a str or a list: `kind`
        return n >= self.limit if self.sign > 0 else n <= self.limit


def sized(kind: type, sign: int, limit: int) -> Accept:
    """A length bound on values of `kind` (str: code points; list: items): at least
    `limit` when `sign` > 0, else at most."""
    return _Sized(kind, sign, limit)


class _ObjectOf(Accept):
    def __init__(
        self, required: dict[str, Accept], optional: dict[str, Accept], extra: Accept, strict: bool
    ) -> None:
        self.required, self.optional, self.extra, self.strict = required, optional, extra, strict
        self.needed = len(required)

    def ok(self, v: Any) -> bool:
        if type(v) is not dict:  # not strict: other types pass, a dict subclass goes
            return False if self.strict else not isinstance(v, dict)  # to jsonschema
        value: dict[Any, Any] = v
        required, optional = self.required, self.optional
        found = 0  # required names present (each counted once: a dict's keys are unique)
        for name, item in value.items():
            accept = required.get(name)
            if accept is not None:
                found += 1
            else:
                accept = optional.get(name)
                if accept is None:
                    accept = self.extra
            if not accept.ok(item):
                return False
        return found == self.needed


def object_of(
    checks: dict[str, Accept], needed: tuple[str, ...], extra: Accept, strict: bool = False
) -> Accept:
    """`properties`, `required` and `additionalProperties` at once; `strict`: with
    `"type": "object"` too (anything but a plain dict fails), one test where two were.
    `needed` holds no name twice (`compile_quick` leaves such a schema to jsonschema).
    The required names' accepts are kept apart from the others': a call's required
    arguments are looked up once each, and counted."""
    required: dict[str, Accept] = {}
    optional: dict[str, Accept] = {}
    for name, check in checks.items():
        if name in needed:
            required[name] = check
        else:
            optional[name] = check
    if len(required) < len(needed):  # a required name outside `properties`: an extra's
        for name in needed:
            if name not in required:
                required[name] = extra
    return _ObjectOf(required, optional, extra, strict)


class _ItemsOf(Accept):
    def __init__(self, check: Accept) -> None:
        self.check = check

    def ok(self, v: Any) -> bool:
        if type(v) is not list:
            return not isinstance(v, list)
        items: list[Any] = v
        check = self.check
        for item in items:
            if not check.ok(item):
                return False
        return True


def items_of(check: Accept) -> Accept:
    """`items`: every item of a list."""
    return always if check is always else _ItemsOf(check)


class _Pattern(Accept):
    def __init__(self, compiled: re.Pattern[str]) -> None:
        self.compiled = compiled

    def ok(self, v: Any) -> bool:
        return type(v) is not str or self.compiled.search(v) is not None


def pattern(compiled: re.Pattern[str]) -> Accept:
    """`pattern`: a string the expression finds (`re.search`, as jsonschema)."""
    return _Pattern(compiled)


class _Format(Accept):
    def __init__(self, name: str, conforms: Callable[[Any, str], bool]) -> None:
        self.name, self.conforms = name, conforms

    def ok(self, v: Any) -> bool:
        return self.conforms(v, self.name)


def format_of(name: str, conforms: Callable[[Any, str], bool]) -> Accept:
    """`format`: as the format checker's `conforms` says."""
    return _Format(name, conforms)


_SCALARS: Final = {str: "s", bool: "b", int: "n", float: "n", type(None): "0"}


def scalar_key(v: Any) -> tuple[str, Any] | None:
    """A value's identity under jsonschema's `equal` for scalars; None for anything else."""
    kind = _SCALARS.get(type(v))
    if kind is None or (kind == "n" and v != v):  # NaN equals nothing
        return None
    return kind, v


class _Choices(Accept):
    def __init__(self, allowed: list[set[tuple[str, Any]]]) -> None:
        self.allowed = allowed

    def ok(self, v: Any) -> bool:
        key = scalar_key(v)
        if key is None:
            return False
        for keys in self.allowed:
            if key not in keys:
                return False
        return True


def choices(options: list[list[Any]]) -> Accept:
    """`enum` and `const` (each a list of the values it allows): scalars compared as
    jsonschema does (bool is not 1, 1 is 1.0); anything else is left to jsonschema."""
    allowed: list[set[tuple[str, Any]]] = []
    for values in options:  # a loop calls `scalar_key` directly; `map` called it as Python
        keys: set[tuple[str, Any]] = set()
        for value in values:
            key = scalar_key(value)
            if key is not None:
                keys.add(key)
        allowed.append(keys)
    return _Choices(allowed)
