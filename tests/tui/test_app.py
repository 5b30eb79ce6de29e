"""toolproxy.tui.app: the application's own keys, and `toolproxy tui` on the command line."""

from __future__ import annotations

from toolproxy.cli.main import main
from toolproxy.tui.app import ToolproxyApp


async def test_help_lists_the_keys_and_q_quits(seeded_capture):
    app = ToolproxyApp(seeded_capture)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        (note,) = list(app._notifications)
        assert "/          filter sessions" in note.message
        await pilot.press("q")
    assert app.return_code == 0


def test_the_command_refuses_a_capture_it_cannot_open(tmp_path, capsys):
    assert main(["tui", str(tmp_path / "nowhere")]) == 2
    assert "not a toolproxy capture" in capsys.readouterr().err


async def test_the_palette_offers_every_keyed_action_and_runs_it(seeded_capture):
    from tests.tui.drive import settle
    from toolproxy.tui.runs import RunsScreen
    from toolproxy.tui.sessions import SessionsScreen

    app = ToolproxyApp(seeded_capture)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        for title in ("Filter (/)", "Open (⏎)", "Sort (o)", "Next page (])", "Runs (g)"):
            assert title in commands
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"runs (g", "enter")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
