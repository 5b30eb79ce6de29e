"""The plotly figures of a real report: one per section's subject, each holding the data
the figures module took out of the report."""

from __future__ import annotations

import json

from toolproxy.htmlreport.charts import build_charts, plotly_js
from toolproxy.htmlreport.figures import confusion


def figures(report, cases):
    return {c.id: (c, json.loads(c.figure_json)) for c in build_charts(report, cases)}


def test_every_chart_has_a_unique_id_and_a_section(report, cases):
    charts = build_charts(report, cases)
    assert [c.id for c in charts] == [
        "chart-rates", "chart-labels", "chart-confusion-0", "chart-confusion-1", "chart-ttfb",
        "chart-latency", "chart-cost",
    ]  # fmt: skip
    assert [c.section for c in charts] == ["Metrics", "Metrics", *["Confusion matrices"] * 2,
                                           "Latency", "Latency", "Cost"]  # fmt: skip


def test_the_heatmap_is_the_confusion_matrix(report, cases):
    _, fig = figures(report, cases)["chart-confusion-1"]
    (trace,) = fig["data"]
    c = confusion(report, "g2")
    assert trace["type"] == "heatmap"
    assert (trace["z"], trace["x"], trace["y"]) == (c.counts, c.called, c.expected)


def test_bars_name_the_baseline_and_stack_labels(report, cases):
    _, fig = figures(report, cases)["chart-rates"]
    assert [t["name"] for t in fig["data"]] == ["g1 (baseline)", "g2"]
    _, labels = figures(report, cases)["chart-labels"]
    (no_call,) = labels["data"]
    assert no_call["name"] == "no_call" and list(no_call["y"]) == [0, 1]
    assert labels["layout"]["barmode"] == "stack"


def test_latency_boxes_hold_every_sample(report, cases):
    _, fig = figures(report, cases)["chart-ttfb"]
    assert [(t["type"], t["name"], list(t["y"])) for t in fig["data"]] == [
        ("box", "g1 (baseline)", [100.0]),
        ("box", "g2", [100.0]),
    ]


def test_a_chart_with_nothing_to_draw_says_why(report, cases):
    chart, fig = figures(report, cases)["chart-cost"]
    assert "Not priced" in chart.note  # the seeded models are in no price list
    assert fig["layout"]["annotations"][0]["text"] == chart.note


def test_plotly_js_is_embedded_whole():
    js = plotly_js()
    assert len(js) > 1_000_000 and "newPlot" in js


def test_many_samples_make_a_box_of_statistics_not_of_points(monkeypatch):
    from toolproxy.htmlreport import charts

    values = [float(v) for v in range(1, 101)] + [1000.0]  # one outlier
    drawn = charts._box(values, "r")
    assert list(drawn.y) == values and drawn.boxpoints == "all"
    monkeypatch.setattr(charts, "POINTS_DRAWN", 10)
    box = charts._box(values, "r")
    assert box.y is None
    assert (box.q1[0], box.median[0], box.q3[0]) == (26.0, 51.0, 76.0)
    assert box.lowerfence[0] == 1.0 and box.upperfence[0] == 100.0  # 1000 is beyond


def test_a_box_of_statistics_is_not_an_empty_chart(report, cases, monkeypatch):
    from toolproxy.htmlreport import charts

    monkeypatch.setattr(charts, "POINTS_DRAWN", 3)  # more samples: the box's statistics
    many = {
        run: [records[0].model_copy(update={"ttfb_ms": float(v)}) for v in range(1, 6)]
        for run, records in cases.items()
    }
    _, fig = figures(report, many)["chart-ttfb"]
    assert [(t.get("y"), t["median"]) for t in fig["data"]] == [(None, [3.0]), (None, [3.0])]
    assert "annotations" not in fig["layout"]
