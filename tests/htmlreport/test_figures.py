"""What the charts show, out of a real report of the seeded capture."""

from __future__ import annotations

from toolproxy.htmlreport.figures import (
    confusion,
    cost_bars,
    label_counts,
    rates,
    run_name,
    timings,
)


def test_the_baseline_says_so(report):
    assert run_name(report, "g1") == "g1 (baseline)"
    assert run_name(report, "g2") == "g2"


def test_rates_per_run(report):
    got = rates(report)
    assert list(got) == ["g1", "g2"]
    assert got["g1"]["pass rate"] == report.metrics["g1"].pass_rate == 1.0
    assert got["g2"]["pass rate"] == 0.0


def test_only_labels_some_run_earned(report):
    assert label_counts(report) == {"no_call": {"g1": 0, "g2": 1}}


def test_confusion_rows_expected_columns_called(report):
    c = confusion(report, "g1")
    assert c.expected[-1] == "(none)" and c.called[-1] == "(none)"
    conf = report.metrics["g1"].confusion
    for i, e in enumerate(c.expected):
        for j, k in enumerate(c.called):
            assert c.counts[i][j] == conf.get(e, {}).get(k, 0)
    assert sum(map(sum, c.counts)) == report.metrics["g1"].graded


def test_timings_are_the_graded_exchanges(cases):
    got = {t.run: t for t in timings(cases)}
    assert got["g1"].ttfb_ms == [100.0]  # a-0 (b-0's exchange has no timing)
    assert len(got["g1"].latency_ms) == len(
        [c for c in cases["g1"] if c.call and c.call.duration_ms is not None]
    )


def test_cost_bars_follow_the_report(report):
    bars = {b.run: b for b in cost_bars(report)}
    assert set(bars) == {"g1", "g2"}
    for run, bar in bars.items():
        assert bar.per_case == report.costs[run].cost_per_case
        assert bar.priced + bar.unpriced == report.costs[run].priced_cases + (
            report.costs[run].unpriced_cases
        )
