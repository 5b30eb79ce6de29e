"""The page: tables with the baseline's column marked, charts as data, the gallery, and
nothing from the capture able to run as script."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from toolproxy.grade.gallery import Transcript, TranscriptCall
from toolproxy.grade.sections import Table
from toolproxy.htmlreport.charts import build_charts
from toolproxy.htmlreport.figures import Chart
from toolproxy.htmlreport.page import render_gallery, render_page, render_table

HOSTILE = "</script><script>alert(1)</script>"


def page(report, tables, charts, **kw):
    return render_page(
        report, tables, charts, "/*plotly*/", generated=datetime(2026, 1, 1, tzinfo=UTC), **kw
    )  # noqa: E501


def test_the_baseline_column_is_marked(report, tables):
    html = render_table(tables[0], report.baseline)
    assert '<th class="baseline">g1</th>' in html and "<th>g2</th>" in html
    row = re.search(r"<tr><td>pass_rate</td>(.*?)</tr>", html)
    assert row and row.group(1).startswith('<td class="baseline num">1</td>')


def test_floats_read_like_the_terminal_s():
    html = render_table(Table(title="t", columns=["m", "r"], rows=[["x", 0.8888888]]), None)
    assert '<td class="num">0.889</td>' in html


def test_the_page_has_every_section_and_figure(report, tables, cases):
    charts = build_charts(report, cases)
    html = page(report, tables, charts)
    for anchor in ("metrics", "confusion-matrices", "latency", "cost", "failures"):
        assert f'<section id="{anchor}">' in html and f'href="#{anchor}"' in html
    data = re.search(r'<script type="application/json" id="figures">(.*?)</script>', html, re.S)
    assert data is not None
    figures = json.loads(data.group(1))
    assert list(figures) == [c.id for c in charts]
    assert all(f'<div id="{c.id}" class="plot">' in html for c in charts)
    assert "Runs: g1 (baseline), g2" in html and "generated 2026-01-01 00:00 UTC" in html
    assert "/*plotly*/" in html


def test_nothing_from_the_capture_runs_as_script(report, tables):
    chart = Chart("chart-x", "Metrics", HOSTILE, json.dumps({"data": [{"name": HOSTILE}]}))
    call = TranscriptCall(expected="a", actual=HOSTILE, errors=[HOSTILE])
    t = Transcript(run="r", case_id=HOSTILE, exchange_id="x", label="wrong_tool", user=HOSTILE,
                   assistant_text=None, calls=[call])  # fmt: skip
    html = page(report.model_copy(update={"gallery": {"wrong_tool": [t]}}), tables, [chart])
    assert "alert(1)" in html  # shown, as text
    assert html.count("<script>") == 2  # plotly.js and the drawing code, nothing else
    assert HOSTILE not in html


def test_the_gallery_shows_each_failing_case(report):
    html = render_gallery(report.gallery)
    assert '<details open id="label-no_call">' in html
    assert "case-a1" in html and "weather in Paris?" in html
    assert render_gallery({}) == '<p class="pass">No failing cases.</p>'
