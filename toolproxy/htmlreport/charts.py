"""The HTML report's charts as plotly figures (the only module that imports plotly), and
plotly.js itself, embedded so the page opens without a network."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from toolproxy.grade.metrics import CaseRecord
from toolproxy.grade.report import Report
from toolproxy.htmlreport.figures import (
    Chart,
    confusion,
    cost_bars,
    label_counts,
    rates,
    run_name,
    timings,
)

POINTS_DRAWN = 2_000  # samples per run a box shows one by one
LAYOUT = {
    "template": "plotly_white",
    "margin": {"l": 60, "r": 20, "t": 40, "b": 60},
    "height": 380,
    "font": {"family": "system-ui, sans-serif", "size": 12},
}


def plotly_js() -> str:
    """plotly.js, minified, as the installed plotly package ships it."""
    return get_plotlyjs()


def _chart(
    id: str, section: str, title: str, fig: go.Figure, note: str = "", empty: bool = False
) -> Chart:
    """The figure laid out; an `empty` one says why (`note`) inside its frame."""
    fig.update_layout(**LAYOUT)
    if empty:
        fig.add_annotation(text=note or "nothing to show", showarrow=False, font={"size": 14},
                           xref="paper", yref="paper", x=0.5, y=0.5)  # fmt: skip
        fig.update_layout(xaxis={"visible": False}, yaxis={"visible": False})
    return Chart(f"chart-{id}", section, title, fig.to_json(), note)


def build_charts(report: Report, cases: Mapping[str, Sequence[CaseRecord]]) -> list[Chart]:
    """Every chart of the report, in page order."""
    charts = [_rates(report), _labels(report)]
    charts += [_confusion(report, run, i) for i, run in enumerate(report.runs)]
    charts += _timings(report, cases)
    charts.append(_cost(report))
    return charts


def _rates(report: Report) -> Chart:
    fig = go.Figure()
    drawn = 0
    for run, values in rates(report).items():
        shown = {k: v for k, v in values.items() if v is not None}
        fig.add_bar(name=run_name(report, run), x=list(shown), y=list(shown.values()))
        drawn += len(shown)
    fig.update_layout(barmode="group", yaxis={"range": [0, 1], "tickformat": ".0%"})
    note = "Higher is better for pass rate and selection accuracy; lower for the error rates."
    return _chart("rates", "Metrics", "Headline rates per run", fig, note, empty=not drawn)


def _labels(report: Report) -> Chart:
    fig = go.Figure()
    counts = label_counts(report)
    for label, per_run in counts.items():
        fig.add_bar(name=label, x=[run_name(report, r) for r in per_run], y=list(per_run.values()))
    fig.update_layout(barmode="stack", yaxis={"title": {"text": "failing cases"}})
    note = "" if counts else "No run has a failing case."
    return _chart("labels", "Metrics", "Failing cases per label", fig, note, empty=not counts)


def _confusion(report: Report, run: str, i: int) -> Chart:
    c = confusion(report, run)
    fig = go.Figure(
        go.Heatmap(
            z=c.counts,
            x=c.called,
            y=c.expected,
            colorscale="Blues",
            texttemplate="%{z}",
            hovertemplate="expected %{y}, called %{x}: %{z}<extra></extra>",
        )  # fmt: skip
    )
    fig.update_layout(
        xaxis={"title": {"text": "called"}, "type": "category"},
        yaxis={"title": {"text": "expected"}, "type": "category", "autorange": "reversed"},
        height=max(300, 80 + 40 * len(c.expected)),
    )
    title = f"Confusion matrix: {run_name(report, run)}"
    empty = not any(map(any, c.counts))
    return _chart(f"confusion-{i}", "Confusion matrices", title, fig, "No graded case.", empty)


def _timings(report: Report, cases: Mapping[str, Sequence[CaseRecord]]) -> list[Chart]:
    samples = timings(cases)
    out = []
    for key, title, id in (
        ("ttfb_ms", "Time to first byte (ms)", "ttfb"),
        ("latency_ms", "Latency, request start to response end (ms)", "latency"),
    ):
        fig = go.Figure()
        empty = []
        for t in samples:
            values = getattr(t, key)
            if not values:
                empty.append(t.run)
                continue
            fig.add_trace(_box(values, run_name(report, t.run)))
        fig.update_layout(showlegend=False, yaxis={"title": {"text": "ms"}, "rangemode": "tozero"})
        note = f"Not recorded for: {', '.join(empty)}." if empty else ""
        out.append(_chart(id, "Latency", title, fig, note, empty=len(empty) == len(samples)))
    return out


def _box(values: list[float], name: str) -> go.Box:
    """Every sample drawn while there are few; beyond POINTS_DRAWN, the box's statistics
    computed here (the page stays small and quick however many cases a run has)."""
    if len(values) <= POINTS_DRAWN:
        return go.Box(y=values, name=name, boxpoints="all", jitter=0.4, pointpos=0,
                      marker={"size": 4})  # fmt: skip
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    low, high = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    return go.Box(
        x=[name], name=name, q1=[q1], median=[median], q3=[q3], mean=[statistics.fmean(values)],
        lowerfence=[min(v for v in values if v >= low)],
        upperfence=[max(v for v in values if v <= high)],
    )  # fmt: skip


def _cost(report: Report) -> Chart:
    bars = cost_bars(report)
    priced = [b for b in bars if b.per_case is not None]
    fig = go.Figure()
    fig.add_bar(
        x=[run_name(report, b.run) for b in priced],
        y=[b.per_case for b in priced],
        text=[f"${b.per_case:.6f}/case, ${b.total or 0:.4f} in all" for b in priced],
        textposition="auto",
    )
    fig.update_layout(yaxis={"title": {"text": "dollars per case"}, "rangemode": "tozero"})
    unpriced = [f"{b.run} ({b.unpriced} cases)" for b in bars if b.unpriced]
    note = f"Not priced: {', '.join(unpriced)}." if unpriced else ""
    if report.prices:
        note = f"{note} Prices: {report.prices}.".strip()
    return _chart("cost", "Cost", "Cost per case, per candidate", fig, note, empty=not priced)
