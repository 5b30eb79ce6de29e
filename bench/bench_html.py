"""What `report --html` adds to `toolproxy report`: the report and its tables (what any
report computes) vs the same plus the charts and the page, side by side in one run.

Two runs of N cases each (a third failing, a tenth over-tooled; `bench_cost`'s cases, with
a time to first byte and a latency each), the second against the first as baseline.

* report: `build_report` + `build_tables` (terminal, CSV, JSON and Markdown start here);
* report, drawing indices (before): the same report with the paired bootstrap drawn as it
  was before `grade.bootstrap` (n case indices a draw, not counts of distinct cases);
* charts: the plotly figures for rates, labels, confusion, latency, cost, of that report;
* page: the whole HTML page, plotly.js embedded.

Run: .venv/bin/python bench/bench_html.py [--cases 50000]
Prints each step's time relative to the report and the page's size.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from bench_cost import cases, median_time

from toolproxy.grade import bootstrap
from toolproxy.grade.report import build_report, build_tables
from toolproxy.htmlreport.charts import build_charts, plotly_js
from toolproxy.htmlreport.page import render_page


def drawing_indices(build: Callable[[], Any]) -> Any:
    """`build()` with the bootstrap drawing n case indices a draw, as it did before
    `grade.bootstrap` drew counts of distinct cases."""
    original = bootstrap.BINOMIAL_COST
    bootstrap.BINOMIAL_COST = 10**12  # every set of rows counts as mostly distinct
    try:
        return build()
    finally:
        bootstrap.BINOMIAL_COST = original


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    runs = {}
    for shift, run in enumerate(("base", "cand")):
        records = cases(args.cases, distinct=False)
        for i, c in enumerate(records):
            c.run, c.ttfb_ms = run, 80.0 + i % 50
            # the candidate's case c{i} is the baseline's c{i-1}: the same rates, but the
            # runs disagree case by case, so the bootstrap's intervals have a width
            c.grade.case_id = f"c{(i + shift) % args.cases}"
            if c.call is not None:
                c.call = c.call._replace(duration_ms=400.0 + i % 300)
        runs[run] = records
    js = plotly_js()
    made: list = []

    def report() -> None:
        built = build_report(runs, {}, baseline="base")
        made[:] = [built, build_tables(built)]

    base = median_time(report, 1)
    built, tables = made
    before: list = []
    with_indices = median_time(
        lambda: before.append(drawing_indices(lambda: build_report(runs, {}, baseline="base"))), 1
    )
    charts = build_charts(built, runs)
    page = render_page(built, tables, charts, js)
    results = {
        "report + tables (once)": base,
        "report, drawing indices (before)": with_indices,
        "charts (plotly figures)": median_time(lambda: build_charts(built, runs), args.rounds),
        "page (HTML, plotly.js)": median_time(
            lambda: render_page(built, tables, charts, js), args.rounds
        ),
    }
    size = len(page.encode())
    print(f"2 runs x {args.cases:,} cases; steps after the report: median of {args.rounds} "
          f"rounds; page {size / 1e6:.2f} MB ({len(js) / 1e6:.2f} MB of it plotly.js)")  # fmt: skip
    for name, seconds in results.items():
        print(f"  {name:34} {seconds:8.3f} s  {seconds / base:6.3f}x")
    print("95 % intervals of the delta, drawing counts | drawing indices (same distribution):")
    for counted, indexed in zip(built.verdicts, before[0].verdicts, strict=True):
        print(f"  {counted.metric:20} {interval(counted)} | {interval(indexed)}")


def interval(v: Any) -> str:
    if v.low is None:
        return f"{v.verdict:>28}"
    return f"[{v.low:+.4f}, {v.high:+.4f}] {SHORT.get(v.verdict, v.verdict):>10}"


SHORT = {"not significantly different": "n.s."}


if __name__ == "__main__":
    main()
