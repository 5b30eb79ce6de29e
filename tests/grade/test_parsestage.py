"""Why argument text is not a JSON object: truncation, escaping, or malformed."""

from __future__ import annotations

import gc
import json

import pytest

from toolproxy.grade.model import ExpectedCall
from toolproxy.grade.parsestage import (
    Call,
    Scan,
    call_arguments,
    classify,
    decode_nested,
    diagnose,
    explain,
    json_type,
    repair_escapes,
    scan,
)
from toolproxy.records import ToolCall
from toolproxy.util import compiled

VALID = [
    '{"city": "Paris"}',
    ' {"a": [1, -2.5e+3, true, false, null, {"b": "\\u00e9\\n"}]} ',
    "{}",
    '{"a": 0}',
    '{"a": "\\"quoted\\""}',
]


@pytest.mark.parametrize("text", VALID)
def test_objects_pass(text):
    assert classify(text) is None
    assert scan(text) == Scan("complete", len(text))
    assert explain(text) == ""


@pytest.mark.parametrize("text", VALID)
def test_every_strict_prefix_of_valid_json_is_truncation(text):
    body = text.strip()
    for cut in range(1, len(body)):
        assert classify(body[:cut]) == "truncation", body[:cut]


@pytest.mark.parametrize(
    "text",
    [
        '{"city": "Par',
        '{"a": 1',
        '{"a": 1.',
        '{"a": -',
        '{"a": 1e',
        '{"a": 1e+',
        '{"a": tr',
        '{"a": nul',
        '{"a": "\\',
        '{"a": "\\u00',
        '{"a": [',
        '{"a": [1,',
        '{"a"',
        '{"a":',
        "{",
    ],
)
def test_truncation(text):
    assert scan(text).status == "prefix"
    assert classify(text) == "truncation"
    assert explain(text).startswith("arguments end early")


@pytest.mark.parametrize(
    "text",
    [
        r'{"path": "C:\Users\ana"}',  # \U is no JSON escape
        r'{"q": "\x41"}',
        r'{"q": "\u00zz"}',
        '{"body": "line\nline"}',  # a raw newline in a string
        '{"body": "tab\there"}',
        '{"cmd": "echo "hi" now"}',  # an unescaped quote
        '{"cmd": "say "hi""}',
        r'"{\"city\": \"Paris\"}"',  # double-encoded
        json.dumps(json.dumps(json.dumps({"a": 1}))),  # triple-encoded
        r'{"path": "C:\Users',  # the bad escape comes before the cut
    ],
)
def test_escaping_error(text):
    assert classify(text) == "escaping_error"


@pytest.mark.parametrize(
    "text",
    [
        "{'city': 'Paris'}",
        '{"a": 1,}',
        '{"a": 1}}',
        '{"a": 1} trailing',
        '{"a": NaN}',
        '{"a": Infinity}',
        '{"a": 01}',
        '{"a": .5}',
        '{"a": True}',
        "{a: 1}",
        '```json\n{"a": 1}\n```',
        "",
        "   ",
        "[1, 2]",
        "42",
        "null",
        '"just text"',
        '"{\\"a\\": "',  # a string holding broken JSON
        '{"a" 1}',
        '{"a": 1 "b": 2}',
        '{"a": [1 2]}',
        '{"a": fals}',
        "]",
    ],
)
def test_malformed(text):
    assert classify(text) == "malformed_json"


def test_nesting_too_deep_to_parse_is_malformed_not_truncated():
    text = "[" * 100_000 + "]" * 100_000
    assert scan(text).status == "complete"  # no recursion in the state machine
    assert classify('{"a": ' + text + "}") == "malformed_json"


def test_scan_reports_where_and_why():
    assert scan(r'{"a": "\q"}') == Scan("error", 7, "escape")
    assert scan('{"a": "\x01"}') == Scan("error", 7, "control")
    assert scan('{"a": 1,}') == Scan("error", 8, "syntax")
    assert scan("  ") == Scan("empty", 2)


