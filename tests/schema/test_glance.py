"""A first look proves only what the compiled accept would: whenever `glance` says valid,
`compile_quick` compiles the schema (so it is metaschema-valid) and its accept takes the
value; and inside the keywords it reads, it says so whenever the accept does."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.schema.test_quick import (
    CONFORMS,
    TOOL,
    TRICKY,
    leaf_keywords,
    schemas,
    validator,
    values,
    with_children,
)
from toolproxy.schema.glance import fits, glance
from toolproxy.schema.quick import compile_quick

# keyword values the metaschema or the quick path refuses, mixed into generated schemas
broken_leaf = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["strng", ["string", "string"], [], 5, ["integer", 3]]),
        "enum": st.sampled_from(["x", None]),
        "minLength": st.sampled_from([-1, 1.5, True]),
        "maximum": st.sampled_from([float("nan"), True, "3", float("inf")]),
        "description": st.just(5),
        "required": st.sampled_from(["a", [1], ["a", "a"]]),
        "properties": st.just([]),
        "items": st.sampled_from([3, [{"type": "string"}]]),
        "additionalProperties": st.just(None),
        "readOnly": st.just("yes"),
        "pattern": st.sampled_from(["(unclosed", 5, "[z-a]"]),
        "format": st.sampled_from([5, None]),
    },
)
mixed = st.recursive(st.booleans() | leaf_keywords | broken_leaf, with_children, max_leaves=6)
READ = frozenset(  # the keywords `glance` reads (annotations and unknown ones aside)
    {"type", "properties", "required", "additionalProperties", "items", "enum", "const"}
    | {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
    | {"minLength", "maxLength", "minItems", "maxItems", "pattern", "format", "anyOf", "allOf"}
)
NOT_READ = frozenset({"$ref", "$defs", "$schema"})


def only_read(schema: Any) -> bool:
    """Does `schema` use only keywords `glance` reads, at every level?"""
    if isinstance(schema, bool):
        return True
    if any(k in NOT_READ for k in schema):
        return False
    subs = list(schema.get("properties", {}).values())
    subs += [schema[k] for k in ("items", "additionalProperties") if k in schema]
    subs += [s for k in ("anyOf", "allOf") for s in schema.get(k, [])]
    return all(only_read(s) for s in subs)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed, st.lists(values, min_size=1, max_size=6))
def test_a_glance_proves_only_what_the_compiled_accept_does(schema: Any, found: list[Any]):
    quick = compile_quick(schema, CONFORMS)
    if fits(schema):
        assert quick is not None, schema
    for value in found + TRICKY:
        if glance(schema, value):
            assert quick is not None and quick(value), (schema, value)
            jsonschema.Draft202012Validator.check_schema(schema)
            assert validator(schema).is_valid(value), (schema, value)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas, st.lists(values, min_size=1, max_size=6))
def test_inside_what_it_reads_a_glance_misses_nothing(schema: Any, found: list[Any]):
    """(Else the grader would compile schemas a glance could have passed: slower, and the
    soundness test above could pass by never saying valid.)"""
    if not only_read(schema):
        return
    quick = compile_quick(schema, CONFORMS)
    assert quick is not None and fits(schema)
    for value in found + TRICKY:
        assert glance(schema, value) is quick(value), (schema, value)


BFCL_LIKE = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "the city"},
        "days": {"type": "integer", "description": "how many", "minimum": 1},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["city"],
}


@pytest.mark.parametrize(
    ("value", "proven"),
    [
        ({"city": "Paris"}, True),
        ({"city": "Paris", "days": 3.0, "unit": "celsius", "tags": ["a", "b"]}, True),
        ({"city": "Paris", "verbose": True}, True),  # no additionalProperties: allowed
        ({"city": "Paris", "days": True}, False),  # a bool is no integer
        ({"city": "Paris", "days": 0}, False),
        ({"city": "Paris", "unit": "kelvin"}, False),
        ({"city": "Paris", "tags": ["a", 1]}, False),
        ({"days": 3}, False),
        ({}, False),
        ("Paris", False),
    ],
)
def test_a_typical_tool_schema(value: Any, proven: bool):
    assert glance(BFCL_LIKE, value) is proven
    assert validator(BFCL_LIKE).is_valid(value) is proven


@pytest.mark.parametrize(
    "schema",
    [
        TOOL,  # $defs, $ref: left to the compiler
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "strng"}}},
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"pattern": "(x"}}},
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"format": 5}}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]},
        {"type": "object", "properties": {"a": {"type": "string"}}, "$schema": "x"},
        {"type": "object", "properties": {"a": {"type": "string"}}, "items": 3},
        {"type": "object", "properties": {"a": {"type": "string"}}, "minProperties": 1},
    ],
)
def test_a_schema_is_read_whole_not_only_where_the_value_reaches(schema: Any):
    assert not glance(schema, {"a": "x"}) and not fits(schema)


def test_subclasses_and_odd_values_are_not_proven():
    class Args(dict):  # type: ignore[type-arg]
        pass

    class Items(list):  # type: ignore[type-arg]
        pass

    assert not glance(BFCL_LIKE, Args(city="Paris"))
    assert not glance(BFCL_LIKE, {"city": "Paris", "tags": Items(["a"])})
    assert not glance({"enum": [float("nan")]}, float("nan"))  # NaN equals nothing
    assert glance({"enum": [1, "a"]}, 1.0) and not glance({"enum": [1]}, True)
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(70):  # deeper than the compiler goes
        deep = {"type": "object", "properties": {"a": deep}}
    assert not glance(deep, {})


DATED = {
    "type": "object",
    "properties": {
        "since": {"type": "string", "format": "date-time"},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "mail": {"type": "string", "format": "email"},
        "any": {"format": "no-such-format"},
    },
    "required": ["since"],
}


@pytest.mark.parametrize(
    ("value", "proven"),
    [
        ({"since": "2025-03-01T10:00:00Z"}, True),
        ({"since": "2025-03-01T10:00:00Z", "code": "PAR", "mail": "a@b.org", "any": 1}, True),
        ({"since": "2025-02-30T10:00:00Z"}, False),  # no such day
        ({"since": "yesterday"}, False),
        ({"since": "2025-03-01T10:00:00Z", "code": "Paris"}, False),
        ({"since": "2025-03-01T10:00:00Z", "code": "xPAR"}, False),  # searched, anchored
        ({"since": "2025-03-01T10:00:00Z", "mail": "nobody"}, False),
        ({"since": 5}, False),  # the type fails; a format passes what is no string
    ],
)
def test_format_and_pattern_are_read_as_the_compiler_checks_them(value: Any, proven: bool):
    """A schema with `format` or `pattern` (dates in nearly every real tool) was compiled
    at first sight; now it is read as it stands, as `compile_quick` would check it."""
    assert fits(DATED)
    assert glance(DATED, value) is proven
    assert compile_quick(DATED, CONFORMS)(value) is proven  # type: ignore[misc]
    assert validator(DATED).is_valid(value) is proven


OPTIONAL = {  # pydantic's and FastMCP's optional parameter
    "type": "object",
    "properties": {
        "q": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Q"},
        "n": {"allOf": [{"type": "integer"}, {"minimum": 1}]},
    },
    "required": ["n"],
}


@pytest.mark.parametrize(
    ("schema", "value", "proven"),
    [
        (OPTIONAL, {"n": 1}, True),
        (OPTIONAL, {"n": 1, "q": None}, True),
        (OPTIONAL, {"n": 1, "q": "x"}, True),
        (OPTIONAL, {"n": 1, "q": 2}, False),  # no alternative takes it
        (OPTIONAL, {"n": 0}, False),  # one of allOf's does not
        ({"anyOf": [{"type": "string"}, {"type": "strng"}]}, "x", False),  # one is refused
        ({"anyOf": [{"type": "string"}, {"pattern": "(x"}]}, "x", False),
        ({"anyOf": []}, "x", False),  # the metaschema wants one at least
        ({"allOf": {"type": "string"}}, "x", False),
        ({"anyOf": [{"$ref": "#/$defs/a"}]}, "x", False),  # $ref: left to the compiler
    ],
)
def test_any_of_and_all_of_are_read(schema: Any, value: Any, proven: bool):
    assert glance(schema, value) is proven
    if proven:
        assert validator(schema).is_valid(value)
