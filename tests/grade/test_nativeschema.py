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
