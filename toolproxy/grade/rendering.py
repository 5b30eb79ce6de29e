"""The report as text: terminal tables, GitHub Markdown, report.csv, and the files that
`toolproxy report --out DIR` writes (see `toolproxy.grade.report` for what they hold)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolproxy.grade.report import (
    COST_ROWS,
    FAMILY_ROWS,
    RUN_ROWS,
    VENDOR_ROWS,
    Report,
    Table,
    run_heads,
)
from toolproxy.util.jsonfast import pretty_dumps


def render_terminal(tables: Sequence[Table], report: Report) -> str:
    """All tables as plain text."""
    from toolproxy.util.table import format_table

    parts = [f"{t.title}\n{format_table(t.columns, t.rows, width=100)}" for t in tables]
    if report.baseline:
        parts.append(f"* baseline: {report.baseline}")
    return "\n\n".join(parts)


def _md_cell(value: Any) -> str:
    from toolproxy.util.table import cell

    return cell(value, width=200).replace("|", "\\|")


def md_table(table: Table) -> str:
    """One table as GitHub Markdown."""
    lines = [
        "| " + " | ".join(_md_cell(c) for c in table.columns) + " |",
        "|" + "---|" * len(table.columns),
    ]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines)


def render_markdown(tables: Sequence[Table], report: Report) -> str:
    """report.md: the tables, then the failure-transcript gallery."""
    from toolproxy.grade.gallery import render_gallery

    parts = ["# toolproxy report", f"Runs: {', '.join(run_heads(report))}"]
    if report.baseline:
        parts.append(f"`*` baseline: {report.baseline}")
    parts += [f"## {t.title}\n\n{md_table(t)}" for t in tables]
    parts.append(render_gallery(report.gallery))
    return "\n\n".join(parts) + "\n"


def csv_text(report: Report) -> str:
    """report.csv: one row per run x metric."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["run", "baseline", "section", "metric", "value"])
    for r in report.runs:
        base = str(r == report.baseline).lower()
        m, v = report.metrics[r], report.vendor[r]
        w.writerows([r, base, "run", k, _csv(getattr(m, k))] for k in RUN_ROWS)
        w.writerows([r, base, "label", k, n] for k, n in m.label_counts.items())
        w.writerows([r, base, "vendor", k, _csv(getattr(v, k))] for k in VENDOR_ROWS)
        if r in report.costs:
            c = report.costs[r]
            w.writerows([r, base, "cost", k, _csv(getattr(c, k))] for k in COST_ROWS)
        for tag, s in report.families.get(r, {}).items():
            w.writerows([r, base, "family", f"{tag}.{k}", _csv(getattr(s, k))] for k in FAMILY_ROWS)
    return buf.getvalue()


def _csv(value: Any) -> Any:
    return "" if value is None else value


def write_outputs(out: Path, report: Report, tables: Sequence[Table]) -> None:
    """report.csv, report.json and report.md under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.csv").write_text(csv_text(report), encoding="utf-8")
    data = pretty_dumps(report.model_dump(mode="json"))
    (out / "report.json").write_text(data + "\n", encoding="utf-8")
    (out / "report.md").write_text(render_markdown(tables, report), encoding="utf-8")
