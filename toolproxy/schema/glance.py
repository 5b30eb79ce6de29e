"""A first look at a schema: prove a value valid against a schema never compiled, by reading
the schema as it stands, with nothing built and no cache key written.

`glance(schema, value)` is True only when `schema.quick.compile_quick` would compile
`schema` (so it is valid against the Draft 2020-12 metaschema) and its accept would take
`value`; False means "not proven": compile the schema and ask it. It reads the keywords tool
schemas are made of, with `schema.quick`'s semantics (its type tests, bounds and lengths
are used as they are): type, properties, required, additionalProperties, items, enum and
const (scalars), the numeric bounds and lengths, `pattern` (`re.search`), `format` (the
format checker's `conforms`), `anyOf` and `allOf` (the shape pydantic and FastMCP give an
optional parameter: `anyOf: [{...}, {"type": "null"}]`) and the annotations; unknown
keywords are ignored, as Draft 2020-12 ignores them. A schema with any other keyword the
metaschema knows (`$schema`, `$ref`, `$defs`, ...) is not proven here. The whole schema
is read, not only the parts the value reaches (each alternative of an `anyOf` too), so a
schema the compiler would refuse is never passed. A property test holds it to
`compile_quick` on generated schemas.

Why: compiling a schema seen once costs more than checking a call with it. On 1,000
BFCL-shaped cases (1,690 calls, 934 schemas compiled) a compile cost ~31,000 instructions,
its cache key (orjson's sorted text) ~7,300 more, where reading the schema with the value
costs ~7,500 (`compiling.compile_unless_proven` decides when to look this way). Pure.

With the compiled core, `nativeglance.c` reads first (the same answers, or None to hand
the question back here): `glance` 6,718 -> 2,960 instructions a fresh BFCL-shaped call.
`glance_py` and `fits_py` are the Python reading alone, which tests hold the C one to.
"""

from __future__ import annotations

import re
from typing import Any, Final

import jsonschema

from toolproxy.schema.accepts import BOUNDS, TYPE_NAMES, numeric, scalar_key, sized, type_test
from toolproxy.schema.formats import conforms_of
from toolproxy.schema.quick import (
    ANNOTATIONS,
    KNOWN,
    LENGTHS,
    MAX_DEPTH,
    is_bound,
    is_count,
    repeats,
)
from toolproxy.util.absent import ABSENT
from toolproxy.util.compiled import native

_NO_PROPERTIES: Final[dict[str, Any]] = {}  # read only
_NO_NAMES: Final[list[Any]] = []  # read only
# `format` as `compile_quick` checks it for a schema that names no draft (glance reads no
# `$schema`): Draft 2020-12's format checker, with `schema.formats`' date-time and time
CONFORMS: Final = conforms_of(jsonschema.Draft202012Validator)


# `nativeglance.c`'s reading (the same answers, or None: ask the Python reading below)
NATIVE_GLANCE: Final = native("toolproxy.schema.nativeglance", "glance")
NATIVE_FITS: Final = native("toolproxy.schema.nativeglance", "fits")
# the format checker it reads `format` with: this module's own (a value under `format`
# hands back until it has one)
_SET_CONFORMS: Final = native("toolproxy.schema.nativeglance", "set_conforms")
if _SET_CONFORMS is not None:
    _SET_CONFORMS(CONFORMS)
# a compiled schema it reads from a program made of it (`nativeglance.c`)
_NATIVE_REMEMBER: Final = native("toolproxy.schema.nativeglance", "remember")
_NATIVE_CLEAR: Final = native("toolproxy.schema.nativeglance", "clear")


def remember(schema: Any) -> None:
    """`schema` was compiled: the C reading reads it from now on from a program made of it
    (when it is in that program's subset), not from the schema itself."""
    if _NATIVE_REMEMBER is not None:
        _NATIVE_REMEMBER(schema)


def forget() -> None:
    """Forget every schema `remember` was given."""
    if _NATIVE_CLEAR is not None:
        _NATIVE_CLEAR()


def glance(schema: Any, value: Any) -> bool:
    """Is `value` valid against `schema`, and `schema` one `compile_quick` compiles? False
    when not proven (never raises). Read in C when built (`nativeglance.c`), in Python
    when it hands the question back."""
    if NATIVE_GLANCE is not None:
        found = NATIVE_GLANCE(schema, value)
        if found is not None:
            return found
    return glance_py(schema, value)


def fits(schema: Any) -> bool:
    """Is `schema` one `compile_quick` compiles, read without a value? (For a value `glance`
    did not prove: such a schema's errors need no compile, `quickerrors` words them.)"""
    if NATIVE_FITS is not None:
        found = NATIVE_FITS(schema)
        if found is not None:
            return found
    return fits_py(schema)


def glance_py(schema: Any, value: Any) -> bool:
    """`glance` read in Python only (what the C reading is held to)."""
    try:
        return _node(schema, value, True, 0)
    except Exception:  # noqa: BLE001 - e.g. RecursionError, an unhashable enum value
        return False


def fits_py(schema: Any) -> bool:
    """`fits` read in Python only."""
    try:
        return _node(schema, None, False, 0)
    except Exception:  # noqa: BLE001 - e.g. RecursionError
        return False


