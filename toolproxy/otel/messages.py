"""A request's conversation and a reply as span attributes (pure): the GenAI conventions'
`gen_ai.input.messages` / `gen_ai.output.messages` (role + parts, as JSON) and
OpenInference's flattened `llm.input_messages.<i>.message.*` / `llm.output_messages.*`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolproxy.records import Turn
from toolproxy.store.rows import CallRow
from toolproxy.wire import anthropic, bedrock, gemini, ollama, openai_chat, openai_responses

type AttrValue = str | bool | int | float | list[str]

TEXT_LIMIT = 32_000  # characters of any one text attribute (backends cap attribute size)


def clip(text: str | None) -> str | None:
    if text is None or len(text) <= TEXT_LIMIT:
        return text
    return text[: TEXT_LIMIT - 1] + "…"


def as_json(value: Any) -> str:
    return clip(json.dumps(value, ensure_ascii=False, default=str)) or ""


def put(attrs: dict[str, AttrValue], key: str, value: Any) -> None:
    if value is not None and value != "":
        attrs[key] = value if isinstance(value, (bool, int, float)) else str(value)


def turns_of(wire_format: str | None, system: Any, messages: Any) -> list[Turn]:
    """The request's conversation as format-independent turns (the wire parsers' own)."""
    if wire_format == "openai_chat":
        return openai_chat.build_turns(messages)
    if wire_format == "openai_responses":
        return openai_responses.build_turns(system, messages)
    if wire_format == "anthropic_messages":
        return anthropic.build_turns(system, messages)
    if wire_format == "ollama_chat":
        return ollama.build_turns(messages)
    if wire_format == "gemini":
        return gemini.build_turns(system, messages)
    if wire_format == "bedrock_converse":
        return bedrock.build_turns(system, messages)
    return []


def input_messages(turns: list[Turn], system: Any, wire_format: str | None) -> dict[str, AttrValue]:
    attrs: dict[str, AttrValue] = {}
    semconv: list[dict[str, Any]] = []
    if isinstance(system, str) and system and wire_format != "openai_chat":
        attrs["gen_ai.system_instructions"] = as_json([{"type": "text", "content": system}])
    for i, t in enumerate(turns):
        prefix = f"llm.input_messages.{i}.message"
        attrs[f"{prefix}.role"] = t.role
        if t.text:
            attrs[f"{prefix}.content"] = clip(t.text) or ""
        if t.call_id:
            attrs[f"{prefix}.tool_call_id"] = t.call_id
        for j, (call_id, name, arguments) in enumerate(t.calls):
            call = f"{prefix}.tool_calls.{j}.tool_call"
            put(attrs, f"{call}.id", call_id)
            put(attrs, f"{call}.function.name", name)
            attrs[f"{call}.function.arguments"] = clip(arguments) or ""
        semconv.append(_semconv_message(t))
    if semconv:
        attrs["gen_ai.input.messages"] = as_json(semconv)
    last_user = next((t.text for t in reversed(turns) if t.role == "user" and t.text), None)
    if last_user:
        attrs["input.value"] = clip(last_user) or ""
        attrs["input.mime_type"] = "text/plain"
    return attrs


def _semconv_message(t: Turn) -> dict[str, Any]:
    """A turn in the GenAI conventions' message shape (role + parts)."""
    parts: list[dict[str, Any]] = []
    if t.role == "tool":
        parts.append({"type": "tool_call_response", "id": t.call_id, "response": t.text})
        return {"role": "tool", "parts": parts}
    if t.text:
        parts.append({"type": "text", "content": t.text})
    for call_id, name, arguments in t.calls:
        parts.append({"type": "tool_call", "id": call_id, "name": name, "arguments": arguments})
    return {"role": t.role, "parts": parts}


def output_messages(
    text: str | None, calls: Sequence[CallRow], finish_reason: str | None
) -> dict[str, AttrValue]:
    if not text and not calls:
        return {}
    prefix = "llm.output_messages.0.message"
    attrs: dict[str, AttrValue] = {f"{prefix}.role": "assistant"}
    parts: list[dict[str, Any]] = []
    if text:
        attrs[f"{prefix}.content"] = clip(text) or ""
        parts.append({"type": "text", "content": text})
    for j, c in enumerate(calls):
        call = f"{prefix}.tool_calls.{j}.tool_call"
        put(attrs, f"{call}.id", c.call_id)
        put(attrs, f"{call}.function.name", c.name)
        attrs[f"{call}.function.arguments"] = clip(c.arguments_raw) or ""
        parts.append(
            {"type": "tool_call", "id": c.call_id, "name": c.name, "arguments": c.arguments_raw}
        )
    message: dict[str, Any] = {"role": "assistant", "parts": parts}
    if finish_reason:
        message["finish_reason"] = finish_reason
    attrs["gen_ai.output.messages"] = as_json([message])
    summary = text or "; ".join(f"{c.name}({c.arguments_raw or ''})" for c in calls)
    attrs["output.value"] = clip(summary) or ""
    attrs["output.mime_type"] = "text/plain"
    return attrs
