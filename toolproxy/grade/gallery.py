"""The failure-transcript gallery: short transcripts of the cases that earned each label.

Pure: built from a case's grade, its exchange's recorded messages and its raw tool calls.
A transcript holds the user's last message (the last user turn with text, in any of the
model wire formats; tool-result-only turns are skipped), the assistant's text when it made
no call, and per graded call: the expected tool, the actual call as emitted
(`name(arguments_raw)`), the stage that failed, the per-argument buckets and the errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest
from typing import Any

from pydantic import BaseModel, Field

from toolproxy.grade.grades import ArgGrade, CaseGrade

TEXT_LIMIT = 400


class TranscriptCall(BaseModel):
    """One expected/actual call pair as the gallery shows it."""

    expected: str | None = Field(description="expected tool, None when none was expected")
    actual: str | None = Field(description="`name(arguments_raw)` as emitted, or None")
    stage_failed: str | None = None
    label: str | None = None
    args: list[ArgGrade] = Field(default_factory=list, description="per-argument buckets")
    errors: list[str] = Field(default_factory=list)
    result: str | None = Field(
        default=None, description="the tool result the agent sent back for this very call"
    )


class Transcript(BaseModel):
    """One failing case, short enough to read in a report."""

    run: str
    case_id: str
    exchange_id: str | None
    label: str | None
    user: str | None = Field(description="the user's last message (cut to TEXT_LIMIT)")
    assistant_text: str | None = Field(description="what the model said, when it called nothing")
    calls: list[TranscriptCall]


def clip(text: str | None, limit: int = TEXT_LIMIT) -> str | None:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    if text is None:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _text(content: Any) -> str:
    """Text parts of a message's content: a string, or a list of text/input_text parts
    (or of untyped `text` blocks: Bedrock Converse's)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and p.get("type", "text") in ("text", "input_text")
        ]
        return "\n".join(p for p in parts if isinstance(p, str) and p)
    return ""


def last_user_text(messages: Any) -> str | None:
    """The last user message with text: OpenAI Chat/Responses (a string `input` too),
    Anthropic Messages, Ollama's /api/chat, Gemini's `contents` (text `parts`) and
    Bedrock Converse's `messages`."""
    if isinstance(messages, str):
        return messages
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            text = _text(message.get("content"))
            if not text and isinstance(message.get("parts"), list):  # Gemini's
                texts = [p.get("text") for p in message["parts"] if isinstance(p, dict)]
                text = "\n".join(t for t in texts if isinstance(t, str) and t)
            if text.strip():
                return text
    return None


def transcript_of(
    run: str,
    grade: CaseGrade,
    messages: Any,
    assistant_text: str | None,
    raw_calls: Sequence[tuple[Any, ...]],
) -> Transcript:
    """A case's transcript. `raw_calls` are its exchange's (call_id, name, arguments_raw[,
    result]) in index order, the result being the one linked to that call
    (`call_results`); a graded call is matched by call id, else by its position among the
    graded calls that have an actual tool."""
    by_id = {c[0]: c for c in raw_calls if c[0]}
    calls, position = [], 0
    for cg in grade.calls:
        raw = None
        if cg.actual_tool is not None:
            raw = by_id.get(cg.call_id) if cg.call_id else None
            if raw is None and position < len(raw_calls):
                raw = raw_calls[position]
            position += 1
        actual = f"{raw[1]}({raw[2]})" if raw else cg.actual_tool
        calls.append(
            TranscriptCall(
                expected=cg.expected_tool,
                actual=clip(actual),
                stage_failed=cg.stage_failed,
                label=cg.label,
                args=cg.args,
                errors=cg.errors,
                result=clip(raw[3]) if raw and len(raw) > 3 else None,
            )
        )
    if not grade.calls:  # nothing graded per call: pair expected and emitted by position
        calls = [
            TranscriptCall(expected=e, actual=clip(f"{c[1]}({c[2]})") if c else None)
            for e, c in zip_longest(grade.expected_tools, raw_calls)
        ]
    return Transcript(
        run=run,
        case_id=grade.case_id,
        exchange_id=grade.exchange_id,
        label=grade.label,
        user=clip(last_user_text(messages)),
        assistant_text=clip(assistant_text) if not raw_calls else None,
        calls=calls,
    )


def _code(text: str | None) -> str:
    return "(none)" if text is None else "`" + text.replace("`", "'") + "`"


def render_transcript(t: Transcript) -> str:
    """One transcript as Markdown."""
    lines = [f"#### {t.case_id} ({t.run})", ""]
    if t.exchange_id:
        lines.append(f"- exchange: `{t.exchange_id}`")
    lines.append(f"- user: {t.user if t.user is not None else '(not recorded)'}")
    if t.assistant_text:
        lines.append(f"- assistant said: {t.assistant_text}")
    for c in t.calls:
        stage = f" (failed at {c.stage_failed}: {c.label})" if c.stage_failed else ""
        lines.append(f"- expected {_code(c.expected)}, actual {_code(c.actual)}{stage}")
        for a in c.args:
            detail = f": {a.detail}" if a.detail else ""
            judged = f" (judge: {a.judge_reason})" if a.judged and a.judge_reason else ""
            lines.append(f"  - `{a.name}` {a.bucket}{detail}{judged}")
        lines += [f"  - error: {e}" for e in c.errors]
        if c.result is not None:
            lines.append(f"  - result: {c.result}")
    return "\n".join(lines)


def render_gallery(gallery: dict[str, list[Transcript]]) -> str:
    """The gallery section of report.md: one heading per label, in the order given."""
    parts = ["## Failure transcripts"]
    if not gallery:
        parts.append("No failing cases.")
    for label, transcripts in gallery.items():
        parts.append(f"### `{label}` ({len(transcripts)} shown)")
        parts += [render_transcript(t) for t in transcripts]
    return "\n\n".join(parts)
