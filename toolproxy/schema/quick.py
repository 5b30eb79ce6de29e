"""A quick accept for tool schemas: prove a value valid without running jsonschema.

Tool schemas are mostly one shape: an object with typed properties, `required`, maybe
`enum`, bounds, `items` and `additionalProperties`. `compile_quick` turns a Draft 2020-12
schema made only of the keywords below into a predicate that is *sound*: when it returns
True, jsonschema (Draft202012Validator with the given format checker) finds no error. When
it returns False the value may still be valid; the caller then runs jsonschema, which also
gives the errors. A schema with anything else (`$id`, other `$ref`s, `oneOf`, `patternProperties`,
`multipleOf`, another draft, a keyword value of the wrong shape, ...) gets None: no quick
path, jsonschema does all the work as before.

Handled, with jsonschema's own semantics:
    type (one name or a list)     "integer" accepts 1.0, never True; "number" never a bool
    properties, required, additionalProperties (a schema or a boolean), items (a schema)
    enum, const                   scalars only (bool is not 1, 1 is 1.0); lists and objects
                                  fall back to jsonschema
    minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, minItems,
    maxItems                      lengths in code points, as Python counts them
    pattern                       re.search, as jsonschema does
    format                        the format checker's own `conforms`
    allOf, anyOf                  all / any alternative accepted quickly
    $ref, $defs                   "#/$defs/Name" into the root's $defs (not recursive)
    annotations                   title, description, default, examples, $comment,
                                  deprecated, readOnly, writeOnly, and unknown keywords
                                  (Draft 2020-12 ignores them)

A schema that compiles is also valid against the Draft 2020-12 metaschema: every keyword
value is checked for the shape the metaschema demands (a `pattern` must compile), so the
caller may skip `check_schema`, the slow part of using a schema the first time. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from toolproxy.schema.accepts import (
    BOUNDS,
    TYPE_NAMES,
    TYPE_TESTS,
    Accept,
    all_of,
    always,
    any_of,
    choices,
    format_of,
    items_of,
    never,
    numeric,
    object_of,
    pattern,
    sized,
)

Parts = dict[int, dict[str, Accept]]  # id(a `properties` dict) -> name -> accept

DRAFT_2020_12: Final = (
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2020-12/schema#",
)
ANNOTATIONS: Final[dict[str, Callable[[Any], bool]]] = {
    "title": lambda v: isinstance(v, str),
    "description": lambda v: isinstance(v, str),
    "$comment": lambda v: isinstance(v, str),
    "default": lambda v: True,
    "examples": lambda v: isinstance(v, list),
    "deprecated": lambda v: isinstance(v, bool),
    "readOnly": lambda v: isinstance(v, bool),
    "writeOnly": lambda v: isinstance(v, bool),
}
HANDLED: Final = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
        "minItems", "maxItems", "pattern", "format", "allOf", "anyOf", "$schema",
    }
)  # fmt: skip
# Every keyword the Draft 2020-12 metaschema or validator knows; one not handled above
# puts the schema outside the quick path.
KNOWN: Final = HANDLED | frozenset(ANNOTATIONS) | frozenset(
    {
        "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$defs",
        "definitions", "dependencies", "$recursiveRef", "$recursiveAnchor", "prefixItems",
        "contains", "patternProperties", "propertyNames", "dependentSchemas",
        "dependentRequired", "unevaluatedItems", "unevaluatedProperties", "if", "then", "else",
        "not", "oneOf", "multipleOf", "uniqueItems", "maxContains", "minContains",
        "maxProperties", "minProperties", "contentEncoding", "contentMediaType",
        "contentSchema",
    }
)  # fmt: skip


class _Outside(Exception):
    """The schema uses something the quick path does not handle."""


def compile_quick(
    schema: Any,
    format_conforms: Callable[[Any, str], bool],
    parts: Parts | None = None,
) -> Accept | None:
    """The quick accept of `schema`, or None when the schema is outside the quick path.
    `parts`, when given, gets each `properties` object's accepts, property name -> accept
    (by the id of the `properties` dict; each as sound as the whole), so an error walk can
    pass over the values they prove valid (`quickerrors`)."""
    if isinstance(schema, dict) and "$schema" in schema and schema["$schema"] not in DRAFT_2020_12:
        return None
    try:
        return _Compiler(schema, format_conforms, parts).node(schema, 0)
    except (_Outside, RecursionError, TypeError, ValueError, re.error):
        return None


def is_bound(v: Any) -> bool:
    """Is `v` a numeric bound the quick path takes (a finite int or float, not a bool)?"""
    return type(v) in (int, float) and v == v and v not in (float("inf"), float("-inf"))


def is_count(v: Any) -> bool:
    """Is `v` a length bound the quick path takes (an int, not a bool, at least 0)?"""
    return type(v) is int and v >= 0


MAX_DEPTH: Final = 64  # deeper schemas are left to jsonschema
_REF: Final = re.compile(r"#/\$defs/([A-Za-z0-9_.-]+)")
_OBJECT_KEYS: Final = frozenset({"properties", "required", "additionalProperties"})
LENGTHS: Final[dict[str, tuple[type, int]]] = {
    "minLength": (str, 1),
    "maxLength": (str, -1),
    "minItems": (list, 1),
    "maxItems": (list, -1),
}
# every bound `_bounds` reads: the comparisons, then the lengths
_BOUNDS: Final = frozenset(BOUNDS) | frozenset(LENGTHS)


class _Compiler:
    """Compiles one root schema; `$ref`s to the root's `$defs` are compiled in place."""

    def __init__(self, root: Any, conforms: Callable[[Any, str], bool], parts: Parts | None):
        self.root = root
        self.conforms = conforms
        self.parts = parts
        self.defs: dict[str, Accept] = {}
        self.compiling: list[str] = []  # the definitions being compiled (few: a list)

    def node(self, spec: Any, depth: int) -> Accept:
        if spec is True:
            return always
        if spec is False:
            return never
        if type(spec) is not dict or depth > MAX_DEPTH:
            raise _Outside
        schema: dict[str, Any] = spec  # typed: mypyc reads it with dict calls, not methods
        kind = schema.get("type")
        if type(kind) is str and len(schema) <= 3 and plain_leaf(schema):
            test = TYPE_TESTS.get(kind)  # most leaves are one type, maybe described: what
            if test is not None:  # the loop below gives them, found sooner
                return test
        checks: list[Accept] = []
        choices = bounded = False
        # the keys in turn: `_OBJECT_KEYS.isdisjoint(schema)` is a method call iterating it
        shaped = "properties" in schema or "required" in schema or "additionalProperties" in schema
        # "type": "object" with properties: one strict object test for both keywords
        strict = shaped and kind == "object"
        for key, value in schema.items():
            if key == "type":
                if not strict:
                    checks.append(_type(value))
            elif key in ANNOTATIONS:
                if not ANNOTATIONS[key](value):
                    raise _Outside
            elif key in _OBJECT_KEYS:
                pass  # `shaped`: all at once below
            elif key == "enum" or key == "const":
                choices = True
            elif key in _BOUNDS:
                bounded = True  # all at once below
            elif key == "items":
                checks.append(items_of(self.node(value, depth + 1)))
            elif key == "pattern":
                checks.append(_pattern(value))
            elif key == "format":
                checks.append(_format(value, self.conforms))
            elif key == "allOf" or key == "anyOf":
                if type(value) is not list or not value:
                    raise _Outside
                subs = [self.node(sub, depth + 1) for sub in value]
                checks.append(all_of(subs) if key == "allOf" else any_of(subs))
            elif key == "$ref":
                checks.append(self.ref(value, depth))
            elif key == "$defs" or key == "$schema":
                if depth or (key == "$defs" and not self.all_defs(value)):
                    raise _Outside
            elif key in KNOWN:
                raise _Outside
        if choices:
            checks.append(_choices(schema))
        if shaped:
            checks.append(self.object(schema, depth, strict))
        if bounded:
            _bounds(schema, checks)
        return all_of(checks)

    def all_defs(self, defs: Any) -> bool:
        if type(defs) is not dict:
            return False
        for name in defs:
            self.definition(name)
        return True

    def ref(self, ref: Any, depth: int) -> Accept:
        found = _REF.fullmatch(ref) if type(ref) is str else None
        defs = self.root.get("$defs") if type(self.root) is dict else None
        if found is None or type(defs) is not dict or found[1] not in defs:
            raise _Outside
        return self.definition(found[1])

    def definition(self, name: str) -> Accept:
        if name in self.defs:
            return self.defs[name]
        if name in self.compiling or _REF.fullmatch(f"#/$defs/{name}") is None:
            raise _Outside  # a definition that refers to itself, or a name to escape
        self.compiling.append(name)
        self.defs[name] = self.node(self.root["$defs"][name], 1)
        self.compiling.remove(name)
        return self.defs[name]

    def object(self, schema: dict[str, Any], depth: int, strict: bool) -> Accept:
        props = schema.get("properties", {})
        required = schema.get("required", [])
        if type(props) is not dict or type(required) is not list:
            raise _Outside
        for r in required:
            if type(r) is not str:
                raise _Outside
        if repeats(required):
            raise _Outside
        checks = {name: self.node(sub, depth + 1) for name, sub in props.items()}
        if self.parts is not None and "properties" in schema:  # one entry an object
            self.parts[id(props)] = checks
        extra: Accept = always
        if "additionalProperties" in schema:
            extra = self.node(schema["additionalProperties"], depth + 1)
        return object_of(checks, tuple(required), extra, strict)


