"""toolproxy.tui.runs: the runs, a run's labels and the failure gallery, on a capture graded
by the real `toolproxy grade`."""

from __future__ import annotations

from tests.tui.drive import keys, pinned_app, settle
from toolproxy.tui.app import ToolproxyApp
from toolproxy.tui.runs import DiffScreen, GalleryScreen, LabelsScreen, RunsScreen


def column(app, table: str) -> list[str]:
    t = app.screen.query_one(table)
    return [t.get_row_at(i)[0] for i in range(t.row_count)]


async def test_runs_labels_and_the_gallery(graded):
    app = ToolproxyApp(graded)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("g")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        assert column(app, "#runs") == ["g1", "g2", "t1"]
        t1 = app.screen.query_one("#runs").get_row_at(2)
        assert list(t1[1:4]) == ["3", "0", "0.0%"]
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, LabelsScreen)
        assert column(app, "#labels") == ["hallucinated_param", "spurious_call"]
        metrics = str(app.screen.query_one("#metrics").content)
        assert metrics.startswith("3 cases, 3 graded · pass 0.0% · selection 66.7%")
        grid = app.screen.query_one("#confusion")
        cells = {
            (str(grid.get_row_at(i)[0]), str(c.label)): str(grid.get_row_at(i)[j + 1])
            for i in range(grid.row_count)
            for j, c in enumerate(list(grid.columns.values())[1:])
        }
        assert cells[("get_weather", "get_weather")] == "1"
        assert cells[("(none)", "get_weather")] == "1"
        assert cells[("search", "search")] == "1"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, GalleryScreen)
        first = str(app.screen.query_one("#case").content)
        assert first.startswith("case flights · exchange b-0")
        assert "q: hallucinated — expected 'hotels', got 'flights'" in first
        assert str(app.screen.query_one("#status").content).startswith("case 1 of 2")
        await pilot.press("n")
        second = str(app.screen.query_one("#case").content)
        assert "city: hallucinated — expected 'Rome', got 'Paris'" in second
        await pilot.press("n")  # wraps around
        assert str(app.screen.query_one("#case").content) == first
        await pilot.press("escape", "escape", "escape")
        await settle(pilot)
        assert not isinstance(app.screen, (RunsScreen, LabelsScreen, GalleryScreen))


async def test_a_capture_with_no_runs_says_how_to_make_one(tmp_path):
    from tests.seeded import CaptureRows

    capture = CaptureRows().write(tmp_path / "empty")
    app = ToolproxyApp(capture)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("g")
        await settle(pilot)
        assert "no runs yet" in str(app.screen.query_one("#status").content)


async def test_a_replay_run_opens_its_diffs(seeded_capture):
    app = ToolproxyApp(seeded_capture)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("g")
        await settle(pilot)
        assert column(app, "#replays") == ["rp"]
        await pilot.press("tab", "enter")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen)
        rows = [app.screen.query_one("#diffs").get_row_at(i) for i in range(2)]
        assert [list(r[5:]) for r in rows] == [
            ['get_weather({"city":"Paris"})', 'get_weather({"city":"Paris"})', "same"],
            ['get_weather({"city":"Rome"})', 'search({"q":"Rome"})', "tool wrong_tool"],
        ]
        await pilot.press("c")
        await settle(pilot)
        assert app.screen.query_one("#diffs").row_count == 1
        assert "1 changed calls" in str(app.screen.query_one("#status").content)


def test_snapshot_runs(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys("g"))


def test_snapshot_a_run(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch, run="g2")
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys())


def test_snapshot_gallery(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch, run="g2")
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys("enter"))


def test_snapshot_replay_diff(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys("g", "tab", "enter"))
