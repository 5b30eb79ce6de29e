"""Per-run metrics: every definition in toolproxy/grade/metrics.py on hand-built grades."""

from __future__ import annotations

import pytest

from toolproxy.grade.grades import ArgGrade, CallGrade, CaseGrade
from toolproxy.grade.labels import PRECEDENCE
from toolproxy.grade.metrics import (
    CaseRecord,
    SessionCall,
    cells_of,
    compute_run,
    find_chains,
    grade_of,
    observed_of,
    outcome_of,
    ratio,
)
from toolproxy.grade.rows import GradeRow


def arg(name: str, bucket: str) -> ArgGrade:
    return ArgGrade(name=name, bucket=bucket)  # type: ignore[arg-type]


def case(
    cid: str,
    expected: list[str],
    called: list[str],
    passed: bool = True,
    label: str | None = None,
    calls: list[CallGrade] | None = None,
    not_graded: bool = False,
    offered: list[str] | None = None,
    exchange: str | None = None,
) -> CaseRecord:
    grade = CaseGrade(
        case_id=cid,
        exchange_id=exchange or f"x-{cid}",
        passed=passed,
        label=label,  # type: ignore[arg-type]
        not_graded=not_graded,
        calls=calls or [],
        expected_tools=expected,
        called_tools=called,
    )
    return CaseRecord(run="r", grade=grade, offered=offered)


def call(exp: str | None, got: str | None, *args: ArgGrade, stage: str | None = None) -> CallGrade:
    return CallGrade(expected_tool=exp, actual_tool=got, args=list(args), stage_failed=stage)  # type: ignore[arg-type]


def test_counts_pass_rate_and_selection_accuracy() -> None:
    cases = [
        case("a", ["get"], ["get"]),
        case("b", ["get"], ["put"], passed=False, label="wrong_tool"),
        case("c", [], [], label=None),  # correct no_call
        case("d", [], ["get"], passed=False, label="spurious_call"),
        case("e", ["get", "put"], ["put", "get"], passed=False, label="hallucinated_param"),
        case("f", ["get"], ["get"], passed=False, not_graded=True),
    ]
    m = compute_run("r", cases)
    assert (m.cases, m.graded, m.not_graded, m.passed) == (6, 5, 1, 2)
    assert m.pass_rate == pytest.approx(2 / 5)
    # a, c, e (order-insensitive) are correct; the not-graded f is left out
    assert m.selection_correct == 3
    assert m.selection_accuracy == pytest.approx(3 / 5)
    assert list(m.label_counts) == list(PRECEDENCE)
    assert m.label_counts["wrong_tool"] == 1 and m.label_counts["spurious_call"] == 1
    assert m.label_counts["hallucinated_param"] == 1 and m.label_counts["no_call"] == 0


def test_selection_uses_sets_so_a_collapsed_parallel_call_is_still_the_right_tool() -> None:
    m = compute_run("r", [case("a", ["get", "get"], ["get"], False, "parallel_collapse")])
    assert m.selection_accuracy == 1.0


def test_argument_buckets_are_three_separate_rates() -> None:
    calls = [
        call(
            "get",
            "get",
            arg("a", "ok"),
            arg("b", "hallucinated"),
            arg("c", "missing"),
            arg("d", "missing"),
            arg("e", "malformed"),
            arg("f", "not_graded"),
        )
    ]
    m = compute_run("r", [case("a", ["get"], ["get"], False, "missing_required", calls)])
    assert m.graded_args == 5  # not_graded is excluded from the denominator
    assert m.args == {"ok": 1, "hallucinated": 1, "missing": 2, "malformed": 1}
    assert m.hallucination_rate == pytest.approx(1 / 5)
    assert m.omission_rate == pytest.approx(2 / 5)
    assert m.format_error_rate == pytest.approx(1 / 5)


def test_a_missing_field_is_never_a_hallucination() -> None:
    calls = [call("get", "get", arg("city", "missing"))]
    m = compute_run("r", [case("a", ["get"], ["get"], False, "missing_required", calls)])
    assert m.hallucination_rate == 0.0 and m.omission_rate == 1.0


