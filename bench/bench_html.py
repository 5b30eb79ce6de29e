"""What `report --html` adds to `toolproxy report`: the report and its tables (what any
report computes) vs the same plus the charts and the page, side by side in one run.

Two runs of N cases each (a third failing, a tenth over-tooled; `bench_cost`'s cases, with
a time to first byte and a latency each), the second against the first as baseline.

* report: `build_report` + `build_tables` (terminal, CSV, JSON and Markdown start here);
* charts: the plotly figures for rates, labels, confusion, latency, cost, of that report;
* page: the whole HTML page, plotly.js embedded.

Run: .venv/bin/python bench/bench_html.py [--cases 50000]
Prints each step's time relative to the report and the page's size.
"""

from __future__ import annotations

import argparse

from bench_cost import cases, median_time

from toolproxy.grade.report import build_report, build_tables
from toolproxy.htmlreport.charts import build_charts, plotly_js
from toolproxy.htmlreport.page import render_page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    runs = {}
    for run in ("base", "cand"):
        records = cases(args.cases, distinct=False)
        for i, c in enumerate(records):
            c.run, c.ttfb_ms = run, 80.0 + i % 50
            if c.call is not None:
                c.call = c.call.model_copy(update={"duration_ms": 400.0 + i % 300})
        runs[run] = records
    js = plotly_js()
    made: list = []

    def report() -> None:
        built = build_report(runs, {}, baseline="base")
        made[:] = [built, build_tables(built)]

    base = median_time(report, 1)  # the bootstrap verdicts make it the slow step
    built, tables = made
    charts = build_charts(built, runs)
    page = render_page(built, tables, charts, js)
    results = {
        "report + tables (once)": base,
        "charts (plotly figures)": median_time(lambda: build_charts(built, runs), args.rounds),
        "page (HTML, plotly.js)": median_time(
            lambda: render_page(built, tables, charts, js), args.rounds
        ),
    }
    size = len(page.encode())
    print(f"2 runs x {args.cases:,} cases; steps after the report: median of {args.rounds} "
          f"rounds; page {size / 1e6:.2f} MB ({len(js) / 1e6:.2f} MB of it plotly.js)")  # fmt: skip
    for name, seconds in results.items():
        print(f"  {name:28} {seconds:8.3f} s  {seconds / base:6.3f}x")


if __name__ == "__main__":
    main()
