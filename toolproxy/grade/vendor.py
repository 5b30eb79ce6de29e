"""Vendor metrics over runs of the same cases, and the Inverse Rank Fusion score. Pure.

Runs are compared case by case (`CaseRecord`s keyed by case id). Definitions (also in
docs/grading.md); a mean or rate with nothing to average is None ("n/a"):

* Trigger (tool-call decision) against a chosen baseline run. A case is *positive* when
  its turn finished with tool calls (`called_tools` not empty). Over the case ids both the
  run and the baseline observed (a turn that never happened decides nothing; see
  `metrics.UNOBSERVED`), the baseline's decision is the reference: TP = both
  positive, FP = run positive / baseline negative, FN = run negative / baseline positive.
  precision = TP / (TP + FP), recall = TP / (TP + FN), F1 = 2PR / (P + R).
  0/0 rules: with no predicted positives precision is 1.0 when the baseline has no
  positives either, else 0.0; with no reference positives recall is 1.0 when the run has
  no positives either, else 0.0; F1 is 0.0 when P + R = 0. No shared cases, or no
  baseline chosen: all three None. The baseline against itself scores 1.0.
* success_rate = passed / graded cases (the run's pass rate; not_graded excluded).
* schema_accuracy = schema-valid calls / calls, over every `CallGrade` with an
  `actual_tool` (a call was emitted). A call is schema-valid when its `stage_failed` is
  neither `parse` nor `schema` (a call stopped at selection counts valid: its arguments
  were not at fault).
* avg_tokens = mean of input_tokens + output_tokens per case, over cases where at least
  one is known (an unknown one counts 0). avg_ttft_ms = mean ttfb_ms, tps = mean
  decode_tps, each over cases where it is known.
* irf_score (Inverse Rank Fusion). For each metric in IRF_METRICS, the runs that have a
  value are ranked in the metric's direction (higher-better: trigger_f1, success_rate,
  schema_accuracy, tps; lower-better: avg_tokens, avg_ttft_ms). Ties (values within
  1e-9) share the best rank ("competition" ranking: 1, 1, 3). A run contributes
  1 / (rank + IRF_K), IRF_K = 5, per metric; runs missing a metric get nothing for it;
  the score is the sum. Note that the baseline's trigger_f1 is 1.0 by construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean

from pydantic import BaseModel, Field

from toolproxy.grade.metrics import CaseRecord, MetricSpec, ratio

IRF_K = 5
TIE_EPS = 1e-9

SPECS: dict[str, MetricSpec] = {
    "trigger_precision": MetricSpec("higher", True, "tool-call decisions vs baseline"),
    "trigger_recall": MetricSpec("higher", True, "tool-call decisions vs baseline"),
    "trigger_f1": MetricSpec("higher", True, "tool-call decisions vs baseline"),
    "success_rate": MetricSpec("higher", True, "passed / graded cases"),
    "schema_accuracy": MetricSpec("higher", True, "schema-valid calls / calls"),
    "avg_tokens": MetricSpec("lower", False, "input + output tokens per case"),
    "avg_ttft_ms": MetricSpec("lower", False, "mean time to first byte (ms)"),
    "tps": MetricSpec("higher", False, "mean decode tokens per second"),
    "irf_score": MetricSpec("higher", False, "Inverse Rank Fusion over IRF_METRICS"),
}
IRF_METRICS = ("trigger_f1", "success_rate", "schema_accuracy", "avg_tokens", "avg_ttft_ms", "tps")


class Trigger(BaseModel):
    """A run's tool-call decisions against the baseline's."""

    shared: int = Field(description="case ids both runs observed")
    tp: int = Field(description="both called tools")
    fp: int = Field(description="run called, baseline did not")
    fn: int = Field(description="baseline called, run did not")
    tn: int = Field(description="neither called")
    precision: float | None
    recall: float | None
    f1: float | None


class VendorMetrics(BaseModel):
    """One run's vendor metrics, its IRF ranks and score."""

    run: str
    cases: int
    trigger: Trigger | None = Field(description="None without a baseline")
    trigger_precision: float | None
    trigger_recall: float | None
    trigger_f1: float | None
    success_rate: float | None
    calls: int = Field(description="calls emitted (CallGrades with an actual tool)")
    schema_valid: int = Field(description="of those, not failed at parse or schema")
    schema_accuracy: float | None
    avg_tokens: float | None
    avg_ttft_ms: float | None
    tps: float | None
    ranks: dict[str, int] = Field(default_factory=dict, description="IRF rank per metric")
    irf_score: float = Field(default=0.0, description="sum of 1 / (rank + IRF_K)")

    def values(self) -> dict[str, float | None]:
        """The gateable metrics (SPECS) by name."""
        return {name: getattr(self, name) for name in SPECS}


