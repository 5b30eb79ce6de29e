"""toolproxy.tui.rowtable: a light table with the DataTable calls the screens use."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.coordinate import Coordinate

from toolproxy.tui.rowtable import MAX_WIDTH, RowTable, fit


class Probe(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, int]] = []

    def compose(self) -> ComposeResult:
        yield RowTable(id="t")

    def on_mount(self) -> None:
        table = self.query_one(RowTable)
        table.add_columns("name", "n")
        table.add_rows([(f"row-{i}", i) for i in range(50)], [f"k{i}" for i in range(50)])
        table.focus()

    def on_row_table_row_highlighted(self, event: RowTable.RowHighlighted) -> None:
        self.seen.append(("highlighted", event.cursor_row))

    def on_row_table_row_selected(self, event: RowTable.RowSelected) -> None:
        self.seen.append(("selected", event.cursor_row))

    def on_row_table_header_selected(self, event: RowTable.HeaderSelected) -> None:
        self.seen.append(("header", event.column_index))


def test_fit_cuts_and_pads():
    assert fit("abc", 5) == "abc  "
    assert fit("abcdef", 4) == "abc…"


async def test_keys_move_the_cursor_and_select():
    app = Probe()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(RowTable)
        assert table.row_count == 50 and table.get_row_at(3) == ["row-3", "3"]
        await pilot.press("down", "down", "enter")
        assert table.cursor_row == 2
        assert app.seen[-1] == ("selected", 2)
        await pilot.press("pagedown")
        assert table.cursor_row == 2 + 11  # a page is the rows shown under the header
        await pilot.press("end")
        assert table.cursor_row == 49 and table.scroll_offset.y > 0  # kept on screen
        await pilot.press("home")
        assert table.cursor_row == 0 and table.scroll_offset.y == 0
        assert ("highlighted", 49) in app.seen


async def test_clicks_select_rows_and_headers():
    app = Probe()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.click("#t", offset=(2, 3))  # the third row (the header is line 0)
        assert app.query_one(RowTable).cursor_row == 2
        await pilot.click("#t", offset=(10, 0))  # "name" is 6 wide + 2 of gap: "n" at 9
        assert app.seen[-1] == ("header", 1)


async def test_cells_change_and_long_cells_are_cut():
    app = Probe()
    async with app.run_test(size=(120, 12)):
        table = app.query_one(RowTable)
        table.update_cell_at(Coordinate(1, 0), "x" * 100)
        assert table.get_row_at(1)[0] == "x" * 100
        assert table.widths[0] == MAX_WIDTH
        line = "".join(seg.text for seg in table.render_line(2))
        assert "x" * (MAX_WIDTH - 1) + "…" in line
        table.clear()
        assert table.row_count == 0 and table.cursor_row == 0
