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
from tests.strategies import SUBSET_KEYS, subset_schemas, subset_values
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation
from toolproxy.records import ToolCall


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


# each a quirk of jsonschema's errors the C walk repeats: the schema, the arguments
QUIRKS = {
    "required names absent, each flagged by every required error": (
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]},
        {"c": 1},
    ),
    "a false schema's error one path step short": (
        {"properties": {"a": {"properties": {"b": False}}}},
        {"a": {"b": 1}},
    ),
    "additionalProperties false: the extras sorted in the message, each flagged": (
        {"properties": {"a": {}}, "additionalProperties": False},
        {"z": 1, "a": 1, "m": 2},
    ),
    "additionalProperties a schema: the extras walked as a set": (
        {"properties": {}, "additionalProperties": {"type": "integer"}},
        {"x": "1", "y": "2", "w": "3"},
    ),
    "names json_path quotes, and one whose $ takes a last newline": (
        {"properties": {"it's": {"type": "string"}, "a\n": {"type": "string"}, "ü": False}},
        {"it's": 1, "a\n": 2, "ü": 3},
    ),
    "items: an index in the path, and items false": (
        {"properties": {"l": {"items": {"type": "string"}}, "n": {"items": False}}},
        {"l": ["a", 1, "b", 2], "n": [1, 2]},
    ),
    "enum and const: wrong values, so bucket hallucinated": (
        {"properties": {"u": {"enum": ["c", "f"]}, "k": {"const": 3}}},
        {"u": "k", "k": 3.5},
    ),
    "type: '5' for an integer is a coercion, 'x' is not": (
        {"properties": {"n": {"type": "integer"}, "m": {"type": ["integer", "null"]}}},
        {"n": "5", "m": "x"},
    ),
    "a type error under the root: the whole object": ({"type": "array"}, {"a": 1}),
    "a message cut at 300 characters": (
        {"properties": {"s": {"type": "integer"}}},
        {"s": "x" * 400},
    ),
}


@pytest.mark.parametrize("schema, args", QUIRKS.values(), ids=list(QUIRKS))
def test_each_quirk_is_worded_in_c_as_in_python(native, schema, args):
    wanted = {name: Matcher(value=value) for name, value in args.items()}
    found = agrees(native, *one_call(schema, args, wanted))
    assert found is not None and found.calls[0].stage_failed == "schema"


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
