"""Report sections that stand on their own: the `Table` every section is, the cost tables
and the calls lost in text. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from toolproxy.grade.cost import RunCost
from toolproxy.grade.metrics import RunMetrics
from toolproxy.grade.verdict import MetricVerdict


class Table(BaseModel):
    """One section of the report, rendered as a terminal table and as Markdown."""

    title: str
    columns: list[str]
    rows: list[list[Any]]


def money(value: float | None) -> str:
    """Dollars: six decimals under a cent, four above; n/a for unknown."""
    return "n/a" if value is None else f"${value:.6f}" if value < 0.01 else f"${value:,.4f}"


def _rate(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def na(value: Any) -> Any:
    """The value, or "n/a" for an unknown one."""
    return "n/a" if value is None else value


def cost_tables(
    runs: Sequence[str],
    heads: Sequence[str],
    costs: Mapping[str, RunCost],
    baseline: str | None,
    prices: str | None,
) -> list[Table]:
    """Cost per run (with the delta against the baseline) and how each model was priced."""

    def delta(r: str) -> str:
        d = costs[r].cost_delta
        return "n/a" if d is None else f"{d:+.1%}"

    c = costs
    rows: list[list[Any]] = [
        ["priced cases", *(c[r].priced_cases for r in runs)],
        ["unpriced cases", *(c[r].unpriced_cases for r in runs)],
        ["cost_total", *(money(c[r].cost_total) for r in runs)],
        ["cost_per_case", *(money(c[r].cost_per_case) for r in runs)],
        ["cost_per_passed", *(money(c[r].cost_per_passed) for r in runs)],
    ]
    if baseline:
        rows.append([f"per case vs {baseline}", *(delta(r) for r in runs)])
    rows += [
        ["over-tooling tokens", *(na(c[r].over_tooling_tokens) for r in runs)],
        ["over-tooling cost", *(money(c[r].over_tooling_cost) for r in runs)],
    ]
    priced = [
        [r, u.model or "(none)", u.endpoint, u.how, _rate(u.input_per_mtok),
         _rate(u.output_per_mtok), u.cases, money(u.cost)]
        for r in runs for u in c[r].prices
    ]  # fmt: skip
    return [
        Table(title=f"Cost (prices: {prices})", columns=["metric", *heads], rows=rows),
        Table(
            title="How each model was priced ($ per million tokens)",
            columns=["run", "model", "endpoint", "priced by", "in", "out", "cases", "cost"],
            rows=priced,
        ),
    ]


def lost_in_text(runs: Sequence[str], metrics: Mapping[str, RunMetrics]) -> Table:
    """no_call cases whose text held calls a server's parser lost: per run and format, and
    how many of those calls would have passed ("the model chose right, the server lost it")."""
    rows = []
    for r in runs:
        m = metrics[r]
        if m.leaked_no_calls:
            formats = ", ".join(f"{f} {n}" for f, n in m.leaked_formats.items())
            rows.append([r, m.leaked_no_calls, formats, m.leaked_would_pass])
    return Table(
        title="Tool calls lost in text (no_call; the server returned the call as text)",
        columns=["run", "no_call cases", "formats", "would have passed"],
        rows=rows,
    )


def verdict_table(verdicts: Sequence[MetricVerdict], baseline: str) -> Table:
    """Each candidate against the baseline: delta, its 95 % interval, the verdict."""

    def num(v: float | None, metric: str) -> str:
        if v is None:
            return "n/a"
        return money(v) if metric.startswith("cost") else f"{v:.3f}"

    def signed(v: float | None, metric: str) -> str:
        if v is None:
            return "n/a"
        return f"{v:+.6f}" if metric.startswith("cost") else f"{v:+.3f}"

    rows = [
        [v.run, v.metric, v.cases, num(v.baseline, v.metric), num(v.value, v.metric),
         signed(v.delta, v.metric),
         "n/a" if v.low is None else f"[{signed(v.low, v.metric)}, {signed(v.high, v.metric)}]",
         v.verdict]
        for v in verdicts
    ]  # fmt: skip
    return Table(
        title=f"Verdict against {baseline} (paired bootstrap over shared cases, 95 %)",
        columns=["run", "metric", "cases", baseline, "run value", "delta", "interval", "verdict"],
        rows=rows,
    )