def test_empty_denominators_are_none_not_zero() -> None:
    m = compute_run("r", [])
    assert m.pass_rate is None and m.selection_accuracy is None
    assert m.hallucination_rate is None and m.over_tooling is None
    assert m.nonexistent_rate is None and m.recovery_rate is None
    assert ratio(1, 0) is None and ratio(1, 4) == 0.25


def test_confusion_matrix_with_none_row_and_column() -> None:
    cases = [
        case("a", ["get"], ["get"], calls=[call("get", "get")]),
        case("b", ["get"], ["put"], False, "wrong_tool", [call("get", "put")]),
        case("c", ["get"], [], False, "no_call", [call("get", None)]),
        case("d", [], ["put"], False, "spurious_call", [call(None, "put")]),
        case("e", [], []),
        case("f", ["get", "put"], ["get"]),  # no CallGrades: paired by position
    ]
    m = compute_run("r", cases)
    assert m.confusion == {
        "(none)": {"(none)": 1, "put": 1},
        "get": {"(none)": 1, "get": 2, "put": 1},
        "put": {"(none)": 1},
    }
    assert cells_of(cases[5].grade) == [("get", "get"), ("put", "(none)")]


def test_over_tooling_counts_extra_and_spurious_calls() -> None:
    cases = [
        case("a", ["get"], ["get", "get", "put"]),
        case("b", [], ["get"], False, "spurious_call"),
        case("c", ["get", "put"], ["get"], False, "parallel_collapse"),  # fewer is not over
        case("d", ["get"], ["get"]),
    ]
    m = compute_run("r", cases)
    assert m.over_tooled_cases == {"a": 2, "b": 1}
    assert m.extra_calls == 3
    assert m.over_tooling == pytest.approx(3 / 4)


def test_calls_to_tools_that_were_not_offered() -> None:
    cases = [
        case("a", ["get"], ["get", "gett"], offered=["get", "put"]),
        case("b", ["get"], ["gett"], offered=["get"]),
        case("c", ["get"], ["ghost"], offered=None),  # exchange not recorded: unchecked
        case("d", ["get"], ["get"], offered=[]),
    ]
    m = compute_run("r", cases)
    assert m.calls_checked == 4
    assert m.nonexistent_calls == 3
    assert m.nonexistent_tools == {"gett": 2, "get": 1}
    assert m.nonexistent_rate == pytest.approx(3 / 4)


def sc(xid: str, name: str, result: str | None = "ok", **kw: object) -> SessionCall:
    return SessionCall(session_id="s", exchange_id=xid, name=name, result=result, **kw)  # type: ignore[arg-type]


def test_outcome_of_each_error_signal() -> None:
    assert outcome_of(sc("x", "t", "fine")) == "ok"
    assert outcome_of(sc("x", "t", "fine", result_is_error=True)) == "failed"
    assert outcome_of(sc("x", "t", "Error: no such city")) == "failed"
    assert outcome_of(sc("x", "t", "  traceback (most recent call last)")) == "failed"
    assert outcome_of(sc("x", "t", '{"error": {"code": 3}}')) == "failed"
    assert outcome_of(sc("x", "t", '{"isError": true, "content": []}')) == "failed"
    assert outcome_of(sc("x", "t", '{"error": null, "value": 1}')) == "ok"
    assert outcome_of(sc("x", "t", "errorless result")) == "ok"  # a word, not the prefix
    assert outcome_of(sc("x", "t", None, parse_error="Expecting value")) == "failed"
    assert outcome_of(sc("x", "t", None)) == "unknown"


def test_retry_chains_recovered_unrecovered_and_not_chains() -> None:
    calls = [
        sc("x1", "get", "Error: bad"),  # chain 1 opens
        sc("x1", "put", "ok"),
        sc("x2", "get", "Error: again"),  # retry 1, still failing
        sc("x3", "get", "sunny"),  # retry 2, recovered
        sc("x4", "put", None, parse_error="bad json"),  # chain 2 opens
        sc("x4", "put", "Error: dup in the same exchange"),  # parallel, not a retry
        sc("x5", "put", None),  # retry with unknown outcome: closes unrecovered
        sc("x6", "del", "Error: never retried"),  # a failure, not a chain
        sc("x7", "get", "Error: late"),  # chain 3 opens
        sc("x8", "get", "Error: still"),  # retry, session ends: unrecovered
    ]
    chains = find_chains(calls)
    assert [(c.tool, c.start_exchange, c.retries, c.recovered) for c in chains] == [
        ("get", "x1", 2, True),
        ("put", "x4", 1, False),
        ("get", "x7", 1, False),
    ]


