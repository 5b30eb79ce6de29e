"""A light table for long lists of short rows: each line is drawn as one strip of plain
cells, so a page of 100 sessions or 2,000 turns renders in a few milliseconds where
Textual's DataTable renders every cell through rich (tens of ms per screen, again on every
focus change). It keeps the DataTable calls the screens use: `add_columns`, `add_row`,
`clear`, `row_count`, `get_row_at`, `cursor_row`, `move_cursor`, `update_cell_at`, and
posts `RowHighlighted`, `RowSelected` and `HeaderSelected`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

MAX_WIDTH = 48  # characters a column shows at most (longer cells end in "…")
GAP = 2


def fit(text: str, width: int) -> str:
    """`text` cut to `width` (ending in "…" when cut) and padded to it."""
    if len(text) > width:
        return text[: max(width - 1, 0)] + "…"
    return text.ljust(width)


class RowTable(ScrollView, can_focus=True):
    """Rows of text cells under a header that stays on top; a row cursor."""

    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "move(-1000000000)", "First", show=False),
        Binding("end", "move(1000000000)", "Last", show=False),
        Binding("enter", "select", "Select", show=False),
    ]
    DEFAULT_CSS = """
    RowTable { height: 1fr; }
    RowTable > .rowtable--header { text-style: bold; background: $panel; }
    RowTable > .rowtable--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    RowTable > .rowtable--cursor-blurred { background: $block-cursor-blurred-background; }
    RowTable > .rowtable--zebra { background: $surface-lighten-1; }
    """
    COMPONENT_CLASSES = {
        "rowtable--header",
        "rowtable--cursor",
        "rowtable--cursor-blurred",
        "rowtable--zebra",
    }

    @dataclass
    class RowHighlighted(Message):
        table: RowTable
        cursor_row: int

    @dataclass
    class RowSelected(Message):
        table: RowTable
        cursor_row: int

    @dataclass
    class HeaderSelected(Message):
        table: RowTable
        column_index: int

    def __init__(self, *, id: str | None = None, zebra_stripes: bool = True) -> None:
        super().__init__(id=id)
        self.columns: list[str] = []
        self.rows: list[list[str]] = []
        self.keys: list[str | None] = []
        self.widths: list[int] = []
        self.cursor_row = 0
        self.zebra_stripes = zebra_stripes

    # --- the DataTable calls the screens use ------------------------------------------

    def add_columns(self, *labels: str) -> None:
        self.columns = list(labels)
        self.widths = [min(len(c), MAX_WIDTH) for c in labels]
        self._resize()

    def add_row(self, *cells: object, key: str | None = None) -> None:
        self.add_rows([cells], [key])

    def add_rows(self, rows: Sequence[Sequence[object]], keys: Sequence[str | None]) -> None:
        """Many rows at once: one resize and one redraw for all of them."""
        for cells, key in zip(rows, keys, strict=True):
            row = [str(c) for c in cells]
            self.rows.append(row)
            self.keys.append(key)
            for i, cell in enumerate(row[: len(self.widths)]):
                if len(cell) > self.widths[i]:
                    self.widths[i] = min(len(cell), MAX_WIDTH)
        self._resize()

    def clear(self) -> None:
        self.rows, self.keys = [], []
        self.widths = [min(len(c), MAX_WIDTH) for c in self.columns]
        self.cursor_row = 0
        self._resize()

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def get_row_at(self, index: int) -> list[str]:
        return list(self.rows[index])

    def update_cell_at(self, coordinate: Coordinate, value: object) -> None:
        row, column = coordinate
        self.rows[row][column] = str(value)
        self.widths[column] = max(self.widths[column], min(len(str(value)), MAX_WIDTH))
        self._resize()

    def move_cursor(self, *, row: int) -> None:
        self._go(row)

    # --- drawing ----------------------------------------------------------------------

    def _resize(self) -> None:
        width = sum(self.widths) + GAP * len(self.widths) + 1
        self.virtual_size = Size(width, len(self.rows) + 1)
        self.refresh()

    def _line_text(self, cells: list[str]) -> str:
        parts = [fit(c, w) for c, w in zip(cells, self.widths, strict=False)]
        return " " + (" " * GAP).join(parts) + " " * GAP

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        if y == 0:
            text, style = (
                self._line_text(self.columns),
                self.get_component_rich_style("rowtable--header"),
            )
        else:
            index = scroll_y + y - 1
            if index >= len(self.rows):
                return Strip.blank(width, self.rich_style)
            text, style = self._line_text(self.rows[index]), self._row_style(index)
        line = text[scroll_x : scroll_x + width].ljust(width)
        return Strip([Segment(line, style)], width)

    def _row_style(self, index: int) -> Style:
        if index == self.cursor_row:
            which = "rowtable--cursor" if self.has_focus else "rowtable--cursor-blurred"
            return self.get_component_rich_style(which)
        if self.zebra_stripes and index % 2:
            return self.get_component_rich_style("rowtable--zebra")
        return self.rich_style

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # --- moving and choosing ----------------------------------------------------------

    def _go(self, row: int) -> None:
        if not self.rows:
            self.cursor_row = 0
            return
        row = max(0, min(row, len(self.rows) - 1))
        changed = row != self.cursor_row
        self.cursor_row = row
        visible = max(self.size.height - 1, 1)
        top = self.scroll_offset.y
        if row < top:
            self.scroll_to(y=row, animate=False)
        elif row >= top + visible:
            self.scroll_to(y=row - visible + 1, animate=False)
        self.refresh()
        if changed:
            self.post_message(self.RowHighlighted(self, row))

    def action_move(self, by: int) -> None:
        self._go(self.cursor_row + by)

    def action_page(self, by: int) -> None:
        self._go(self.cursor_row + by * max(self.size.height - 1, 1))

    def action_select(self) -> None:
        if self.rows:
            self.post_message(self.RowSelected(self, self.cursor_row))

    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            x, edge = event.x + self.scroll_offset.x - 1, 0
            for i, w in enumerate(self.widths):
                edge += w + GAP
                if x < edge:
                    self.post_message(self.HeaderSelected(self, i))
                    return
            return
        row = self.scroll_offset.y + event.y - 1
        if 0 <= row < len(self.rows):
            self._go(row)
            if event.chain > 1:
                self.action_select()
