"""tests.tui.drive: a failing snapshot says what differs, as text."""

from __future__ import annotations

from pathlib import Path

from tests.tui.drive import screen_diff, screen_lines

SNAPSHOT = Path(__file__).parent / "__snapshots__/test_compare/test_snapshot_side_by_side.raw"


def test_screen_lines_are_the_terminals_lines():
    lines = screen_lines(SNAPSHOT.read_text())
    assert len(lines) == 24
    assert lines[1].rstrip() == "Per-run metrics"
    assert lines[-2].startswith("g1, g2 · the tables of `toolproxy report`")


def test_a_changed_line_is_named_and_a_style_change_shows_the_svg():
    svg = SNAPSHOT.read_text()
    moved = svg.replace("retry_chains", "retry_chainz")
    diff = screen_diff(svg, moved).splitlines()
    assert diff[0] == "snapshot mismatch, screen text:"
    assert [
        d[0] + d[1:].split()[0] for d in diff if d[:1] in "-+" and d[:3] not in ("---", "+++")
    ] == [
        "-retry_chains",
        "+retry_chainz",
    ]
    restyled = svg.replace("fill: #", "fill: #0", 1)
    assert screen_diff(svg, restyled).splitlines()[0] == (
        "snapshot mismatch, SVG (the text is the same):"
    )
    assert len(screen_diff(svg, restyled).splitlines()) > 1
