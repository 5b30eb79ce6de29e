"""Bootstrap verdicts: a clear win is better, a small difference on few cases is not
significant, the direction of each metric is respected, the same seed gives the same
interval."""

from __future__ import annotations

import pytest

from toolproxy.grade.grades import ArgGrade, CallGrade, CaseGrade
from toolproxy.grade.metrics import CaseRecord
from toolproxy.grade.verdict import MIN_CASES, compare, verdicts


def rec(cid: str, passed: bool, *, hallucinated: bool = False) -> CaseRecord:
    bucket = "hallucinated" if hallucinated else "ok"
    call = CallGrade(expected_tool="t", actual_tool="t", args=[ArgGrade(name="a", bucket=bucket)])
    grade = CaseGrade(
        case_id=cid, passed=passed, label=None if passed else "wrong_tool",
        expected_tools=["t"], called_tools=["t"] if passed else ["u"], calls=[call],
    )  # fmt: skip
    return CaseRecord(grade=grade)


def runs(n: int, base_pass: int, cand_pass: int) -> dict[str, list[CaseRecord]]:
    return {
        "base": [rec(f"c{i}", i < base_pass) for i in range(n)],
        "cand": [rec(f"c{i}", i < cand_pass) for i in range(n)],
    }


def test_a_clear_win_is_better_and_a_clear_loss_worse() -> None:
    (v,) = verdicts(runs(200, 100, 180), "base", ["pass_rate"])
    assert v.verdict == "better" and v.delta == pytest.approx(0.4)
    assert v.low is not None and v.high is not None and 0 < v.low < 0.4 < v.high
    (w,) = verdicts(runs(200, 180, 100), "base", ["pass_rate"])
    assert w.verdict == "worse"


def test_two_points_on_forty_cases_is_not_a_win() -> None:
    # 40 cases, one more passed than the baseline (+2.5 points)
    (v,) = verdicts(runs(40, 20, 21), "base", ["pass_rate"])
    assert v.delta == pytest.approx(0.025) and v.verdict == "not significantly different"
    assert v.low is not None and v.low <= 0 <= (v.high or 0)


def test_lower_is_better_for_rates_of_errors_and_cost() -> None:
    base = [rec(f"c{i}", True, hallucinated=i < 60) for i in range(100)]
    cand = [rec(f"c{i}", True, hallucinated=i < 5) for i in range(100)]
    (v,) = verdicts({"base": base, "cand": cand}, "base", ["hallucination_rate"])
    assert v.delta == pytest.approx(-0.55) and v.verdict == "better"
    money = {"base": {f"c{i}": 0.01 for i in range(50)}, "cand": {f"c{i}": 0.02 for i in range(50)}}
    cases = {"base": base[:50], "cand": cand[:50]}
    (c,) = verdicts(cases, "base", ["cost_per_case"], money)
    assert c.verdict == "worse" and c.delta == pytest.approx(0.01)


def test_only_shared_cases_count_and_too_few_give_no_verdict() -> None:
    data = runs(MIN_CASES - 1, 1, 3)
    data["cand"].append(rec("extra", True))  # a case the baseline lacks: left out
    (v,) = verdicts(data, "base", ["pass_rate", "irf_score"])  # no per-case form: skipped
    assert v.cases == MIN_CASES - 1 and v.verdict == "no verdict" and v.low is None


def test_the_same_seed_gives_the_same_interval() -> None:
    base = {f"c{i}": (float(i % 2), 1.0) for i in range(30)}
    cand = {f"c{i}": (float(i % 3 > 0), 1.0) for i in range(30)}
    one, two = compare("r", "pass_rate", base, cand), compare("r", "pass_rate", base, cand)
    assert (one.low, one.high) == (two.low, two.high)
    other = compare("r", "pass_rate", base, cand, seed=1)
    assert (other.low, other.high) != (one.low, one.high)


def test_no_draw_with_a_denominator_gives_no_verdict_instead_of_an_interval() -> None:
    # one case of five has arguments to grade: a draw can miss it on every round
    base = {f"c{i}": (0.0, float(i == 0)) for i in range(5)}
    cand = {f"c{i}": (float(i == 0), float(i == 0)) for i in range(5)}
    outcomes = {compare("r", "hallucination_rate", base, cand, seed=s, rounds=2).verdict
                for s in range(60)}  # fmt: skip
    assert "no verdict" in outcomes  # P(both draws miss c0) = 0.33 ** 2
    assert outcomes <= {"no verdict", "worse"}
