"""Editing one case in place: every other byte of the file stays, and the file still loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolproxy.grade import caseedit
from toolproxy.grade.caseedit import (
    case_text,
    cases_by_exchange,
    parse_case_text,
    save_case,
)
from toolproxy.grade.casefile import ExpectationError
from toolproxy.grade.expectations import load_cases
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Provenance

COMMENTED = """\
# team expectations: keep these comments
cases:
  # the weather case
  - id: weather   # inline comment
    exchange_id: ex-1
    calls:
      - tool: get_weather
        args: {city: Paris}
    notes: |
      first line
      second line

  # the quiet one
  - id: quiet
    exchange_id: ex-2
    expect: no_call   # trailing comment
# the end
"""


def edited(case_id: str = "weather", city: str = "Lyon") -> Case:
    return Case(
        id=case_id,
        exchange_id="ex-1",
        calls=[ExpectedCall(tool="get_weather", args={"city": Matcher(value=city)})],
    )


def test_replacing_a_case_keeps_every_other_byte(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(COMMENTED)
    assert save_case(path, edited()) == "replaced"
    text = path.read_text()
    head = COMMENTED[: COMMENTED.index("id: weather")]
    tail = COMMENTED[COMMENTED.index("      second line") + len("      second line") :]
    assert text.startswith(head) and text.endswith(tail)
    assert "# the quiet one" in text and "# trailing comment" in text and "# the end" in text
    cases = load_cases([path])
    assert [c.id for c in cases] == ["weather", "quiet"]
    assert cases[0] == edited()


def test_replacing_under_another_id_renames_the_case(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(COMMENTED)
    assert save_case(path, edited("weather-lyon"), replacing="weather") == "replaced"
    assert [c.id for c in load_cases([path])] == ["weather-lyon", "quiet"]


def test_a_new_case_goes_at_the_end_at_the_lists_indentation(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(COMMENTED)
    assert save_case(path, edited("new")) == "added"
    text = path.read_text()
    last = COMMENTED.index("\n# the end")
    assert text.startswith(COMMENTED[:last]) and text.endswith(COMMENTED[last:])
    assert "# trailing comment\n  - id: new\n    exchange_id: ex-1\n" in text
    assert [c.id for c in load_cases([path])] == ["weather", "quiet", "new"]


def test_a_missing_file_is_created(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "cases.yaml"
    assert save_case(path, edited()) == "added"
    assert load_cases([path]) == [edited()]


@pytest.mark.parametrize("empty", ["# nothing yet\n[]\n", "# nothing yet\ncases: []\n"])
def test_an_empty_list_becomes_a_block_list_and_keeps_its_comment(
    tmp_path: Path, empty: str
) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(empty)
    assert save_case(path, edited()) == "added"
    assert path.read_text().startswith("# nothing yet\n")
    assert load_cases([path]) == [edited()]


def test_a_flow_style_list_is_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("[{id: weather, exchange_id: ex-1, calls: [{tool: get_weather}]}]\n")
    assert save_case(path, edited()) == "replaced"
    assert load_cases([path]) == [edited()]


def test_jsonl_lines_are_replaced_or_added(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    other = json.dumps({"id": "quiet", "exchange_id": "ex-2", "expect": "no_call"})
    path.write_text(json.dumps({"id": "weather", "exchange_id": "ex-1", "expect": "no_call"})
                    + "\n" + other + "\n")  # fmt: skip
    assert save_case(path, edited()) == "replaced"
    assert path.read_text().split("\n")[1] == other
    assert save_case(path, edited("third")) == "added"
    assert [c.id for c in load_cases([path])] == ["weather", "quiet", "third"]


def test_an_edit_that_breaks_the_file_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(COMMENTED)
    with pytest.raises(ExpectationError, match="duplicate id 'quiet'"):
        save_case(path, edited("quiet"), replacing="weather")
    assert path.read_text() == COMMENTED


def test_the_editor_text_round_trips() -> None:
    case = edited()
    assert parse_case_text(case_text(case)) == case


def test_editor_problems_name_the_line_and_field() -> None:
    text = case_text(edited()).replace("city: Lyon", "city: {match: regex, pattern: '('}")
    with pytest.raises(ExpectationError) as err:
        parse_case_text(text)
    (issue,) = err.value.issues
    assert issue.path == "calls[0].args.city.pattern"
    assert issue.line == text.split("\n").index("    args:") + 2
    with pytest.raises(ExpectationError, match="a case is a mapping, not list"):
        parse_case_text("- a\n")
    with pytest.raises(ExpectationError, match="not YAML"):
        parse_case_text("id: [\n")


def test_cases_by_exchange(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    assert cases_by_exchange(None) == {} and cases_by_exchange(path) == {}
    path.write_text(COMMENTED)
    assert sorted(cases_by_exchange(path)) == ["ex-1", "ex-2"]


def test_a_file_with_problems_is_reported_not_edited(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("- id: x\n  calls: [\n")
    with pytest.raises(ExpectationError, match=r"cases.yaml:3: not valid YAML"):
        save_case(path, edited())
    assert path.read_text() == "- id: x\n  calls: [\n"


def test_the_editor_hides_provenance_and_stamps_the_edit() -> None:
    labeled = Provenance(by="alice", at="1", via="label", exchange_id="e1", session_id="s1")
    original = Case(id="c", exchange_id="e1", expect="no_call", provenance=labeled)
    assert "provenance" not in case_text(original)
    saved = caseedit.edited(parse_case_text(case_text(original)), original, "bob", "2")
    assert saved.provenance == Provenance(
        by="bob", at="2", via="tui", exchange_id="e1", session_id="s1"
    )
    new = Case(id="n", exchange_id="e9", expect="no_call")
    fresh = caseedit.edited(new, Case(id="n"), None, "3")
    assert fresh.provenance == Provenance(at="3", via="tui", exchange_id="e9")