def _node(spec: Any, value: Any, present: bool, depth: int) -> bool:
    """Is `spec` in the subset, and, when `present`, `value` valid against it? (A schema
    under a property the value does not give is read with `present` False.)"""
    if spec is True:
        return True
    if spec is False:
        return not present
    if type(spec) is not dict or depth > MAX_DEPTH:
        return False
    schema: dict[str, Any] = spec  # typed: mypyc reads it with dict calls, not methods
    # Each keyword met in turn, compared as literals (a leaf's type and description cost
    # two steps; looked up, as `compile_quick` finds its plain leaves, four lookups); the
    # object's keywords kept for `_object`, which needs them together.
    props: Any = _NO_PROPERTIES
    required: Any = _NO_NAMES
    extra: Any = True
    shaped = False
    for key, sub in schema.items():
        if key == "type":
            if not _typed(sub, value, present):
                return False
        elif key == "description":
            if type(sub) is not str:
                return False
        elif key == "properties":
            props, shaped = sub, True
        elif key == "required":
            required, shaped = sub, True
        elif key == "additionalProperties":
            extra, shaped = sub, True
        elif key == "enum":
            if type(sub) is not list or (present and not _one_of(sub, value)):
                return False
        elif key == "items":
            if not _items(sub, value, present, depth):
                return False
        elif key in ANNOTATIONS:
            if not ANNOTATIONS[key](sub):
                return False
        elif key == "const":
            if present and not _one_of([sub], value):
                return False
        elif key in BOUNDS:
            if not is_bound(sub) or (present and not numeric(key, sub).ok(value)):
                return False
        elif key in LENGTHS:
            if not is_count(sub):
                return False
            of, sign = LENGTHS[key]
            if present and not sized(of, sign, sub).ok(value):
                return False
        elif key == "pattern":  # re.compile raises for one the metaschema refuses
            if type(sub) is not str:
                return False
            found = re.compile(sub)  # (re's own cache: a pattern met again is a lookup)
            if present and type(value) is str and found.search(value) is None:
                return False
        elif key == "format":
            if type(sub) is not str or (present and not CONFORMS(value, sub)):
                return False
        elif key == "anyOf" or key == "allOf":
            if not _alternatives(sub, value, present, depth, key == "anyOf"):
                return False
        elif key in KNOWN:
            return False  # a keyword the compiler handles, or leaves to jsonschema
    return not shaped or _object(props, required, extra, value, present, depth)


def _typed(spec: Any, value: Any, present: bool) -> bool:
    """`type`: one name or a list of distinct names."""
    if type(spec) is str:
        found = type_test(spec, value)  # (-1: no such type)
        return found == 1 or (found == 0 and not present)
    if type(spec) is not list or not spec:
        return False
    names: list[Any] = spec
    for name in names:
        if type(name) is not str or name not in TYPE_NAMES:
            return False
    if repeats(names):
        return False
    if not present:
        return True
    for name in names:
        if type_test(name, value) == 1:
            return True
    return False


def _one_of(options: list[Any], value: Any) -> bool:
    """`enum` and `const`, as `accepts.choices`: scalars compared by their `scalar_key`
    (bool is not 1, 1 is 1.0, NaN equals nothing); anything else is not proven."""
    key = scalar_key(value)
    if key is None:
        return False
    for option in options:
        if scalar_key(option) == key:
            return True
    return False


def _items(spec: Any, value: Any, present: bool, depth: int) -> bool:
    if present and type(value) is list and value:
        found: list[Any] = value
        for item in found:  # each item reads the whole subschema
            if not _node(spec, item, True, depth + 1):
                return False
        return True
    if present and type(value) is not list and isinstance(value, list):
        return False  # a list subclass: left to jsonschema, as `accepts.items_of`
    return _node(spec, None, False, depth + 1)


def _alternatives(subs: Any, value: Any, present: bool, depth: int, one: bool) -> bool:
    """`anyOf` (`one`) and `allOf`: a non-empty list of schemas, each read whole (each
    one the compiler compiles); with a value, one of them (`anyOf`) or each (`allOf`)
    proving it valid."""
    if type(subs) is not list or not subs:
        return False
    options: list[Any] = subs
    found = not (one and present)
    for sub in options:
        if not present:
            if not _node(sub, None, False, depth + 1):
                return False
        elif _node(sub, value, True, depth + 1):
            found = True
        elif not one or not _node(sub, None, False, depth + 1):
            return False  # allOf: one not proven; anyOf: one the compiler would refuse
    return found


def _object(props: Any, required: Any, extra: Any, value: Any, present: bool, depth: int) -> bool:
    """`properties`, `required` and `additionalProperties` at once, as `accepts.object_of`:
    each property's subschema read (with its value when the object gives it), every
    required name given, each other name's value valid under `additionalProperties`."""
    if type(props) is not dict or type(required) is not list:
        return False
    names: list[Any] = required
    for name in names:
        if type(name) is not str:
            return False
    if repeats(names):
        return False
    given: dict[Any, Any] = _NO_PROPERTIES  # the object's names and values, when it is one
    if present:
        if type(value) is dict:
            given = value
        elif isinstance(value, dict):
            return False  # a dict subclass: left to jsonschema
    named: dict[str, Any] = props
    found = 0  # the object's names that are properties
    for name, sub in named.items():
        item = given.get(name, ABSENT)
        if item is ABSENT:
            if not _node(sub, None, False, depth + 1):
                return False
        else:
            found += 1
            if not _node(sub, item, True, depth + 1):
                return False
    if not _node(extra, None, False, depth + 1):
        return False
    if found < len(given):  # some name is no property: additionalProperties holds it
        for name, item in given.items():
            if name not in named and not _node(extra, item, True, depth + 1):
                return False
    if present and type(value) is dict:
        for name in names:
            if name not in given:
                return False
    return True
