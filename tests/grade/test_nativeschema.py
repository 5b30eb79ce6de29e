"""The C schema stage (`nativeschema.c`, part of `nativegrade.c`): on schemas glance reads
and arguments that are plain JSON, the schema stage's errors, labels, notes and flagged
arguments are the Python grader's (`quickerrors`, `schemastage.check_schema`), each
jsonschema quirk included; anything else it hands back to the Python grader's call."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from tests.grade.test_nativegrade import SETTINGS, agrees, native_grader
from tests.grade.test_properties import judges, matchers
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation
from toolproxy.records import ToolCall

# Schemas made only of what glance reads (type, properties, required, additionalProperties,
# items, enum, const, annotations), nested, with names that json_path and the argument
# paths write specially: what the C schema stage reads.
SUBSET_KEYS = st.sampled_from(["city", "unit", "", "ü", "a b", "it's", "a\n", "x1_", "b\\s"])
_SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text(max_size=3)
_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
_LEAVES = st.one_of(
    st.builds(lambda t: {"type": t}, _TYPES),
    st.builds(lambda t: {"type": [t, "null"]}, _TYPES),
    st.builds(
        lambda v: {"enum": v}, st.lists(_SCALARS | st.lists(_SCALARS), min_size=1, max_size=3)
    ),
    st.builds(lambda v: {"const": v}, _SCALARS),
    st.sampled_from([True, False, {}, {"type": "string", "description": "d", "title": "t"}]),
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
        ({"properties": {"n": {"type": "integer", "minimum": 3}}}, {"n": 1}),  # bounds
        ({"properties": {"f": {"type": "string"}}}, {"f": float("nan")}),  # not plain JSON
    ],
)
def test_what_the_walk_does_not_read_is_graded_by_python_alike(native, schema, args):
    wanted = {name: Matcher(value=value) for name, value in args.items()}
    assert agrees(native, *one_call(schema, args, wanted)) is not None