def compare_triggers(run: Sequence[CaseRecord], baseline: Sequence[CaseRecord]) -> Trigger:
    """Trigger precision/recall/F1 of `run` with `baseline`'s decisions as reference."""
    ref = {c.grade.case_id: bool(c.grade.called_tools) for c in baseline if c.observed}
    got = {c.grade.case_id: bool(c.grade.called_tools) for c in run if c.observed}
    shared = [k for k in got if k in ref]
    tp = sum(got[k] and ref[k] for k in shared)
    fp = sum(got[k] and not ref[k] for k in shared)
    fn = sum(ref[k] and not got[k] for k in shared)
    if not shared:
        return Trigger(shared=0, tp=0, fp=0, fn=0, tn=0, precision=None, recall=None, f1=None)
    precision = tp / (tp + fp) if tp + fp else (1.0 if tp + fn == 0 else 0.0)
    recall = tp / (tp + fn) if tp + fn else (1.0 if tp + fp == 0 else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    tn = len(shared) - tp - fp - fn
    return Trigger(
        shared=len(shared), tp=tp, fp=fp, fn=fn, tn=tn, precision=precision, recall=recall, f1=f1
    )


def mean(values: Sequence[float | None]) -> float | None:
    """The mean of the known values (None when there are none)."""
    known = [v for v in values if v is not None]
    return fmean(known) if known else None


def vendor_metrics(
    run: str, cases: Sequence[CaseRecord], baseline: Sequence[CaseRecord] | None
) -> VendorMetrics:
    """One run's vendor metrics (IRF fields are filled by `fuse_ranks`)."""
    graded = [c.grade for c in cases if not c.grade.not_graded]
    emitted = [call for c in cases for call in c.grade.calls if call.actual_tool is not None]
    valid = sum(call.stage_failed not in ("parse", "schema") for call in emitted)
    trigger = compare_triggers(cases, baseline) if baseline is not None else None
    tokens = [
        (c.input_tokens or 0) + (c.output_tokens or 0)
        for c in cases
        if c.input_tokens is not None or c.output_tokens is not None
    ]
    return VendorMetrics(
        run=run,
        cases=len(cases),
        trigger=trigger,
        trigger_precision=trigger.precision if trigger else None,
        trigger_recall=trigger.recall if trigger else None,
        trigger_f1=trigger.f1 if trigger else None,
        success_rate=ratio(sum(g.passed for g in graded), len(graded)),
        calls=len(emitted),
        schema_valid=valid,
        schema_accuracy=ratio(valid, len(emitted)),
        avg_tokens=mean([float(t) for t in tokens]),
        avg_ttft_ms=mean([c.ttfb_ms for c in cases]),
        tps=mean([c.decode_tps for c in cases]),
    )


def competition_ranks(values: Mapping[str, float], higher_better: bool) -> dict[str, int]:
    """Rank 1 = best; equal values (within TIE_EPS) share the lowest rank (1, 1, 3)."""
    sign = 1.0 if higher_better else -1.0
    return {
        name: 1 + sum(sign * (other - v) > TIE_EPS for other in values.values())
        for name, v in values.items()
    }


def fuse_ranks(runs: Sequence[VendorMetrics]) -> list[VendorMetrics]:
    """Copies of `runs` with IRF ranks and score filled in."""
    out = [r.model_copy(update={"ranks": {}, "irf_score": 0.0}) for r in runs]
    for metric in IRF_METRICS:
        known = {r.run: v for r in out if (v := getattr(r, metric)) is not None}
        ranks = competition_ranks(known, SPECS[metric].direction == "higher")
        for r in out:
            if r.run in ranks:
                r.ranks[metric] = ranks[r.run]
                r.irf_score += 1 / (ranks[r.run] + IRF_K)
    return out


def compare_runs(
    runs: Mapping[str, Sequence[CaseRecord]], baseline: str | None = None
) -> list[VendorMetrics]:
    """Vendor metrics of every run (in the mapping's order), ranked and fused."""
    ref = runs.get(baseline) if baseline is not None else None
    if baseline is not None and ref is None:
        raise KeyError(f"baseline run {baseline!r} is not among the runs")
    return fuse_ranks([vendor_metrics(name, cases, ref) for name, cases in runs.items()])
