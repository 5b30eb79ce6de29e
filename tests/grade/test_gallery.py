"""The failure-transcript gallery: user text in every wire format, call matching, Markdown."""

from __future__ import annotations

import pytest

from toolproxy.grade.gallery import (
    TEXT_LIMIT,
    clip,
    last_user_text,
    render_gallery,
    render_transcript,
    transcript_of,
)
from toolproxy.grade.grades import ArgGrade, CallGrade, CaseGrade


@pytest.mark.parametrize(
    ("messages", "text"),
    [
        ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], "b"),
        (  # OpenAI chat parts; a later tool message is not the user's
            [
                {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
                {"role": "assistant", "content": None},
                {"role": "tool", "tool_call_id": "c", "content": "sunny"},
            ],
            "weather?",
        ),
        (  # Responses API: a string input, or items with input_text parts
            "plain input",
            "plain input",
        ),
        (
            [
                {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                {"type": "function_call_output", "call_id": "c", "output": "x"},
            ],
            "hi",
        ),
        (  # Anthropic: a tool_result-only user turn is skipped
            [
                {"role": "user", "content": "book it"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t"}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]},
            ],
            "book it",
        ),
        (  # Gemini: text parts; a functionResponse-only user content is skipped
            [
                {"role": "user", "parts": [{"text": "Paris and"}, {"text": "Lyon?"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
            ],
            "Paris and\nLyon?",
        ),
        (  # Bedrock Converse: untyped text blocks; a toolResult-only user message is skipped
            [
                {"role": "user", "content": [{"text": "Oslo"}, {"image": {}}, {"text": "now?"}]},
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "f"}}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": []}}]},
            ],
            "Oslo\nnow?",
        ),
        (None, None),
        ({"role": "user"}, None),
        ([{"role": "assistant", "content": "x"}], None),
    ],
)
def test_last_user_text(messages: object, text: str | None) -> None:
    assert last_user_text(messages) == text


def test_clip() -> None:
    assert clip(None) is None
    assert clip("a \n  b") == "a b"
    long = clip("x" * (TEXT_LIMIT + 10))
    assert long is not None and len(long) == TEXT_LIMIT and long.endswith("…")


def grade(calls: list[CallGrade], **kw: object) -> CaseGrade:
    return CaseGrade(case_id="c", exchange_id="x", passed=False, calls=calls, **kw)  # type: ignore[arg-type]


def test_calls_are_matched_by_id_then_by_position() -> None:
    raw = [("id-a", "a", '{"n": 1}'), ("id-b", "b", "{bad"), (None, "c", "{}")]
    calls = [
        CallGrade(expected_tool="b", actual_tool="b", call_id="id-b", stage_failed="parse"),
        CallGrade(expected_tool="a", actual_tool="a", call_id="gone"),  # falls back: position 1
        CallGrade(expected_tool="z", actual_tool=None),  # not emitted: no raw call consumed
        CallGrade(expected_tool="c", actual_tool="c"),
    ]
    t = transcript_of("r", grade(calls, label="malformed_json"), None, "ignored", raw)
    assert [c.actual for c in t.calls] == ["b({bad)", "b({bad)", None, "c({})"]
    assert t.assistant_text is None  # the model made calls
    assert t.user is None and t.label == "malformed_json"


def test_without_call_grades_expected_and_emitted_pair_by_position() -> None:
    t = transcript_of(
        "r",
        grade([], label="no_call", expected_tools=["get", "put"]),
        [{"role": "user", "content": "go"}],
        "I cannot   do that",
        [],
    )
    assert [(c.expected, c.actual) for c in t.calls] == [("get", None), ("put", None)]
    assert t.assistant_text == "I cannot do that" and t.user == "go"
    t = transcript_of("r", grade([], label="spurious_call"), None, None, [("i", "get", "{}")])
    assert [(c.expected, c.actual) for c in t.calls] == [(None, "get({})")]


def test_markdown_shows_buckets_errors_and_judge_reasons() -> None:
    call = CallGrade(
        expected_tool="get",
        actual_tool="get",
        stage_failed="semantic",
        label="hallucinated_param",
        args=[
            ArgGrade(name="city", bucket="hallucinated", detail="expected 'Paris'"),
            ArgGrade(name="when", bucket="missing"),
            ArgGrade(name="mood", bucket="hallucinated", judged=True, judge_reason="not happy"),
        ],
        errors=["city mismatch"],
    )
    t = transcript_of("run1", grade([call]), [{"role": "user", "content": "q"}], None,
                      [("i", "get", '{"city": "`Pari`"}')])  # fmt: skip
    md = render_transcript(t)
    assert md.startswith("#### c (run1)")
    assert "- user: q" in md and "- exchange: `x`" in md
    assert 'actual `get({"city": "\'Pari\'"})` (failed at semantic: hallucinated_param)' in md
    assert "  - `city` hallucinated: expected 'Paris'" in md
    assert "  - `when` missing" in md
    assert "  - `mood` hallucinated (judge: not happy)" in md
    assert "  - error: city mismatch" in md
    gallery = render_gallery({"hallucinated_param": [t]})
    assert "### `hallucinated_param` (1 shown)" in gallery and md in gallery
    assert "No failing cases." in render_gallery({})
    no_user = transcript_of("r", grade([]), None, "hello", [])
    assert "- user: (not recorded)" in render_transcript(no_user)
    assert "- assistant said: hello" in render_transcript(no_user)
