"""The C semantic stage (`nativesemantic.c`, part of `nativegrade.c`): each expected
argument graded as `semantic.match_args` grades it; a judge is asked once per judged
argument, as the Python grader asks it."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from tests.grade.test_nativegrade import agrees, native_grader, weather_case
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation
from toolproxy.records import ToolCall


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return native_grader()


def test_a_judge_is_asked_once_for_each_judged_argument(native):
    asked: list[Any] = []

    def judge(criterion: str, value: Any) -> tuple[float, str]:
        asked.append(value)
        return 1.0, "fine"

    m = Matcher(kind="judge", criterion="a city")
    case = Case(id="j", calls=[ExpectedCall(tool="get_weather", args={"city": m})])
    _, observation = weather_case()
    found = native.grade(case, observation, judge, ())
    assert found is not None and found.passed and asked == ["Paris"]


def graded(native: ModuleType, wanted: dict[str, Matcher], args: dict[str, Any], extra=True):
    case = Case(id="m", calls=[ExpectedCall(tool="t", args=wanted, allow_extra_args=extra)])
    found = agrees(native, case, Observation(calls=[ToolCall(name="t", arguments=args)]))
    assert found is not None
    return found


@pytest.mark.parametrize(
    "wanted, args, label, buckets",
    [
        ({"a": Matcher(value=1)}, {"a": 1.0}, None, {"a": "ok"}),  # 1 is 1.0
        ({"a": Matcher(value=1)}, {"a": True}, "hallucinated_param", {"a": "hallucinated"}),
        ({"a": Matcher(value=5)}, {"a": "5"}, "type_coercion", {"a": "malformed"}),
        ({"a": Matcher(value="x")}, {}, "missing_required", {"a": "missing"}),
        ({"a": Matcher(value="x", optional=True)}, {}, None, {"a": "ok"}),
        ({"a": Matcher(value={"regex": "^P"})}, {}, "missing_required", {"a": "missing"}),
        ({"a": Matcher(kind="any_of", values=["x", "y"])}, {"a": "y"}, None, {"a": "ok"}),
        ({"a": Matcher(kind="enum", value=["x", "y"])}, {"a": "z"}, "hallucinated_param",
         {"a": "hallucinated"}),
        ({"a": Matcher(kind="any")}, {"a": [1]}, None, {"a": "ok"}),
        ({"a": Matcher(kind="regex", pattern="P.*")}, {"a": "Paris"}, None, {"a": "ok"}),
        ({"a": Matcher(kind="judge")}, {"a": 1}, None, {"a": "not_graded"}),
        ({"a": Matcher(value="C:\\new")}, {"a": "C:\new"}, "escaping_error", {"a": "malformed"}),
    ],
)  # fmt: skip
def test_each_matcher_grades_as_in_python(native, wanted, args, label, buckets):
    found = graded(native, wanted, args)
    assert found.label == label
    assert {a.name: a.bucket for a in found.calls[0].args} == buckets


def test_an_argument_the_expectation_does_not_name(native):
    found = graded(native, {"a": Matcher(value=1)}, {"a": 1, "b": 2}, extra=False)
    assert found.label == "hallucinated_param"
    assert [(a.name, a.bucket) for a in found.calls[0].args] == [("a", "ok"), ("b", "hallucinated")]
