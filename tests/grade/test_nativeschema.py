"""The C schema stage (`nativeschema.c`, part of `nativegrade.c`): on schemas glance reads
and arguments that are plain JSON, the schema stage's errors, labels, notes and flagged
arguments are the Python grader's (`quickerrors`, `schemastage.check_schema`), each
jsonschema quirk included; anything else it hands back to the Python grader's call."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import jsonschema
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from tests.grade.test_nativegrade import SETTINGS, agrees, hooks, native_grader
from tests.grade.test_properties import judges, matchers
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation
from toolproxy.records import ToolCall
from toolproxy.schema.accepts import BOUNDS
from toolproxy.schema.formats import format_checker
from toolproxy.schema.quick import LENGTHS

# Schemas made only of what glance reads (type, properties, required, additionalProperties,
# items, enum, const, the bounds and lengths, format, allOf, anyOf, annotations), nested,
# with names that json_path and the argument paths write specially: what the C schema stage
# reads.
SUBSET_KEYS = st.sampled_from(["city", "unit", "", "ü", "a b", "it's", "a\n", "x1_", "b\\s"])
_SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text(max_size=3)
_SCALARS |= st.sampled_from(["2025-03-01T10:00:00Z", "2025-02-30T10:00:00Z", "10:00:00Z"])
_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
_LEAVES = st.one_of(
    st.builds(lambda t: {"type": t}, _TYPES),
    st.builds(lambda t: {"type": [t, "null"]}, _TYPES),
    st.builds(
        lambda v: {"enum": v}, st.lists(_SCALARS | st.lists(_SCALARS), min_size=1, max_size=3)
    ),
    st.builds(lambda v: {"const": v}, _SCALARS),
    st.sampled_from([True, False, {}, {"type": "string", "description": "d", "title": "t"}]),
    st.builds(  # a bound, with or without a type: the edges of jsonschema's words
        lambda typed, k, b: {**({"type": "number"} if typed else {}), k: b},
        st.booleans(),
        st.sampled_from(BOUNDS),
        st.integers(-2, 2) | st.sampled_from([0.5, -1.5, 10**20]),
    ),
    st.builds(  # a format, met by strs it takes and does not, and by other types
        lambda name, typed: {**({"type": "string"} if typed else {}), "format": name},
        st.sampled_from(["date-time", "time", "date", "email", "no-such"]),
        st.booleans(),
    ),
    st.builds(  # a length: 0 and 1 are worded apart
        lambda k, n: {"type": "string" if "Length" in k else "array", k: n} if n else {k: n},
        st.sampled_from(sorted(LENGTHS)),
        st.integers(0, 3),
    ),
)
subset_schemas = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.builds(
            lambda props, required, extra, typed: {
                **({"type": "object"} if typed else {}),
                "properties": props,
                "required": required,
                "additionalProperties": extra,
            },
            st.dictionaries(SUBSET_KEYS, inner, max_size=3),
            st.lists(SUBSET_KEYS, max_size=3, unique=True),
            st.booleans() | inner,
            st.booleans(),
        ),
        st.builds(lambda items: {"type": "array", "items": items}, inner),
        st.builds(lambda subs: {"allOf": subs}, st.lists(inner, min_size=1, max_size=2)),
        st.builds(  # an optional parameter as pydantic writes it, and other alternatives
            lambda subs: {"anyOf": subs}, st.lists(inner, min_size=1, max_size=2)
        ),
        st.builds(  # required before properties: errors come in the schema's key order
            lambda props: {"required": ["city"], "properties": props},
            st.dictionaries(SUBSET_KEYS, inner, max_size=3),
        ),
    ),
    max_leaves=8,
)
subset_values = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(SUBSET_KEYS, inner, max_size=4),
    max_leaves=10,
)


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return native_grader()


def one_call(schema: Any, args: dict[str, Any], wanted: dict[str, Matcher], extra: bool = True):
    case = Case(id="s", calls=[ExpectedCall(tool="t", args=wanted, allow_extra_args=extra)])
    call = ToolCall(name="t", arguments_raw=json.dumps(args), arguments=args)
    return case, Observation(calls=[call], offered=[{"name": "t", "parameters": schema}])


@SETTINGS
@given(
    subset_schemas,
    st.dictionaries(SUBSET_KEYS, subset_values, max_size=4),
    st.dictionaries(SUBSET_KEYS, matchers, max_size=3),
    st.booleans(),
    judges,
)
def test_schema_errors_worded_in_c_are_the_pythons(native, schema, args, wanted, extra, judge):
    case, observation = one_call(schema, args, wanted, extra)
    found = agrees(native, case, observation, judge)
    event("handed back" if found is None else f"graded {found.calls[0].stage_failed}")


@pytest.mark.parametrize(
    "schema, args",
    [
        ({"properties": {"u": {"enum": [[1], [2]]}}}, {"u": [1]}),  # a list met by an enum
        ({"properties": {"n": {"type": "string", "pattern": "^a"}}}, {"n": "b"}),  # re
        ({"properties": {"q": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}, {"q": 1}),
        (  # anyOf's error beside another: both the Python grader's, none in C
            {"properties": {"q": {"anyOf": [{"type": "null"}]}, "s": {"type": "string"}}},
            {"q": 1, "s": 1},
        ),
        ({"properties": {"f": {"type": "string"}}}, {"f": float("nan")}),  # not plain JSON
    ],
)
def test_what_the_walk_does_not_read_is_graded_by_python_alike(native, schema, args):
    wanted = {name: Matcher(value=value) for name, value in args.items()}
    assert agrees(native, *one_call(schema, args, wanted)) is not None


@pytest.mark.parametrize(
    "schema, args",
    [
        ({"properties": {"n": {"type": "integer", "minimum": 3}}}, {"n": 1}),
        ({"properties": {"n": {"maximum": 2.5}}}, {"n": 3}),
        ({"properties": {"n": {"exclusiveMinimum": 0}}}, {"n": 0.0}),
        ({"properties": {"n": {"exclusiveMaximum": 10**20}}}, {"n": 10**20}),
        ({"properties": {"s": {"type": "string", "minLength": 1}}}, {"s": ""}),  # non-empty
        ({"properties": {"s": {"minLength": 4}}}, {"s": "üéà"}),  # code points: too short
        ({"properties": {"s": {"maxLength": 0}}}, {"s": "a"}),  # expected to be empty
        ({"properties": {"s": {"maxLength": 2}}}, {"s": "abc", "t": 1}),  # too long
        ({"properties": {"l": {"type": "array", "minItems": 2}}}, {"l": [1]}),
        ({"properties": {"l": {"maxItems": 1, "items": {"minimum": 0}}}}, {"l": [-1, -2]}),
        ({"properties": {"n": {"minimum": 3}}, "additionalProperties": False}, {"n": 1, "x": 2}),
        ({"properties": {"d": {"type": "string", "format": "date-time"}}}, {"d": "2025-02-30"}),
        ({"properties": {"d": {"format": "time", "maxLength": 3}}}, {"d": "25:00:00Z"}),
        # a value at its bound, and a bool under one, beside an error: no error of theirs
        ({"properties": {"n": {"minimum": 3}, "s": {"type": "string"}}}, {"n": 3, "s": 1}),
        ({"properties": {"n": {"minimum": 3}, "s": {"type": "string"}}}, {"n": True, "s": 1}),
        # an optional parameter given, or null, beside an error; allOf's errors, each
        (
            {
                "properties": {"q": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
                "required": ["x"],
            },
            {"q": None},
        ),
        (
            {"properties": {"q": {"allOf": [{"type": "integer"}, {"minimum": 2}, False]}}},
            {"q": 1.5},
        ),
    ],
)
def test_bound_length_and_format_errors_are_worded_in_c(native, schema, args):
    """The call's schema stage runs in C: neither the Python call grader nor
    `schema_proves` is asked, and the grade is still the Python grader's."""
    asked: list[str] = []
    taken = hooks()

    def counted(name: str) -> Any:
        def hook(*given: Any) -> Any:
            asked.append(name)
            return taken[name](*given)

        return hook

    native.configure(taken | {name: counted(name) for name in ("grade_call", "schema_proves")})
    try:
        wanted = {name: Matcher(value=value) for name, value in args.items()}
        found = agrees(native, *one_call(schema, args, wanted))
    finally:
        native.configure(taken)
    assert found is not None and found.calls[0].stage_failed == "schema"
    assert asked == []


def test_a_format_checker_that_raises_hands_the_call_back(native):
    """The Python grader notes the schema not checked; the C walk does not word the
    call's other errors without it."""
    checker = format_checker(jsonschema.Draft202012Validator)

    def boom(value: Any) -> bool:
        raise ValueError("boom")

    checker.checkers["boom"] = (boom, ())
    try:
        schema = {"properties": {"d": {"format": "boom"}, "s": {"type": "string"}}}
        args = {"d": "x", "s": 1}
        found = agrees(native, *one_call(schema, args, {}))
    finally:
        del checker.checkers["boom"]
    assert found is not None
    assert found.calls[0].errors == ["schema not checked: ValueError: boom"]
