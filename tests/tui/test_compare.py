"""toolproxy.tui.compare: runs side by side are `toolproxy report`'s own tables."""

from __future__ import annotations

from tests.tui.drive import keys, pinned_app, settle
from toolproxy.grade.report import (
    Table,
    build_report,
    build_tables,
    load_cases,
    load_sessions,
)
from toolproxy.tui.app import ToolproxyApp
from toolproxy.tui.compare import CompareScreen, side_by_side
from toolproxy.tui.rowtable import RowTable
from toolproxy.tui.runs import RunsScreen
from toolproxy.util.table import cell


def test_side_by_side_keeps_the_comparable_sections_in_order():
    tables = [
        Table(title=t, columns=[], rows=[])
        for t in ("Per-run metrics", "Failing cases per label", "Vendor metrics (no baseline)",
                  "Confusion matrix: g1 (rows expected, columns called)", "Gates")
    ]  # fmt: skip
    assert [t.title for t in side_by_side(tables)] == [
        "Per-run metrics", "Failing cases per label", "Vendor metrics (no baseline)",
    ]  # fmt: skip


def shown(screen) -> list[list[list[str]]]:
    return [
        [list(t.columns)] + [t.get_row_at(i) for i in range(t.row_count)]
        for t in screen.query(RowTable)
    ]


async def test_marked_runs_side_by_side_as_the_report_computes_them(graded):
    app = ToolproxyApp(graded)
    async with app.run_test(size=(140, 50)) as pilot:
        await settle(pilot)
        await pilot.press("g")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("space", "down", "down", "b")  # g1 marked, t1 the baseline
        runs = app.screen.query_one("#runs")
        assert [runs.get_row_at(i)[-1] for i in range(3)] == ["✓", "", "* baseline"]
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert (app.screen.runs, app.screen.baseline) == (["g1", "t1"], "t1")
        got = shown(app.screen)

    cases = load_cases(graded, ["g1", "t1"])
    sids = sorted({c.grade.session_id for rs in cases.values() for c in rs if c.grade.session_id})
    report = build_report(cases, load_sessions(graded, sids), "t1")
    want = [
        [t.columns] + [[cell(v) for v in row] for row in t.rows]
        for t in side_by_side(build_tables(report))
    ]
    assert got == want
    assert got[0][0] == ["metric", "g1", "t1*"]
    assert any(row[0] == "irf_score" for row in got[2])


async def test_with_nothing_marked_every_run_is_compared(graded):
    app = ToolproxyApp(graded)
    async with app.run_test(size=(140, 50)) as pilot:
        await settle(pilot)
        await pilot.press("g")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert app.screen.runs == ["g1", "g2", "t1"] and app.screen.baseline is None


async def test_the_first_sections_title_stays_on_screen_when_layout_ran_first(graded):
    # The shape of a CI flake: on a slow machine the tables' layout can run before their
    # focus lands, and focusing a table taller than the screen (scroll_visible) centres it,
    # scrolling "Per-run metrics" off the top. Here the layout surely ran first: the
    # first table is blurred, then the same tables are shown again.
    app = ToolproxyApp(graded)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("g", "m")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        box = screen.query_one("#sections")
        tables = side_by_side(build_tables(build_report(load_cases(graded, screen.runs), {}, None)))
        screen.set_focus(None)
        await settle(pilot)
        await screen.show(tables)
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()
        assert box.scroll_offset.y == 0
        assert screen.focused is box.query(RowTable).first()


def test_snapshot_side_by_side(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys("g", "m"))