def repeats(names: list[str]) -> bool:
    """Does a name come twice? (Pairs compared for the short lists tools have: a set
    built per schema cost more than the rest of its object.)"""
    if len(names) > 8:
        return len(set(names)) != len(names)
    for i in range(1, len(names)):
        for j in range(i):
            if names[i] == names[j]:
                return True
    return False


def plain_leaf(schema: dict[str, Any]) -> bool:
    """Only `type` and text annotations (`description`, `title`)? Asked of a schema of at
    most 3 keys, `type` one of them; looked up, not iterated (each item a tuple)."""
    n = len(schema)
    if n == 1:
        return True
    description, title = schema.get("description"), schema.get("title")
    texts = (type(description) is str) + (type(title) is str)
    return texts == n - 1


def _type(spec: Any) -> Accept:
    if type(spec) is str:
        if spec not in TYPE_NAMES:
            raise _Outside
        return TYPE_TESTS[spec]
    if type(spec) is not list or not spec or len(set(spec)) != len(spec):
        raise _Outside
    if any(type(t) is not str or t not in TYPE_NAMES for t in spec):
        raise _Outside
    return any_of([TYPE_TESTS[t] for t in spec])


def _choices(schema: dict[str, Any]) -> Accept:
    options = []
    if "enum" in schema:
        if type(schema["enum"]) is not list:
            raise _Outside
        options.append(schema["enum"])
    if "const" in schema:
        options.append([schema["const"]])
    return choices(options)


def _bounds(schema: dict[str, Any], checks: list[Accept]) -> None:
    """Each bound of `schema` onto `checks` (comparisons first, then lengths)."""
    for key in BOUNDS:
        if key in schema:
            bound = schema[key]
            if not is_bound(bound):
                raise _Outside
            checks.append(numeric(key, bound))
    for key, (kind, sign) in LENGTHS.items():
        if key in schema:
            limit = schema[key]
            if not is_count(limit):
                raise _Outside
            checks.append(sized(kind, sign, limit))


def _pattern(spec: Any) -> Accept:
    if type(spec) is not str:
        raise _Outside
    return pattern(re.compile(spec))


def _format(name: Any, conforms: Callable[[Any, str], bool]) -> Accept:
    if type(name) is not str:
        raise _Outside
    return format_of(name, conforms)
