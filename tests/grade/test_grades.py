"""toolproxy.grade.grades: a case's grade, per call and per argument (records the grader
builds; written `__init__`s, the dataclass's comparison and copies)."""

from __future__ import annotations

import copy
import gc
import json
import pickle

import pytest

from toolproxy.grade.grades import ArgGrade, CallGrade, CaseGrade
from toolproxy.grade.model import record_from
from toolproxy.util import compiled


def a_grade() -> CaseGrade:
    arg = ArgGrade("city", "hallucinated", "'Pari' is not 'Paris'")
    call = CallGrade("get_weather", "get_weather", "c1", "semantic", "hallucinated_param")
    call.args.append(arg)
    return CaseGrade("case-1", False, label="hallucinated_param", calls=[call])


def test_positional_and_keyword_arguments_build_the_same_record():
    assert ArgGrade("n", "ok") == ArgGrade(name="n", bucket="ok")
    assert CallGrade("f", None) == CallGrade(expected_tool="f", actual_tool=None)


def test_each_record_gets_lists_of_its_own():
    first, second = CallGrade("f", "f"), CallGrade("f", "f")
    first.errors.append("x")
    first.args.append(ArgGrade("n", "ok"))
    assert second.errors == [] and second.args == []
    one, two = CaseGrade("a", True), CaseGrade("b", True)
    one.calls.append(first)
    one.called_tools.append("f")
    assert two.calls == [] and two.called_tools == [] and two.expected_tools == []


def test_a_record_made_where_a_dropped_one_was_starts_with_its_defaults():
    # compiled, each grade record keeps its last dropped instance to make the next one
    # from (`free_list_len`): nothing of the dropped one may show through
    for _ in range(3):
        grade = a_grade()
        grade.called_tools.append("get_weather")
        del grade
        fresh = CaseGrade("case-2", True)
        assert (fresh.label, fresh.calls, fresh.called_tools, fresh.exchange_id) == (
            None, [], [], None
        )  # fmt: skip
        call = CallGrade("f", None)
        assert (call.call_id, call.stage_failed, call.errors, call.args) == (None, None, [], [])
        assert ArgGrade("n", "ok").model_dump() == ArgGrade(name="n", bucket="ok").model_dump()
        del fresh, call


def test_grade_records_stay_out_of_the_cycle_collector_when_compiled():
    # compiled (`mypyc_attr(acyclic=True)`): no GC header, no tracking, a cheaper teardown;
    # their fields (strs, numbers, lists of records and strs) hold no way back to them
    for record in (ArgGrade("n", "ok"), CallGrade("f", "f"), CaseGrade("c", True)):
        assert gc.is_tracked(record) is not compiled.in_use()


def test_a_grade_dumps_to_json_and_validates_back_equal():
    grade = a_grade()
    dumped = grade.model_dump()
    assert json.loads(json.dumps(dumped)) == dumped
    assert dumped["calls"][0]["args"][0]["detail"] == "'Pari' is not 'Paris'"
    assert CaseGrade.model_validate(dumped) == grade
    assert CaseGrade.model_validate(dumped).calls[0].args[0] == grade.calls[0].args[0]


def test_a_copy_takes_updates_and_leaves_the_original():
    grade = a_grade()
    copy = grade.model_copy(update={"passed": True, "label": None})
    assert (copy.passed, copy.label, grade.passed, grade.label) == (
        True,
        None,
        False,
        "hallucinated_param",
    )
    assert copy.calls is grade.calls  # shallow, as pydantic's


def test_records_refuse_unknown_attributes():
    with pytest.raises(AttributeError):
        ArgGrade("n", "ok").colour = "red"  # type: ignore[attr-defined]


ARG_SHAPES = [
    {"name": "n", "bucket": "ok"},  # defaults for the rest
    {"name": "n", "bucket": "ok", "detail": None, "judged": True, "judge_score": 0.5},
    {"name": "n", "bucket": "missing", "colour": "red"},  # an unknown key is ignored
    {"name": "n", "bucket": "ok", "judge_reason": "fine", "detail": "d", "judged": False},
]
CALL_SHAPES = [
    {"expected_tool": "f", "actual_tool": None},
    {"expected_tool": "f", "actual_tool": "f", "errors": None, "args": None, "label": None},
    {"expected_tool": None, "actual_tool": "g", "errors": ["x"], "args": ARG_SHAPES},
    {"expected_tool": "f", "actual_tool": "f", "args": ARG_SHAPES, "stage": "old key"},
    {
        "expected_tool": "f",
        "actual_tool": "g",
        "call_id": "c1",
        "stage_failed": "schema",
        "label": "schema_violation",
        "schema_source": "offered",
        "errors": [],
        "args": [],
    },
]


@pytest.mark.parametrize(("cls", "shape"), [(ArgGrade, s) for s in ARG_SHAPES] + [
    (CallGrade, s) for s in CALL_SHAPES
])  # fmt: skip
def test_a_stored_grade_reads_back_as_every_record_reads(cls, shape):
    # `model_validate` reads the keys `model_dump` writes by position (fast); the result is
    # what the keyword path every record shares (`record_from`) gives
    assert cls.model_validate(shape) == record_from(cls, shape, cls._field)


@pytest.mark.parametrize(
    ("cls", "shape"), [(ArgGrade, {"name": "n"}), (CallGrade, {"expected_tool": "f"})]
)
def test_a_stored_grade_missing_a_required_field_is_refused(cls, shape):
    with pytest.raises(TypeError):
        cls.model_validate(shape)


def test_a_grade_pickles_and_copies_to_an_equal_one():
    grade = a_grade()
    for made in (pickle.loads(pickle.dumps(grade)), copy.copy(grade), copy.deepcopy(grade)):
        assert type(made) is CaseGrade and made == grade and made is not grade
    assert copy.deepcopy(grade).calls[0].args[0] is not grade.calls[0].args[0]
