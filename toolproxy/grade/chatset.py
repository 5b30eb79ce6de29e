"""OpenAI-format chat datasets (fine-tuning JSON lines) as expectation cases. Pure.

Each line is `{"messages": [...], "tools": [...]}` (or the legacy `functions`). Every
assistant message a line trains on (no `"weight": 0`) becomes one case: the messages
before it are the case's own conversation, the line's tools its tools block, and what the
assistant did is the expectation: its `tool_calls` (or legacy `function_call`) as the
calls with exact arguments, or `no_call` when it answered in text. The cases carry no
exchange, so they are graded after a replay (docs/replay.md).

A line that is not such a record is named (`data.jsonl:7: ...`) and skipped; the rest is
converted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolproxy.grade.model import Case, ExpectedCall, Matcher, Provenance

VIA = "import"


def _tools(record: dict[str, Any]) -> list[dict[str, Any]] | None:
    if isinstance(record.get("tools"), list):
        return record["tools"]
    if isinstance(record.get("functions"), list):  # legacy: functions + function_call
        return [{"type": "function", "function": f} for f in record["functions"]]
    return None


def _arguments(text: Any, where: str) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: arguments are not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{where}: arguments are {type(value).__name__}, not an object")
    return value


def _calls(message: dict[str, Any]) -> list[ExpectedCall]:
    raw = message.get("tool_calls") or []
    if not raw and isinstance(message.get("function_call"), dict):
        raw = [{"function": message["function_call"]}]
    if not isinstance(raw, list):
        raise ValueError("tool_calls is not a list")
    calls = []
    for i, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ValueError(f"tool_calls[{i}] has no function name")
        args = _arguments(function.get("arguments", "{}"), f"tool_calls[{i}]")
        calls.append(
            ExpectedCall(tool=function["name"], args={k: Matcher(value=v) for k, v in args.items()})
        )
    return calls


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "chat"


def cases_from_record(
    record: Any, stem: str, line: int, by: str | None = None, at: str | None = None
) -> list[Case]:
    """The cases of one dataset line; ValueError names what is wrong with it."""
    if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
        raise ValueError("not a chat record: no messages list")
    messages, tools = record["messages"], _tools(record)
    cases = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message:
            raise ValueError(f"messages[{index}] has no role")
        if message["role"] != "assistant" or message.get("weight", 1) == 0 or index == 0:
            continue
        try:
            calls = _calls(message)
        except ValueError as exc:
            raise ValueError(f"messages[{index}]: {exc}") from None
        names = "+".join(dict.fromkeys(c.tool for c in calls)) or "no_call"
        cases.append(
            Case(
                id=f"{names}-{_slug(stem)}-{line}-{index}",
                wire_format="openai_chat",
                messages=[_without_weight(m) for m in messages[:index]],
                tools=tools,
                expect="call" if calls else "no_call",
                calls=calls,
                order="unordered" if len(calls) > 1 else "ordered",
                notes=f"imported from {stem} line {line}, assistant message {index}",
                provenance=Provenance(by=by, at=at, via=VIA),
            )
        )
    if not cases:
        raise ValueError("no assistant message to learn from after the first message")
    return cases


def _without_weight(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "weight"}


def cases_from_lines(
    lines: Iterable[str], source: Path, by: str | None = None, at: str | None = None
) -> tuple[list[Case], list[str]]:
    """(cases, problems) of a whole dataset; each problem is `file:line: why`."""
    cases: list[Case] = []
    problems: list[str] = []
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
            cases.extend(cases_from_record(record, source.stem, number, by, at))
        except ValueError as exc:  # JSONDecodeError is one
            problems.append(f"{source}:{number}: {exc}")
    return cases, problems


def is_chat_dataset(first_line: str) -> bool:
    """Whether a JSON line looks like a chat dataset's record (has a messages list)."""
    try:
        record = json.loads(first_line)
    except ValueError:
        return False
    return isinstance(record, dict) and isinstance(record.get("messages"), list)