def test_retry_cost_counts_only_chains_started_in_the_runs_exchanges() -> None:
    session = [
        sc("x1", "get", "Error"),
        sc("x2", "get", "ok"),
        sc("x9", "put", "Error"),
        sc("x10", "put", "Error"),
    ]
    cases = [case("a", ["get"], ["get"], exchange="x1"), case("b", ["get"], ["get"])]
    m = compute_run("r", cases, [session])
    assert (m.retry_chains, m.retries, m.recovered_chains) == (1, 1, 1)
    assert m.retries_per_case == 0.5 and m.recovery_rate == 1.0
    cases.append(case("c", ["put"], ["put"], exchange="x9"))
    m = compute_run("r", cases, [session])
    assert (m.retry_chains, m.retries, m.recovered_chains) == (2, 2, 1)
    assert m.retries_per_case == pytest.approx(2 / 3) and m.recovery_rate == 0.5


def test_grade_of_reads_stored_json_text_and_partial_calls() -> None:
    row = GradeRow(
        run="r",
        graded_at="2024-01-01T00:00:00Z",
        case_id="c",
        passed=False,
        label="wrong_tool",
        calls='[{"expected_tool": "get"}, "junk"]',
        expected_tools='["get"]',
        called_tools=["put"],
    )
    g = grade_of(row)
    assert g.label == "wrong_tool"
    assert [(c.expected_tool, c.actual_tool) for c in g.calls] == [("get", None)]
    assert g.expected_tools == ["get"] and g.called_tools == ["put"]
    bad = grade_of(row.model_copy(update={"label": "nonsense", "calls": "not json"}))
    assert bad.label is None and bad.calls == []


def test_grade_of_gives_back_the_grade_a_run_stored() -> None:
    import json

    arg = ArgGrade("q", "hallucinated", "wrong", True, "judged so", 0.5)
    calls = [
        CallGrade("get", "get", "c1", "semantic", "hallucinated_param", "offered", ["x"], [arg]),
        CallGrade(None, "put", None, None, None, None, [], []),
    ]
    grade = CaseGrade(
        "c", False, "x1", "s1", "m", "hallucinated_param", False, calls, ["get", "put"],
        ["get"], "hermes", "passed",
    )  # fmt: skip
    stored = {k: v for k, v in grade.model_dump().items() if k != "calls"}
    row = GradeRow(run="r", graded_at="t", **stored, calls=json.dumps(grade.model_dump()["calls"]))
    assert grade_of(row).model_dump() == grade.model_dump()


def test_values_lists_every_gateable_metric() -> None:
    m = compute_run("r", [case("a", ["get"], ["get"])])
    vals = m.values()
    assert vals["pass_rate"] == 1.0 and vals["selection_accuracy"] == 1.0
    assert set(vals) >= {"hallucination_rate", "retries_per_case", "recovery_rate"}


def test_cases_without_a_model_turn_are_left_out_of_descriptive_metrics() -> None:
    row = GradeRow(
        run="r",
        graded_at="t",
        case_id="n",
        passed=False,
        not_graded=True,
        reason="no_exchange: exchange x-n is not in the capture",
        expected_tools=["get"],
        called_tools=[],
    )
    assert not observed_of(row)
    assert observed_of(row.model_copy(update={"reason": "no_judge: needs --judge-url"}))
    assert observed_of(row.model_copy(update={"not_graded": False}))
    missing = CaseRecord(run="r", grade=grade_of(row), observed=False, offered=[])
    m = compute_run("r", [case("a", ["get"], ["get"], offered=["get"]), missing])
    assert (m.cases, m.observed, m.graded, m.not_graded) == (2, 1, 1, 1)
    assert m.confusion == {"get": {"get": 1}}  # not a (get, none) "no call"
    assert m.over_tooling == 0.0 and m.calls_checked == 1
