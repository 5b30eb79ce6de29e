"""The quick accept is sound: whenever it says valid, jsonschema finds no error, and a schema
it compiles passes the Draft 2020-12 metaschema (so `check_schema` may be skipped)."""

from __future__ import annotations

import gc
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolproxy.schema.formats import format_checker
from toolproxy.schema.quick import compile_quick

CHECKER = format_checker(jsonschema.Draft202012Validator)
CONFORMS = CHECKER.conforms


def validator(schema: Any) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema, format_checker=CHECKER)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from([0.0, 1.0, 1.5, -2.0, float("nan"), 1e300]),
    st.sampled_from(["", "a", "abc", "2024-05-01T10:00:00Z", "10:00:00Z", "x@y.org", "1.2.3.4"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c", "verbose"]), inner, max_size=3),
    ),
    max_leaves=8,
)
# Values where JSON's types and Python's disagree, tried against every schema.
TRICKY = [True, False, 0, 1, 1.0, 2.5, None, "", "1", [], [True], {}, {"a": True}, {"a": 1.0}]
TRICKY += [{"a": "a", "b": None}, {"verbose": False}, [1, "a"], {"a": {"a": True}}]
type_names = st.sampled_from(["string", "integer", "number", "boolean", "object", "array", "null"])
leaf_keywords = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(type_names, st.lists(type_names, min_size=1, max_size=3, unique=True)),
        "enum": st.lists(scalars | st.lists(scalars, max_size=2), max_size=4),
        "const": scalars,
        "minimum": st.integers(-3, 3),
        "maximum": st.sampled_from([0, 2.5, 4]),
        "exclusiveMinimum": st.integers(-3, 3),
        "minLength": st.integers(0, 3),
        "maxLength": st.integers(0, 3),
        "minItems": st.integers(0, 2),
        "maxItems": st.integers(0, 2),
        "pattern": st.sampled_from(["^a", "b", "^[0-9]+$"]),
        "format": st.sampled_from(["date-time", "time", "email", "ipv4", "float", "unknown"]),
        "description": st.text(max_size=5),
        "title": st.text(max_size=3),
        "nullable": st.booleans(),  # an unknown keyword: ignored
    },
)


def object_of(
    children: st.SearchStrategy[Any],
    names: st.SearchStrategy[str],
    required: st.SearchStrategy[Any],
) -> st.SearchStrategy[Any]:
    """Object schemas: properties of `names` (each schema a child), `required`, and
    maybe additionalProperties."""
    return st.builds(
        lambda props, req, extra: {
            "type": "object",
            "properties": props,
            "required": req,
            **({"additionalProperties": extra} if extra is not None else {}),
        },
        st.dictionaries(names, children, max_size=3),
        required,
        st.none() | st.booleans() | children,
    )


def with_children(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        object_of(
            children,
            st.sampled_from(["a", "b", "c"]),
            st.lists(st.sampled_from(["a", "b"]), unique=True, max_size=2),
        ),
        st.builds(lambda items: {"type": "array", "items": items}, children),
        st.builds(lambda subs: {"anyOf": subs}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda subs: {"allOf": subs}, st.lists(children, min_size=1, max_size=3)),
    )


schemas = st.recursive(st.booleans() | leaf_keywords, with_children, max_leaves=6)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas, st.lists(values, min_size=1, max_size=6))
def test_quick_accept_implies_jsonschema_valid(schema: Any, instances: list[Any]) -> None:
    quick = compile_quick(schema, CONFORMS)
    if quick is None:
        return
    jsonschema.Draft202012Validator.check_schema(schema)  # compiled => metaschema-valid
    full = validator(schema)
    for instance in instances + TRICKY:
        if quick(instance):
            assert full.is_valid(instance), (schema, instance)


@settings(max_examples=300, deadline=None)
@given(schemas)
def test_the_subset_compiles(schema: Any) -> None:
    """Everything the strategy builds is inside the quick path (the soundness test above
    would pass vacuously otherwise); only regexes it cannot compile fall outside."""
    assert compile_quick(schema, CONFORMS) is not None


