"""How the C grader reads a case (`nativeread.c`, part of `nativegrade.c`): what it does
not read as `grade_case_py` would, it hands back (None), and the Python grader grades."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.grade.test_nativegrade import agrees, native_grader, weather_case
from toolproxy.grade.checker import grade_case
from toolproxy.grade.model import Case, ExpectedCall
from toolproxy.records import ToolCall


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return native_grader()


@pytest.mark.parametrize(
    "update, calls",
    [
        ({"expect": "no_call"}, None),  # spurious calls: the Python grader's words
        ({"expect": "output"}, None),
        ({}, []),  # no call made: a call lost in the text is looked for in Python
    ],
)
def test_what_it_does_not_read_is_handed_back(native, update, calls):
    case, observation = weather_case(**update)
    if calls is not None:
        observation = observation.model_copy(update={"calls": calls})
    assert native.grade(case, observation, None, ()) is None
    assert grade_case(case, observation) is not None  # graded all the same


def test_a_call_subclass_is_handed_back(native):
    class Recorded(ToolCall):
        pass

    case, observation = weather_case()
    subclass = Recorded(**observation.calls[0].model_dump())
    moved = observation.model_copy(update={"calls": [subclass]})
    assert native.grade(case, moved, None, ()) is None


def test_more_calls_than_it_reads_are_handed_back(native):
    case, observation = weather_case()
    many = observation.model_copy(update={"calls": observation.calls * (native.MAX_CALLS + 1)})
    assert native.grade(case, many, None, ()) is None
    assert native.grade(case, observation.model_copy(update={"calls": observation.calls * 3}),
                        None, ()) is not None  # fmt: skip


def test_a_tool_offered_as_a_dict_subclass_or_wrapped_as_a_function(native):
    class Spec(dict):
        pass

    case, observation = weather_case()
    wrapped = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    assert agrees(native, case, observation.model_copy(update={"offered": wrapped}))
    odd = [Spec(name="get_weather", parameters={})]
    assert native.grade(case, observation.model_copy(update={"offered": odd}), None, ()) is None


def test_an_expected_call_or_a_call_read_as_other_types_is_handed_back(native):
    case = Case(id="t", calls=[ExpectedCall(tool="get_weather", args={1: "x"})])  # type: ignore[dict-item]
    _, observation = weather_case()
    assert native.grade(case, observation, None, ()) is None  # an argument name not a str
    unnamed = observation.model_copy(update={"calls": [ToolCall.model_construct(name=3)]})
    assert native.grade(weather_case()[0], unnamed, None, ()) is None  # a name not a str
