"""The C grader (`nativegrade.c`) gives `grade_case_py`'s grade, field for field, or hands
the case back (None): never another grade. Run on the venv's build in both cores (the pure
core loads the built file here and gives it the pure Python hooks)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.fixtures.corpus import ITEMS, keyword_judge
from tests.grade.test_properties import (
    cases,
    judges,
    observations,
    observed_calls,
    server_tools,
)
from tests.schema.test_nativeglance import built_glance
from tests.util.test_compiled import built_module
from toolproxy.grade import checker
from toolproxy.grade.checker import grade_case_py, native_hooks
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation
from toolproxy.records import ToolCall

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))


def native_grader() -> ModuleType:
    """The venv's build of `nativegrade.c` (and of its C parts), configured with this
    core's hooks (the fixture of every test of a part of it)."""
    module = built_module("toolproxy.grade.nativegrade")
    module.configure(hooks())
    return module


def hooks() -> dict[str, Any]:
    equal = built_module("toolproxy.grade.nativeequal")._C_API
    return native_hooks(equal, built_glance()._C_API)


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return native_grader()


def agrees(native: ModuleType, case: Case, observation: Observation, judge=None, tools=()):
    """The C grade (asserted to be the Python one's), or None when it handed back."""
    found = native.grade(case, observation, judge, tools)
    if found is not None:
        assert found.model_dump() == grade_case_py(case, observation, judge, tools).model_dump()
    return found


@SETTINGS
@given(cases, observations, judges, server_tools)
def test_on_any_case_it_gives_the_python_grade_or_hands_back(native, case, observation, judge, mcp):
    found = agrees(native, case, observation, judge, mcp)
    event("handed back" if found is None else f"graded {found.label}")


@settings(SETTINGS, max_examples=100)
@given(st.lists(observed_calls(), min_size=1, max_size=3), cases)
def test_calls_the_wire_did_not_read_are_graded_by_python_alike(native, calls, case):
    agrees(native, case.model_copy(update={"expect": "call"}), Observation(calls=calls))


@pytest.mark.parametrize("item", ITEMS, ids=[i.id for i in ITEMS])
def test_the_control_corpus_grades_alike(native, item):
    judge = keyword_judge if item.use_judge else None
    agrees(native, item.case, item.observation(), judge, item.server_tools)


def weather_case(**update: Any) -> tuple[Case, Observation]:
    case = Case(
        id="w", calls=[ExpectedCall(tool="get_weather", args={"city": Matcher(value="Paris")})]
    )
    call = ToolCall(
        name="get_weather", arguments_raw='{"city": "Paris"}', arguments={"city": "Paris"}
    )
    return case.model_copy(update=update), Observation(calls=[call])


def test_a_plain_case_is_graded_in_c(native):
    case, observation = weather_case()
    found = agrees(native, case, observation)
    assert found is not None and found.passed


def test_the_checker_asks_the_c_grader_when_the_compiled_core_is_built():
    from toolproxy.util.compiled import in_use

    assert (checker.NATIVE_GRADE is not None) is in_use()


def test_of_two_tools_offered_under_one_name_the_first_is_the_schema(native):
    case, observation = weather_case()
    city = {"type": "object", "properties": {"city": {"type": "string"}}}
    other = {"type": "object", "properties": {"city": {"type": "integer"}}}
    offered = [{"name": "get_weather", "parameters": p} for p in (city, other)]
    found = agrees(native, case, observation.model_copy(update={"offered": offered}))
    assert found is not None and found.passed
