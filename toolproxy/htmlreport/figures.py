"""What the HTML report's charts show, taken out of a report and its cases (pure): rates
per run, failing cases per label, each run's confusion matrix, latency and time-to-first-
byte samples, cost per run. `charts` turns these into plotly figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from toolproxy.grade.confusionfold import shown_confusion
from toolproxy.grade.labels import PRECEDENCE
from toolproxy.grade.metrics import CaseRecord
from toolproxy.grade.report import Report

RATES = (
    ("pass_rate", "pass rate"),
    ("selection_accuracy", "selection accuracy"),
    ("hallucination_rate", "hallucination rate"),
    ("omission_rate", "omission rate"),
    ("format_error_rate", "format error rate"),
)


@dataclass
class Chart:
    """One chart of the page: its element id, section, heading, the plotly figure (JSON)
    and a note under it."""

    id: str
    section: str
    title: str
    figure_json: str
    note: str = ""


@dataclass
class Confusion:
    """A run's confusion matrix: rows expected tools, columns called ones (`(none)` last)."""

    run: str
    expected: list[str]
    called: list[str]
    counts: list[list[int]]


@dataclass
class Timings:
    """A run's samples, in milliseconds, of the exchanges its cases graded."""

    run: str
    ttfb_ms: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)


@dataclass
class RunCostBar:
    """A run's cost, when any of its cases was priced."""

    run: str
    per_case: float | None
    total: float | None
    priced: int
    unpriced: int


def run_name(report: Report, run: str) -> str:
    """The run as charts name it: the baseline says so."""
    return f"{run} (baseline)" if run == report.baseline else run


def rates(report: Report) -> dict[str, dict[str, float | None]]:
    """Per run, the headline rates (None: not defined for the run)."""
    return {
        run: {title: getattr(report.metrics[run], key) for key, title in RATES}
        for run in report.runs
    }


def label_counts(report: Report) -> dict[str, dict[str, int]]:
    """Per label that any run earned (in precedence order), failing cases per run."""
    out: dict[str, dict[str, int]] = {}
    for label in PRECEDENCE:
        counts = {run: report.metrics[run].label_counts.get(label, 0) for run in report.runs}
        if any(counts.values()):
            out[label] = counts
    return out


def confusion(report: Report, run: str) -> Confusion:
    expected, called, counts = shown_confusion(report.metrics[run].confusion)
    return Confusion(run=run, expected=expected, called=called, counts=counts)


def timings(cases: Mapping[str, Sequence[CaseRecord]]) -> list[Timings]:
    """Each run's time to first byte and whole-response latency, over its recorded cases."""
    out = []
    for run, records in cases.items():
        t = Timings(run=run)
        for c in records:
            if c.ttfb_ms is not None:
                t.ttfb_ms.append(c.ttfb_ms)
            if c.call is not None and c.call.duration_ms is not None:
                t.latency_ms.append(c.call.duration_ms)
        out.append(t)
    return out


def cost_bars(report: Report) -> list[RunCostBar]:
    """Each run's cost per case and in total (None where nothing was priced)."""
    return [
        RunCostBar(
            run=run,
            per_case=cost.cost_per_case,
            total=cost.cost_total,
            priced=cost.priced_cases,
            unpriced=cost.unpriced_cases,
        )
        for run in report.runs
        if (cost := report.costs.get(run)) is not None
    ]
