"""The text layer of expectation files: YAML 1.2 scalars, line lookup, field paths, and
rendering that reads back equal for any JSON value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import finite_json as json_values
from toolproxy.errors import UserError
from toolproxy.grade.casefile import (
    _SLOW,
    ExpectationError,
    Issue,
    cases_node,
    file_format,
    format_path,
    read_located,
    render,
    write_atomic,
    yaml_line,
)
from toolproxy.grade.casefile import _fast_line as _fast_line
from toolproxy.grade.casefile import _Loader as _Loader  # the loader under test
from toolproxy.util.jsonfast import plain_json


def read(path: Path) -> list:
    issues: list[Issue] = []
    located = read_located(path, issues)
    assert issues == []
    return [item.raw for item in located]


@settings(max_examples=150, deadline=None)
@given(value=json_values)
def test_rendered_values_read_back_equal(tmp_path_factory, value):
    folder = tmp_path_factory.mktemp("rt")
    for fmt in ("yaml", "jsonl"):
        path = folder / f"c.{fmt}"
        path.write_text(render([{"id": "x", "v": value}], fmt), encoding="utf-8")
        assert read(path) == [{"id": "x", "v": value}]


def test_yaml_1_2_scalars(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(
        "- {a: no, b: yes, c: on, d: 2024-05-01, e: 12:30:00, f: true, g: False}\n"
        "- {h: 0x1F, i: 017, j: 1_000, k: 1e3, l: -2.5, m: 7, n: .inf, o: null, p: ~}\n"
    )
    assert read(path) == [
        {
            "a": "no",
            "b": "yes",
            "c": "on",
            "d": "2024-05-01",
            "e": "12:30:00",
            "f": True,
            "g": False,
        },
        {
            "h": "0x1F",
            "i": "017",
            "j": "1_000",
            "k": 1000.0,
            "l": -2.5,
            "m": 7,
            "n": float("inf"),
            "o": None,
            "p": None,
        },
    ]


def test_render_quotes_strings_that_read_as_other_types():
    values = ["1e3", "12:30", "0x1F", "017", "yes", "null", "", ".inf", "7", "\x85", "a\u2028"]
    text = render([{"v": v} for v in values], "yaml")
    for loaded in (yaml.safe_load(text), yaml.load(text, Loader=_Loader)):
        assert [d["v"] for d in loaded] == values


def test_render_quotes_what_other_yaml_readers_would_change():
    text = render([{"a": "no", "b": "2024-05-01", "c": "ünï", "d": "x\ny"}], "yaml")
    assert yaml.safe_load(text) == [{"a": "no", "b": "2024-05-01", "c": "ünï", "d": "x\ny"}]
    assert "ünï" in text and "d: |-\n    x\n    y" in text


def test_render_writes_a_shared_value_twice():
    shared = {"k": [1]}
    text = render([{"id": "a", "x": shared, "y": shared}], "yaml")
    assert "&" not in text and "*" not in text


def test_yaml_line_points_at_keys_and_items():
    text = "- id: a\n  calls:\n    - tool: t\n      args:\n        city:\n          match: x\n"
    node = yaml.compose(text)
    case = node.value[0]
    assert yaml_line(case, ()) == 1
    assert yaml_line(case, ("calls",)) == 2
    assert yaml_line(case, ("calls", 0)) == 3
    assert yaml_line(case, ("calls", 0, "args", "city")) == 5
    assert yaml_line(case, ("calls", 0, "args", "city", "match")) == 6
    assert yaml_line(case, ("calls", 0, "args", "city", "pattern")) == 5  # absent: its parent
    assert yaml_line(case, ("calls", 7)) == 2


def test_format_path():
    assert format_path(("calls", 0, "args", "city"), "cases[3]") == "cases[3].calls[0].args.city"
    assert format_path(("args", "a.b", "ü")) == 'args["a.b"]["ü"]'
    assert format_path(()) == ""


def test_file_format():
    assert file_format(Path("a.yml")) == file_format(Path("a.yaml")) == "yaml"
    assert file_format(Path("a.jsonl")) == "jsonl"
    with pytest.raises(UserError, match="end in .yaml, .yml or .jsonl"):
        file_format(Path("a.json"))


def test_empty_and_comment_only_files_hold_no_cases(tmp_path):
    for text in ("", "# nothing\n", "\n\n"):
        (tmp_path / "c.yaml").write_text(text)
        (tmp_path / "c.jsonl").write_text(text.replace("# nothing", ""))
        assert read(tmp_path / "c.yaml") == read(tmp_path / "c.jsonl") == []
    assert cases_node("# nothing\n") is None


def test_cases_node_finds_the_list():
    assert isinstance(cases_node("cases:\n  - id: a\n"), yaml.SequenceNode)
    assert cases_node("cases:\n  - id: a\n").start_mark.column == 2
    assert isinstance(cases_node("- id: a\n"), yaml.SequenceNode)


def test_write_atomic_leaves_only_the_file(tmp_path):
    path = tmp_path / "deep" / "c.yaml"
    write_atomic(path, "x\n")
    write_atomic(path, "y\n")
    assert path.read_text() == "y\n" and [p.name for p in path.parent.iterdir()] == ["c.yaml"]


def test_expectation_error_lists_issues_in_file_and_line_order():
    error = ExpectationError(
        [
            Issue(file="b.yaml", line=1, message="m1"),
            Issue(file="a.yaml", line=9, path="cases[0].id", message="m2"),
            Issue(file="a.yaml", message="m3"),
        ]
    )
    assert str(error) == (
        "3 problems in expectation files:\n"
        "  a.yaml: m3\n  a.yaml:9: cases[0].id: m2\n  b.yaml:1: m1"
    )
    assert isinstance(error, UserError)


# JSONL lines are read by orjson when that is certainly what json.loads would give.
@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=4), json_values, max_size=4), st.booleans())
def test_jsonl_lines_read_as_json_loads_reads_them(case: dict, spaced: bool) -> None:
    line = json.dumps(case, ensure_ascii=bool(spaced), separators=(", ", ": ") if spaced else None)
    fast = _fast_line(line)
    assert fast is _SLOW or (fast == json.loads(line) and type(fast) is dict)
    assert fast is _SLOW or plain_json(fast)  # what `Located.plain` promises the validator


# A key written twice anywhere, with any values and any colons in strings: never fast.
@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.text(max_size=4), json_values, min_size=1, max_size=4),
    json_values,
    st.booleans(),
    st.data(),
)
def test_a_key_written_twice_is_never_read_fast(
    case: dict, again: object, nested: bool, data: st.DataObject
) -> None:
    key = data.draw(st.sampled_from(sorted(case)))
    pair = f"{json.dumps(key)}: {json.dumps(again)}, "
    body = json.dumps(case)
    line = "{" + pair + body[1:]
    if nested:  # the duplicate one level down
        line = '{"outer": ' + line + ', "x": "a:b"}'
    assert json.loads(line) is not None  # still JSON the json module reads
    assert _fast_line(line) is _SLOW


@pytest.mark.parametrize(
    "line",
    [
        '{"id": "a", "id": "b"}',
        '{"id": "a", "calls": [{"tool": "t", "tool": "u"}]}',
        '{"a": {"x": 1, "x": 1}, "b": "time: 10:00"}',
        '{"a": 1, "a": 2, "b": "\\u003a"}',  # an escaped colon standing in for the lost pair
        '{"a": NaN}',
        '{"a": 123456789012345678901234567890}',
        '{"a": "\\ud800"}',
    ],
)
def test_lines_the_fast_reader_leaves_to_the_json_module(line: str) -> None:
    assert _fast_line(line) is _SLOW


def test_a_duplicate_key_is_still_reported(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "exchange_id": "x", "id": "b"}\n{"id": "ok: yes"}\n')
    issues: list[Issue] = []
    located = read_located(path, issues)
    assert [str(i) for i in issues] == [f"{path}:1: not valid JSON: duplicate key 'id'"]
    assert [item.raw for item in located] == [{"id": "ok: yes"}]


def test_a_jsonl_line_that_does_not_parse_says_where_once(tmp_path):
    """json's own message may already end in "at" ("Unterminated string starting at"):
    the column follows it without a second "at"."""
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "exchange_id": "ex\n{"id": "b" "x": 1}\n', encoding="utf-8")
    issues: list[Issue] = []
    assert read_located(path, issues) == []
    assert [(i.line, i.message) for i in issues] == [
        (1, "not valid JSON: Unterminated string starting at column 28"),
        (2, "not valid JSON: Expecting ',' delimiter at column 12"),
    ]


def test_a_file_that_cannot_be_read_is_named_once(tmp_path):
    """The file led the line and was named again inside the OS error ("none.yaml: cannot
    read: [Errno 2] No such file or directory: 'none.yaml'"), a directory twice, and a
    binary file spoke of codecs."""
    missing, folder = tmp_path / "none.yaml", tmp_path / "cases"
    folder.mkdir()
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"cases:\n  - id: \xd0\x28\n")
    issues: list[Issue] = []
    for path in (missing, folder, binary):
        assert read_located(path, issues) == []
    assert [str(i) for i in issues] == [
        f"{missing}: cannot read: No such file or directory",
        f"{folder}: expectation files end in .yaml, .yml or .jsonl",
        f"{binary}: cannot read: not UTF-8 text (invalid continuation byte at byte 15)",
    ]