def test_a_described_leaf_is_its_type_and_a_bad_annotation_is_outside() -> None:
    leaf = compile_quick({"type": "integer", "description": "n", "title": "N"}, CONFORMS)
    assert leaf is not None and leaf(3) and not leaf("3") and not leaf(True)
    assert compile_quick({"type": "integer", "title": 5}, CONFORMS) is None
    assert compile_quick({"type": "integer", "description": ["x"]}, CONFORMS) is None


TOOL = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "the city"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "since": {"type": "string", "format": "date-time"},
        "filter": {"anyOf": [{"$ref": "#/$defs/Filter"}, {"type": "null"}], "default": None},
    },
    "required": ["city"],
    "additionalProperties": False,
    "$defs": {"Filter": {"type": "object", "properties": {"q": {"type": "string"}}}},
}


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ({"city": "Paris"}, True),
        ({"city": "Paris", "days": 3.0, "unit": "celsius", "tags": ["a"]}, True),
        ({"city": "Paris", "since": "2024-05-01T10:00:00Z", "filter": {"q": "x"}}, True),
        ({"city": "Paris", "filter": None}, True),
        ({"city": "Paris", "days": True}, False),  # a bool is not an integer
        ({"city": "Paris", "days": 15}, False),
        ({"city": "Paris", "unit": "kelvin"}, False),
        ({"city": "Paris", "since": "yesterday"}, False),
        ({"city": "Paris", "filter": {"q": 1}}, False),
        ({"city": "Paris", "verbose": True}, False),
        ({"days": 3}, False),
        ("Paris", False),
    ],
)
def test_a_typical_tool_schema(value: Any, accepted: bool) -> None:
    quick = compile_quick(TOOL, CONFORMS)
    assert quick is not None
    assert quick(value) is accepted
    assert validator(TOOL).is_valid(value) is accepted


@pytest.mark.parametrize(
    "schema",
    [
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},  # no such definition
        {"$defs": {"A": {"properties": {"next": {"$ref": "#/$defs/A"}}}}, "$ref": "#/$defs/A"},
        {"oneOf": [{"type": "string"}]},
        {"patternProperties": {"^x": {"type": "string"}}},
        {"type": "number", "multipleOf": 0.1},
        {"$id": "https://example.com/s", "type": "object"},
        {"type": "strng"},  # invalid against the metaschema
        {"required": "city"},
        {"pattern": "("},
        {"items": [{"type": "string"}]},
        {"properties": {"a": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}},
        {"minLength": -1},
        {"description": 5},
        "not a schema",
    ],
)
def test_outside_the_quick_path(schema: Any) -> None:
    assert compile_quick(schema, CONFORMS) is None


def test_enum_equality_is_jsonschemas() -> None:
    quick = compile_quick({"enum": [1, "a", None, [1]]}, CONFORMS)
    assert quick is not None
    assert quick(1.0) and quick("a") and quick(None)
    assert not quick(True)  # True is not 1
    assert not quick([1])  # lists are left to jsonschema (which accepts it)


def test_a_compiled_schema_is_freed_without_the_cycle_collector():
    """Compiling makes no reference cycle: a schema's accepts, dropped, are freed at once.
    (mypyc's closure of the enum check once kept its own environment alive: 17,772 cycles,
    124,435 objects, in a 90,818-case `grade` that pauses the collector.)"""
    schema = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["c", "f"]},
            "mode": {"const": 1},
            "n": {"type": "integer", "minimum": 0, "maximum": 9},
            "tags": {"type": "array", "items": {"type": "string", "pattern": "^a"}},
            "when": {"type": "string", "format": "date"},
            "either": {"anyOf": [{"type": "string"}, {"type": ["integer", "null"]}]},
            "both": {"allOf": [{"type": "string"}, {"minLength": 1}]},
        },
        "required": ["unit"],
        "additionalProperties": False,
    }
    conforms = format_checker(jsonschema.Draft202012Validator).conforms
    gc.collect()
    gc.disable()
    try:
        for _ in range(50):
            accept = compile_quick(schema, conforms)
            assert accept is not None and accept({"unit": "c", "mode": 1, "n": 3})
            del accept
        assert gc.collect() == 0
    finally:
        gc.enable()
