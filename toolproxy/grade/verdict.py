"""The report's decision: each candidate against the baseline, per gated metric, better /
worse / not significantly different, from a paired bootstrap over cases. Pure.

A metric here is a ratio of sums over cases (`per_case`): pass_rate = passed / graded,
selection_accuracy = correct / graded, hallucination_rate = hallucinated / graded args,
omission_rate, format_error_rate likewise, cost_per_case = dollars / priced cases. Only
the cases both runs hold (by case id) count, so both sides are measured on the same
cases. The bootstrap draws those cases with replacement ROUNDS times (seeded: the same
report gives the same verdict; `grade.bootstrap` draws counts of distinct cases, so when
they take few distinct values, as a pass rate's at most 4, a draw costs the same on 500
cases as on 500,000), computes candidate - baseline on each draw, and takes the central
95 % of the differences as the interval. Better: the interval lies wholly on the metric's
good side of 0; worse: wholly on the bad side; otherwise not significantly
different (so +2 points on 40 cases is usually not a win). Fewer than MIN_CASES shared
cases: no verdict.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from toolproxy.grade.bootstrap import differences
from toolproxy.grade.metrics import SPECS, CaseRecord

ROUNDS = 2000
MIN_CASES = 5
LEVEL = 0.95

Verdict = Literal["better", "worse", "not significantly different", "no verdict"]
PerCase = Callable[[CaseRecord, float | None], tuple[float, float]]  # (numerator, denominator)


def _args(c: CaseRecord, bucket: str) -> tuple[float, float]:
    args = [a for call in c.grade.calls for a in call.args if a.bucket != "not_graded"]
    return float(sum(a.bucket == bucket for a in args)), float(len(args))


def _graded(c: CaseRecord) -> float:
    return 0.0 if c.grade.not_graded else 1.0


PER_CASE: dict[str, PerCase] = {
    "pass_rate": lambda c, _: (float(c.grade.passed) * _graded(c), _graded(c)),
    "selection_accuracy": lambda c, _: (
        float(set(c.grade.called_tools) == set(c.grade.expected_tools)) * _graded(c),
        _graded(c),
    ),
    "hallucination_rate": lambda c, _: _args(c, "hallucinated"),
    "omission_rate": lambda c, _: _args(c, "missing"),
    "format_error_rate": lambda c, _: _args(c, "malformed"),
    "cost_per_case": lambda c, cost: (cost or 0.0, 0.0 if cost is None else 1.0),
}
DIRECTION = {m: SPECS[m].direction for m in PER_CASE if m in SPECS} | {"cost_per_case": "lower"}


class MetricVerdict(BaseModel):
    """One candidate vs the baseline on one metric."""

    run: str
    metric: str
    cases: int = Field(description="case ids both runs hold")
    baseline: float | None
    value: float | None
    delta: float | None = Field(description="value - baseline on the shared cases")
    low: float | None = Field(description="95 % bootstrap interval of the delta")
    high: float | None
    verdict: Verdict


def _ratio(pairs: Sequence[tuple[float, float]]) -> float | None:
    den = sum(d for _, d in pairs)
    return sum(n for n, _ in pairs) / den if den else None


def compare(
    run: str,
    metric: str,
    base: Mapping[str, tuple[float, float]],
    cand: Mapping[str, tuple[float, float]],
    seed: int = 0,
    rounds: int = ROUNDS,
) -> MetricVerdict:
    """The verdict on one metric from per-case (numerator, denominator) pairs by case id."""
    ids = sorted(set(base) & set(cand))
    b = _ratio([base[i] for i in ids])
    v = _ratio([cand[i] for i in ids])
    delta = None if b is None or v is None else v - b
    diffs: list[float] = []
    if len(ids) >= MIN_CASES and delta is not None:
        rng = random.Random(f"{seed}:{run}:{metric}")
        diffs = differences([(*base[i], *cand[i]) for i in ids], rounds, rng)
    if not diffs:  # too few cases, nothing to divide by, or no draw with a denominator
        return MetricVerdict(
            run=run, metric=metric, cases=len(ids), baseline=b, value=v, delta=delta,
            low=None, high=None, verdict="no verdict",
        )  # fmt: skip
    diffs.sort()
    tail = (1 - LEVEL) / 2
    low = diffs[int(tail * (len(diffs) - 1))]
    high = diffs[int((1 - tail) * (len(diffs) - 1))]
    good_up = DIRECTION[metric] == "higher"
    verdict: Verdict = "not significantly different"
    if low > 0 or high < 0:
        verdict = "better" if (low > 0) == good_up else "worse"
    return MetricVerdict(
        run=run, metric=metric, cases=len(ids), baseline=b, value=v, delta=delta,
        low=low, high=high, verdict=verdict,
    )  # fmt: skip


def verdicts(
    cases: Mapping[str, Sequence[CaseRecord]],
    baseline: str,
    metrics: Sequence[str],
    costs: Mapping[str, Mapping[str, float | None]] | None = None,
    seed: int = 0,
) -> list[MetricVerdict]:
    """Each run but the baseline against it on each of `metrics` that has a per-case form
    (`costs`: run -> case id -> dollars, for cost_per_case)."""

    def pairs(run: str, metric: str) -> dict[str, tuple[float, float]]:
        f = PER_CASE[metric]
        money = (costs or {}).get(run, {})
        return {c.grade.case_id: f(c, money.get(c.grade.case_id)) for c in cases[run]}

    wanted = [m for m in metrics if m in PER_CASE]
    return [
        compare(run, m, pairs(baseline, m), pairs(run, m), seed)
        for run in cases
        if run != baseline
        for m in wanted
    ]
