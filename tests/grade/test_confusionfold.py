"""toolproxy.grade.confusionfold: a shown confusion matrix names at most KEEP tools a side."""

from __future__ import annotations

from toolproxy.grade.confusionfold import fold_confusion, is_others, others_label
from toolproxy.grade.metrics import NONE


def _total(conf: dict[str, dict[str, int]]) -> int:
    return sum(n for row in conf.values() for n in row.values())


def test_a_few_tools_are_shown_as_they_are():
    conf = {"a": {"a": 3, "b": 1}, "b": {NONE: 2}}
    assert fold_confusion(conf, keep=2) is conf


def test_a_tool_per_case_folds_into_one_row_and_column_keeping_every_count():
    # 1,000 tools each called right once, and two confusions among them
    conf: dict[str, dict[str, int]] = {f"t{i:04d}": {f"t{i:04d}": 1} for i in range(1000)}
    conf["t0500"]["t0007"] = 2
    conf["t0900"] = {**conf["t0900"], NONE: 1}
    folded = fold_confusion(conf, keep=3)
    other = others_label(997)
    assert set(folded) == {"t0500", "t0007", "t0900", other}  # the confused ones first
    assert folded["t0500"] == {"t0500": 1, "t0007": 2}
    assert folded["t0900"] == {"t0900": 1, NONE: 1}
    assert folded[other] == {other: 997}
    assert _total(folded) == _total(conf)
    called = {c for row in folded.values() for c in row}
    assert len(called - {NONE}) <= 4 and is_others(other) and not is_others(NONE)


def test_the_report_and_the_tui_show_a_tool_per_case_folded():
    from toolproxy.grade.confusionfold import KEEP
    from toolproxy.grade.grades import CallGrade, CaseGrade
    from toolproxy.grade.metrics import CaseRecord
    from toolproxy.grade.report import build_report, build_tables
    from toolproxy.tui.views import confusion_grid

    records = [
        CaseRecord(
            run="r",
            grade=CaseGrade(
                case_id=f"c{i}", passed=True, calls=[CallGrade(f"t{i}", f"t{i}")],
                called_tools=[f"t{i}"], expected_tools=[f"t{i}"],
            ),
            offered=[f"t{i}"],
        )
        for i in range(2000)
    ]  # fmt: skip
    report = build_report({"r": records}, {})
    assert len(report.metrics["r"].confusion) == 2000  # the metrics keep every tool
    (table,) = [t for t in build_tables(report) if t.title.startswith("Confusion matrix")]
    assert len(table.columns) <= KEEP + 3 and len(table.rows) <= KEEP + 2
    assert sum(n for row in table.rows for n in row[1:]) == 2000
    columns, rows = confusion_grid(report.metrics["r"].confusion)
    assert len(columns) <= KEEP + 2 and len(rows) <= KEEP + 1
