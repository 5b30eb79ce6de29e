"""toolproxy.tui.confusion: a confusion-matrix cell lists the cases that fell in it, and
each opens on its exchange."""

from __future__ import annotations

from tests.tui.drive import keys, pinned_app, settle
from toolproxy.grade.grades import CaseGrade
from toolproxy.grade.metrics import CaseRecord
from toolproxy.tui.app import ToolproxyApp
from toolproxy.tui.confusion import CellScreen, cell_cases
from toolproxy.tui.exchange import ExchangeScreen
from toolproxy.tui.runs import LabelsScreen


def record(case_id: str, expected: list[str], called: list[str], observed=True) -> CaseRecord:
    grade = CaseGrade(
        case_id=case_id, passed=expected == called, expected_tools=expected, called_tools=called
    )
    return CaseRecord(grade=grade, observed=observed)


def test_cell_cases_follow_the_matrix_cells():
    records = [
        record("right", ["a"], ["a"]),
        record("wrong", ["a"], ["b"]),
        record("spurious", [], ["a"]),
        record("unseen", ["a"], ["b"], observed=False),
    ]
    assert [r.grade.case_id for r in cell_cases(records, "a", "b")] == ["wrong"]
    assert [r.grade.case_id for r in cell_cases(records, "(none)", "a")] == ["spurious"]
    assert [r.grade.case_id for r in cell_cases(records, "a", "a")] == ["right"]


async def test_a_cell_lists_its_cases_and_opens_them(graded):
    app = ToolproxyApp(graded, run="t1")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, LabelsScreen)
        await pilot.press("tab", "enter")  # the row's label column: not a cell of the matrix
        await settle(pilot)
        assert isinstance(app.screen, LabelsScreen)
        await pilot.press("right", "enter")  # expected (none), called get_weather
        await settle(pilot)
        assert isinstance(app.screen, CellScreen)
        table = app.screen.query_one("#cell")
        assert [list(table.get_row_at(i)) for i in range(table.row_count)] == [
            ["rome", "spurious_call", "(none)", "get_weather", "a-1", "s-a"]
        ]
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ExchangeScreen)
        assert app.screen.detail.exchange.exchange_id == "a-1"


def test_snapshot_a_cell(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch, run="g1")
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys("tab", "right", "enter"))
