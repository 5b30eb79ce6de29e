"""The report as text: terminal tables, Markdown, report.csv and the --out files."""

from __future__ import annotations

import csv
import io
import json

from tests.grade.test_families import RECORDS
from toolproxy.grade.rendering import (
    csv_text,
    md_table,
    render_markdown,
    render_terminal,
    write_outputs,
)
from toolproxy.grade.report import Table, build_report, build_tables


def report_of():
    other = [r.model_copy(update={"run": "s"}) for r in RECORDS[:2]]
    return build_report({"r": RECORDS, "s": other}, {}, baseline="r")


def test_csv_has_a_row_per_run_and_metric_with_n_a_empty() -> None:
    rows = list(csv.DictReader(io.StringIO(csv_text(report_of()))))
    assert {r["section"] for r in rows} == {"run", "label", "vendor", "cost", "family"}
    family = {(r["run"], r["metric"]): r["value"] for r in rows if r["section"] == "family"}
    assert family[("r", "unions.pass_rate")] == "0.0"
    assert family[("s", "enums.graded")] == "2"
    assert ("s", "unions.cases") not in family  # s has no unions case
    assert {r["baseline"] for r in rows if r["run"] == "r"} == {"true"}


def test_markdown_escapes_pipes_and_the_terminal_marks_the_baseline() -> None:
    table = Table(title="t", columns=["a|b", "c"], rows=[["x|y", None]])
    assert md_table(table).splitlines() == ["| a\\|b | c |", "|---|---|", "| x\\|y |  |"]
    report = report_of()
    tables = build_tables(report)
    assert render_terminal(tables, report).endswith("* baseline: r")
    assert "## Pass rate per task family" in render_markdown(tables, report)


def test_out_writes_the_three_files(tmp_path) -> None:
    report = report_of()
    write_outputs(tmp_path / "out", report, build_tables(report))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "report.csv", "report.json", "report.md",
    ]  # fmt: skip
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["families"]["s"]["enums"]["passed"] == 1
