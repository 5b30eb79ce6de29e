"""Vendor metrics across runs: trigger F1 (with its 0/0 rules), averages and IRF ranks."""

from __future__ import annotations

import pytest

from toolproxy.grade.grades import CallGrade, CaseGrade
from toolproxy.grade.metrics import CaseRecord
from toolproxy.grade.vendor import (
    IRF_K,
    compare_runs,
    compare_triggers,
    competition_ranks,
    fuse_ranks,
    vendor_metrics,
)


def rec(
    cid: str,
    called: bool,
    passed: bool = True,
    stages: tuple[str | None, ...] = (),
    **kw: object,
) -> CaseRecord:
    calls = [CallGrade(expected_tool="t", actual_tool="t", stage_failed=s) for s in stages]  # type: ignore[arg-type]
    grade = CaseGrade(
        case_id=cid,
        passed=passed,
        label=None if passed else "wrong_tool",
        calls=calls,
        called_tools=["t"] if called else [],
        expected_tools=["t"],
    )
    return CaseRecord(run="r", grade=grade, **kw)  # type: ignore[arg-type]


def runs_of(decisions: str) -> list[CaseRecord]:
    return [rec(f"c{i}", d == "1") for i, d in enumerate(decisions)]


def test_trigger_confusion_and_f1() -> None:
    base = runs_of("1100")
    run = runs_of("1010")
    t = compare_triggers(run, base)
    assert (t.shared, t.tp, t.fp, t.fn, t.tn) == (4, 1, 1, 1, 1)
    assert t.precision == 0.5 and t.recall == 0.5 and t.f1 == 0.5


def test_trigger_only_compares_shared_case_ids() -> None:
    base = runs_of("11")
    run = [*runs_of("10"), rec("extra", True)]
    t = compare_triggers(run, base)
    assert t.shared == 2 and t.tp == 1 and t.fn == 1 and t.fp == 0
    assert t.precision == 1.0 and t.recall == 0.5 and t.f1 == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("base", "run", "p", "r", "f1"),
    [
        ("000", "000", 1.0, 1.0, 1.0),  # agreement on negatives only
        ("010", "000", 0.0, 0.0, 0.0),  # no predicted positives, baseline has some
        ("000", "010", 0.0, 0.0, 0.0),  # no reference positives, run has some
        ("10", "01", 0.0, 0.0, 0.0),  # P + R = 0
    ],
)
def test_trigger_zero_division_rules(base: str, run: str, p: float, r: float, f1: float) -> None:
    t = compare_triggers(runs_of(run), runs_of(base))
    assert (t.precision, t.recall, t.f1) == (p, r, f1)


def test_no_shared_cases_is_none() -> None:
    t = compare_triggers([rec("a", True)], [rec("b", True)])
    assert t.shared == 0 and t.precision is None and t.recall is None and t.f1 is None


def test_vendor_metrics_means_and_schema_accuracy() -> None:
    cases = [
        rec("a", True, stages=(None, "semantic"), input_tokens=100, output_tokens=20, ttfb_ms=50.0),
        rec("b", True, False, stages=("parse",), input_tokens=10, decode_tps=40.0),
        rec("c", True, False, stages=("schema", "selection"), ttfb_ms=150.0, decode_tps=20.0),
        rec("d", False),
    ]
    v = vendor_metrics("r", cases, None)
    assert v.trigger is None and v.trigger_f1 is None
    assert v.success_rate == 0.5
    assert (v.calls, v.schema_valid) == (5, 3)  # parse and schema failures are invalid
    assert v.schema_accuracy == pytest.approx(3 / 5)
    assert v.avg_tokens == pytest.approx((120 + 10) / 2)  # cases without usage skipped
    assert v.avg_ttft_ms == 100.0 and v.tps == 30.0


def test_calls_not_emitted_are_not_schema_checked_and_not_graded_is_excluded() -> None:
    missing = CaseGrade(
        case_id="m",
        passed=False,
        label="no_call",
        calls=[CallGrade(expected_tool="t", actual_tool=None, stage_failed="selection")],
        expected_tools=["t"],
    )
    ng = CaseGrade(case_id="n", passed=False, not_graded=True)
    v = vendor_metrics("r", [CaseRecord(grade=missing), CaseRecord(grade=ng)], None)
    assert v.calls == 0 and v.schema_accuracy is None
    assert v.success_rate == 0.0 and v.avg_tokens is None and v.tps is None


def test_competition_ranks_share_the_best_rank() -> None:
    assert competition_ranks({"a": 0.9, "b": 0.9, "c": 0.5}, True) == {"a": 1, "b": 1, "c": 3}
    assert competition_ranks({"a": 300.0, "b": 100.0, "c": 200.0}, False) == {
        "a": 3,
        "b": 1,
        "c": 2,
    }
    assert competition_ranks({"a": 0.1 + 0.2, "b": 0.3}, True) == {"a": 1, "b": 1}


def test_irf_sums_inverse_ranks_and_skips_missing_metrics() -> None:
    a = vendor_metrics("a", [rec("c", True, stages=(None,), ttfb_ms=100.0)], None)
    b = vendor_metrics("b", [rec("c", True, False, stages=("parse",), ttfb_ms=50.0)], None)
    fused = {v.run: v for v in fuse_ranks([a, b])}
    # success: a 1st, b 2nd; schema: a 1st, b 2nd; ttft: b 1st, a 2nd; no tokens/tps/f1
    assert fused["a"].ranks == {"success_rate": 1, "schema_accuracy": 1, "avg_ttft_ms": 2}
    assert fused["b"].ranks == {"success_rate": 2, "schema_accuracy": 2, "avg_ttft_ms": 1}
    k = IRF_K
    assert fused["a"].irf_score == pytest.approx(2 / (1 + k) + 1 / (2 + k))
    assert fused["b"].irf_score == pytest.approx(2 / (2 + k) + 1 / (1 + k))
    assert a.irf_score == 0.0  # fuse_ranks returns copies


def test_compare_runs_with_baseline_and_ties() -> None:
    runs = {"base": runs_of("1100"), "same": runs_of("1100"), "other": runs_of("0011")}
    out = {v.run: v for v in compare_runs(runs, "base")}
    assert out["base"].trigger_f1 == 1.0 and out["same"].trigger_f1 == 1.0
    assert out["other"].trigger_f1 == 0.0
    assert out["base"].ranks["trigger_f1"] == 1 and out["same"].ranks["trigger_f1"] == 1
    assert out["other"].ranks["trigger_f1"] == 3
    assert out["base"].irf_score == out["same"].irf_score > out["other"].irf_score
    assert list(out) == ["base", "same", "other"]
    with pytest.raises(KeyError):
        compare_runs(runs, "nope")


def test_trigger_ignores_cases_without_a_model_turn() -> None:
    base = [rec("a", True), rec("b", True)]
    run = [rec("a", True), rec("b", False, observed=False)]
    t = compare_triggers(run, base)
    assert t.shared == 1 and t.fn == 0 and t.f1 == 1.0