def test_repair_escapes_fixes_the_usual_mistakes():
    assert json.loads(repair_escapes('{"cmd": "echo "hi" now"}')) == {"cmd": 'echo "hi" now'}
    assert json.loads(repair_escapes(r'{"p": "C:\Users"}')) == {"p": r"C:\Users"}
    assert json.loads(repair_escapes('{"b": "a\nb"}')) == {"b": "a\nb"}
    assert repair_escapes('{"ok": "\\u00e9"}') == '{"ok": "\\u00e9"}'


def test_decode_nested_and_json_type():
    assert decode_nested('{"a": 1}') == {"a": 1}
    assert decode_nested("plain") == "plain"
    assert decode_nested(5) == 5
    assert [json_type(v) for v in ({}, [], "", 1, 1.5, True, None)] == [
        "object",
        "array",
        "string",
        "number",
        "number",
        "boolean",
        "null",
    ]


def test_explain_says_why():
    assert explain("[1]") == "arguments are a JSON array, not an object"
    assert explain('"{\\"a\\": 1}"') == "arguments are a JSON object encoded inside a JSON string"
    assert explain('{"a": 1,}').startswith("Expecting property name")
    assert explain("") == "empty arguments"


def test_a_call_is_read_once_and_the_reply_ending_early_relabels_only_raw_text() -> None:
    tool_call = ToolCall(index=2, call_id="c1", name="f", arguments_raw='{"a": 1,')
    call = Call(tool_call)
    assert (call.call, call.call_id, call.name, call.arguments) == (tool_call, "c1", "f", None)
    first = call_arguments(call, incomplete=False)
    assert first[:2] == (None, "truncation") and call.read == first  # read once, kept
    assert call_arguments(call, incomplete=False) == first
    bad = Call(ToolCall(name="f", arguments_raw="{'a': 1}"))
    assert call_arguments(bad, incomplete=False)[1] == "malformed_json"
    ended = call_arguments(bad, incomplete=True)
    assert ended[1] == "truncation" and ended[2].startswith("the reply ended early: ")
    assert call_arguments(bad, incomplete=False)[1] == "malformed_json"  # the reading kept
    listed = Call(ToolCall(name="f", arguments_raw="[1]", arguments=[1]))
    assert call_arguments(listed, incomplete=True)[1] == "malformed_json"  # the wire's reading
    parsed = Call(ToolCall(name="f", arguments_raw='{"a": 1}', arguments={"a": 1}))
    assert call_arguments(parsed, incomplete=True) == ({"a": 1}, None, "")


def test_a_call_made_where_a_dropped_one_was_is_read_afresh() -> None:
    # compiled, `Call` keeps its last dropped instance to make the next one from
    # (`free_list_len`), out of the cycle collector (`acyclic`): its reading and its
    # proof must not show through
    for _ in range(3):
        read = Call(ToolCall(name="f", arguments_raw="{'a': 1}"))
        assert call_arguments(read, incomplete=False)[1] == "malformed_json"
        read.proven = ExpectedCall(tool="f")
        del read
        fresh = Call(ToolCall(name="g", arguments_raw="{}", arguments={}))
        assert (fresh.read, fresh.proven, fresh.name) == (None, None, "g")
        assert call_arguments(fresh, incomplete=False) == ({}, None, "")
        assert gc.is_tracked(fresh) is not compiled.in_use()


def test_diagnose_gives_the_object_or_the_label_and_why_from_one_reading():
    """The label and the words `classify` and `explain` gave when each read the text apart."""
    assert diagnose('{"a": [1, 2]}') == ({"a": [1, 2]}, None, "")
    expected = {
        '{"a": 1': ("truncation", "arguments end early (Expecting ',' delimiter at char 7)"),
        '{"p": "C:\\x"}': ("escaping_error", "Invalid \\escape at char 9"),
        '"{\\"a\\": 1}"': (
            "escaping_error",
            "arguments are a JSON object encoded inside a JSON string",
        ),
        "[1]": ("malformed_json", "arguments are a JSON array, not an object"),
        "": ("malformed_json", "empty arguments"),
        "{'a': 1}": (
            "malformed_json",
            "Expecting property name enclosed in double quotes at char 1",
        ),
        '{"q": "say "hi""}': ("escaping_error", "Expecting ',' delimiter at char 12"),
    }
    for text, (label, why) in expected.items():
        assert diagnose(text) == (None, label, why), text
        assert (classify(text), explain(text)) == (label, why), text
