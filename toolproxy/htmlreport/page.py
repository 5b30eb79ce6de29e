"""The HTML report page (pure): the report's tables with the baseline's column marked, the
charts (plotly figures, drawn in the browser by the embedded plotly.js) and the failure
gallery with transcripts. Everything the page shows from the capture is escaped; the
figures travel as JSON in a data script, so no text of an agent's can end a script."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from toolproxy.grade.gallery import Transcript
from toolproxy.grade.report import Report
from toolproxy.grade.sections import Table
from toolproxy.htmlreport.figures import Chart
from toolproxy.util.table import cell

STYLE = """
body { font-family: system-ui, sans-serif; margin: 0 2rem 4rem; color: #1d2330; }
header { border-bottom: 1px solid #d0d5dd; margin-bottom: 1rem; }
nav a { margin-right: 1rem; }
h2 { margin-top: 2.5rem; border-bottom: 1px solid #e4e7ec; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #e4e7ec; padding: 0.25rem 0.6rem; text-align: left; }
th { background: #f2f4f7; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.baseline { background: #fff6db; }
th.baseline::after { content: " (baseline)"; font-weight: normal; color: #8a6d00; }
.chart { border: 1px solid #e4e7ec; margin: 1rem 0; padding: 0.5rem; }
.note { color: #555e6e; font-size: 0.85rem; }
.fail { color: #b42318; } .pass { color: #067647; }
details { margin: 0.3rem 0; } summary { cursor: pointer; }
.transcript { border-left: 3px solid #d0d5dd; margin: 0.5rem 0 1rem; padding-left: 0.8rem; }
pre { white-space: pre-wrap; background: #f8f9fb; padding: 0.4rem; margin: 0.2rem 0; }
"""
DRAW = """
const figures = JSON.parse(document.getElementById("figures").textContent);
for (const [id, figure] of Object.entries(figures)) {
  Plotly.newPlot(id, figure.data, figure.layout, {responsive: true, displaylogo: false})
    .then(() => document.getElementById(id).setAttribute("data-drawn", "yes"));
}
"""


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _number(value: Any) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True
    return isinstance(value, str) and value.replace(".", "", 1).replace("-", "", 1).isdigit()


def render_table(table: Table, baseline: str | None) -> str:
    """A table; the baseline's column (headed `<run>*`) is marked."""
    marked = {i for i, c in enumerate(table.columns) if baseline and c == f"{baseline}*"}
    heads = "".join(
        f'<th class="baseline">{esc(c[:-1])}</th>' if i in marked else f"<th>{esc(c)}</th>"
        for i, c in enumerate(table.columns)
    )
    rows = []
    for row in table.rows:
        cells = []
        for i, value in enumerate(row):
            classes = (["baseline"] if i in marked else []) + (["num"] if _number(value) else [])
            attr = f' class="{" ".join(classes)}"' if classes else ""
            cells.append(f"<td{attr}>{esc(cell(value, 400))}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f"<h3>{esc(table.title)}</h3>\n<table><thead><tr>{heads}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def render_chart(chart: Chart) -> str:
    note = f'<p class="note">{esc(chart.note)}</p>' if chart.note else ""
    return (
        f'<div class="chart"><h3>{esc(chart.title)}</h3>'
        f'<div id="{esc(chart.id)}" class="plot"></div>{note}</div>'
    )


def render_transcript(t: Transcript) -> str:
    parts = [f"<summary><b>{esc(t.case_id)}</b> ({esc(t.run)})</summary>"]
    if t.exchange_id:
        parts.append(f"<p>exchange <code>{esc(t.exchange_id)}</code></p>")
    user = t.user if t.user is not None else "(not recorded)"
    parts.append(f"<p>user:</p><pre>{esc(user)}</pre>")
    if t.assistant_text:
        parts.append(f"<p>assistant said:</p><pre>{esc(t.assistant_text)}</pre>")
    for c in t.calls:
        stage = f' <span class="fail">failed at {esc(c.stage_failed)}: {esc(c.label)}</span>'
        parts.append(
            f"<p>expected <code>{esc(c.expected or '(none)')}</code>, actual "
            f"<code>{esc(c.actual or '(none)')}</code>{stage if c.stage_failed else ''}</p>"
        )
        items = []
        for a in c.args:
            detail = f": {esc(a.detail)}" if a.detail else ""
            judged = f" (judge: {esc(a.judge_reason)})" if a.judged and a.judge_reason else ""
            items.append(f"<li><code>{esc(a.name)}</code> {esc(a.bucket)}{detail}{judged}</li>")
        items += [f'<li class="fail">error: {esc(e)}</li>' for e in c.errors]
        if c.result is not None:
            items.append(f"<li>result: <code>{esc(c.result)}</code></li>")
        if items:
            parts.append(f"<ul>{''.join(items)}</ul>")
    return f'<details class="transcript">{"".join(parts)}</details>'


def render_gallery(gallery: dict[str, list[Transcript]]) -> str:
    if not gallery:
        return '<p class="pass">No failing cases.</p>'
    out = []
    for label, transcripts in gallery.items():
        body = "".join(render_transcript(t) for t in transcripts)
        out.append(
            f'<details open id="label-{esc(label)}"><summary><b>{esc(label)}</b> '
            f"({len(transcripts)} shown)</summary>{body}</details>"
        )
    return "\n".join(out)


def _script_json(value: Any) -> str:
    """JSON that cannot close the script element it sits in."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e")


def render_page(
    report: Report,
    tables: Sequence[Table],
    charts: Sequence[Chart],
    plotly_js: str,
    title: str = "toolproxy report",
    generated: datetime | None = None,
) -> str:
    """The whole page."""
    when = (generated or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    runs = ", ".join(esc(r) + (" (baseline)" if r == report.baseline else "") for r in report.runs)
    failed = [g for g in report.gates if g.status == "failed"]
    gates = ""
    if report.gates:
        cls, said = ("fail", f"{len(failed)} gate(s) failed") if failed else ("pass", "gates pass")
        gates = f' · <span class="{cls}">{said}</span>'
    sections: dict[str, list[str]] = {}
    for chart in charts:
        sections.setdefault(chart.section, []).append(render_chart(chart))
    metrics = sections.pop("Metrics", [])
    body = [
        '<section id="metrics"><h2>Metrics</h2>',
        *metrics,
        *(render_table(t, report.baseline) for t in tables),
        "</section>",
    ]
    for name, rendered in sections.items():
        anchor = name.lower().replace(" ", "-")
        body += [f'<section id="{anchor}"><h2>{esc(name)}</h2>', *rendered, "</section>"]
    body += [
        '<section id="failures"><h2>Failure gallery</h2>',
        render_gallery(report.gallery),
        "</section>",
    ]
    nav = " ".join(
        f'<a href="#{name.lower().replace(" ", "-")}">{esc(name)}</a>'
        for name in ["Metrics", *sections, "Failures"]
    )
    figures = {c.id: json.loads(c.figure_json) for c in charts}
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)}</title>
<style>{STYLE}</style>
<script>{plotly_js}</script>
</head>
<body>
<header><h1>{esc(title)}</h1>
<p>Runs: {runs}{gates} · generated {when}
{f" · prices: {esc(report.prices)}" if report.prices else ""}</p>
<nav>{nav}</nav></header>
{chr(10).join(body)}
<script type="application/json" id="figures">{_script_json(figures)}</script>
<script>{DRAW}</script>
</body>
</html>
"""
