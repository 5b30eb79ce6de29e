"""toolproxy.tui.caseeditor and labeling from the transcript: accept, no call and edit write
the cases file in place, and the real `toolproxy grade` then grades what was labeled."""

from __future__ import annotations

import contextlib
import io
import json

from tests.seeded import seed_capture
from tests.tui.drive import keys, pinned_app, settle
from toolproxy.cli.main import main
from toolproxy.grade.expectations import load_cases
from toolproxy.tui.app import ToolproxyApp
from toolproxy.tui.caseeditor import CaseEditScreen
from toolproxy.tui.runs import LabelsScreen
from toolproxy.tui.transcript import TranscriptScreen

HEADER = """\
# our team's cases: this comment must survive labeling
- id: flights   # labeled by hand
  exchange_id: b-0
  calls:
    - tool: search
      args: {q: flights}
"""


def status(app) -> str:
    return str(app.screen.query_one("#status").content)


def expected_column(app) -> list[str]:
    table = app.screen.query_one("#turns")
    return [table.get_row_at(i)[-1] for i in range(table.row_count)]


def grade(capture, cases, run) -> dict[str, str | None]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["grade", str(cases), "-c", str(capture), "--run", run, "--json"]) == 0
    return {g["case_id"]: g["label"] for g in json.loads(out.getvalue())["grades"]}


async def edit(pilot, old: str, new: str) -> None:
    editor = pilot.app.screen.query_one("#editor")
    assert old in editor.text
    editor.text = editor.text.replace(old, new)
    await pilot.press("ctrl+s")
    await settle(pilot)


async def test_label_in_the_tui_then_grade_reads_it(tmp_path):
    capture = seed_capture(tmp_path / "cap")
    cases = tmp_path / "cases.yaml"
    cases.write_text(HEADER)
    app = ToolproxyApp(capture, session="s-a", cases=cases)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, TranscriptScreen)
        assert expected_column(app) == ["", "", ""]
        await pilot.press("a")  # a-0: get_weather(Paris), accepted as it is
        await settle(pilot)
        assert status(app) == f"added case get_weather-a0 in {cases}"
        await pilot.press("down", "E")  # a-1: get_weather(Rome), edited to expect Milan
        await settle(pilot)
        assert isinstance(app.screen, CaseEditScreen)
        await edit(pilot, "city: Rome", "city: Milan")
        assert isinstance(app.screen, TranscriptScreen)
        await pilot.press("down", "n")  # a-2 answered in text: no call expected
        await settle(pilot)
        assert expected_column(app) == ["get_weather", "get_weather", "no call"]

    text = cases.read_text()
    assert text.startswith(HEADER)
    assert [c.id for c in load_cases([cases])] == [
        "flights", "get_weather-a0", "get_weather-a1", "no_call-a2",
    ]  # fmt: skip
    assert grade(capture, cases, "lab") == {
        "flights": None,
        "get_weather-a0": None,
        "get_weather-a1": "hallucinated_param",  # the model said Rome, the label says Milan
        "no_call-a2": None,
    }

    # Back in the TUI: the label was wrong; fix it, re-grade from the run, and it passes.
    app = ToolproxyApp(capture, session="s-a", run="lab", cases=cases)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "E")
        await settle(pilot)
        await edit(pilot, "city: Milan", "city: {match: text, value: ' rome'}")
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, LabelsScreen) and app.screen.run_name == "lab"
        await pilot.press("G")
        await settle(pilot)
        assert isinstance(app.screen, LabelsScreen) and app.screen.run_name == "lab-2"
        labels = app.screen.query_one("#labels")
        assert [labels.get_row_at(i)[0] for i in range(labels.row_count)] == ["passed"]
    assert text.startswith(HEADER) and cases.read_text().startswith(HEADER)


async def test_an_invalid_edit_is_refused_with_its_line_and_field(tmp_path):
    capture = seed_capture(tmp_path / "cap")
    cases = tmp_path / "cases.yaml"
    app = ToolproxyApp(capture, session="s-a", cases=cases)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("E")
        await settle(pilot)
        await edit(pilot, "city: Paris", "city: {match: range}")
        assert isinstance(app.screen, CaseEditScreen)
        said = status(app)
        assert said.startswith("not saved: line 7 calls[0].args.city")
        assert not cases.exists()
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, TranscriptScreen)
        assert expected_column(app) == ["", "", ""]


async def test_a_broken_cases_file_is_a_message_and_the_turns_still_show(tmp_path):
    capture = seed_capture(tmp_path / "cap")
    cases = tmp_path / "cases.yaml"
    cases.write_text("- id: x\n  calls: [\n")
    app = ToolproxyApp(capture, session="s-a", cases=cases)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert len(expected_column(app)) == 3
        assert "cases file unreadable: ExpectationError" in status(app)
        await pilot.press("a")
        await settle(pilot)
        assert status(app).startswith(f"cannot write {cases}: ExpectationError")
    assert cases.read_text() == "- id: x\n  calls: [\n"


def test_snapshot_the_case_editor(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch, session="s-a")

    async def open_editor(pilot) -> None:
        await keys("E")(pilot)
        pilot.app.screen.query_one("#editor").cursor_blink = False

    assert snap_compare(app, terminal_size=(80, 24), run_before=open_editor)
