"""The Chat Completions pieces a replay writes, made in one place. Pure.

Every converter (`convert`, `hosted`, `ollama`, `gemini`) says the recorded conversation
with these: a call of an assistant message, the assistant message, the `tool` message
answering a call, a `tool_choice` naming one function, arguments as compact JSON text (as
the capture records an object's: `wire.common.make_call`).
"""

from __future__ import annotations

import json
from typing import Any


def chat_call(call_id: Any, name: Any, arguments: str) -> dict[str, Any]:
    """One entry of an assistant message's `tool_calls`."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant(text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """An assistant message (`content` None when there is no text)."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return message


def answer(call_id: Any, content: str) -> dict[str, Any]:
    """The `tool` message answering a call."""
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def answered(own: Any, waiting: list[str]) -> str | None:
    """The call a result answers: its own id when it names one, else the first call still
    `waiting` (the calls of the assistant message before it, taken by place); that call is
    no longer waiting. None: it names none and none waits."""
    if isinstance(own, str):
        waiting[:] = [w for w in waiting if w != own]
        return own
    return waiting.pop(0) if waiting else None


def function_choice(name: Any) -> dict[str, Any]:
    """A `tool_choice` that names one function."""
    return {"type": "function", "function": {"name": name}}


def compact(value: Any) -> str:
    """A value as compact JSON text, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
