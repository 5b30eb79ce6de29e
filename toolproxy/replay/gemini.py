"""A Gemini generateContent request, as the Chat Completions request a candidate serves. Pure.

The capture reads Gemini's `contents` (`wire.gemini`); a replay sends:

- a `model` content → an assistant message: its text (thoughts left out) and its
  `functionCall` parts as `tool_calls` with their `args` as compact JSON text and, when a
  call has none, an id made up from its place (`call_gemini_<content>_<k>`);
- a `functionResponse` part → a `tool` message answering the call of that id, else the
  next call of the assistant message before it by place (one with no call left to answer
  is dropped, noted); the user text of the same content after it;
- other parts (inline data, files, code execution) left out with a note;
- the params: `generationConfig` `temperature`, `topP` → `top_p`, `maxOutputTokens` →
  `max_tokens`, `stopSequences` → `stop`, `seed`, a JSON `responseMimeType` with
  `responseJsonSchema` / `responseSchema` → `response_format`; `toolConfig`'s
  `functionCallingConfig` mode AUTO / ANY / NONE → `tool_choice` "auto" / "required" /
  "none" (ANY with one allowed function → that function); the rest (`safetySettings`,
  `topK`, `thinkingConfig`, ...) dropped with a note.
"""

from __future__ import annotations

from typing import Any

from toolproxy.replay.chatmsg import (
    answer,
    answered,
    assistant,
    chat_call,
    compact,
    function_choice,
)
from toolproxy.wire.gemini import field, json_schema

PREFIX = "call_gemini_"
_CONFIG = {
    "temperature": "temperature",
    "topP": "top_p",
    "maxOutputTokens": "max_tokens",
    "stopSequences": "stop",
    "seed": "seed",
}
_MODES = {"AUTO": "auto", "ANY": "required", "NONE": "none", "VALIDATED": "auto"}


def chat_messages(contents: Any, notes: list[str]) -> list[dict[str, Any]]:
    """`contents` as Chat messages (see the module doc)."""
    out: list[dict[str, Any]] = []
    waiting: list[str] = []  # the last assistant message's call ids not answered yet
    made = 0
    for n, content in enumerate(contents if isinstance(contents, list) else []):
        if not isinstance(content, dict):
            notes.append(f"contents[{n}]: dropped a non-object content")
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        answers: list[dict[str, Any]] = []
        parts = content.get("parts")
        for part in parts if isinstance(parts, list) else []:
            part = part if isinstance(part, dict) else {}
            call, reply = field(part, "functionCall"), field(part, "functionResponse")
            if isinstance(part.get("text"), str):
                if part.get("thought") is not True:
                    texts.append(part["text"])
            elif isinstance(call, dict):
                call_id = call.get("id") if isinstance(call.get("id"), str) else None
                made += call_id is None
                call_id = call_id or f"{PREFIX}{n}_{len(calls)}"
                text = compact(call.get("args", {}))
                calls.append(chat_call(call_id, call.get("name"), text))
            elif isinstance(reply, dict):
                own = answered(reply.get("id"), waiting)
                if own is None:
                    notes.append(f"contents[{n}]: dropped a function response with no call")
                    continue
                response = reply.get("response")
                text = response if isinstance(response, str) else compact(response)
                answers.append(answer(own, text))
            elif not part.get("thoughtSignature") and not part.get("thought_signature"):
                kinds = ", ".join(sorted(str(k) for k in part)) or "empty"
                notes.append(f"contents[{n}]: dropped a part ({kinds}: no text)")
        if content.get("role") == "model":
            out.append(assistant("\n".join(texts), calls))
            waiting = [c["id"] for c in calls]
            continue
        out.extend(answers)
        if texts or not answers:
            out.append({"role": "user", "content": "\n".join(texts)})
    if made:
        notes.append(f"contents: {made} call(s) without an id given one ({PREFIX}<content>_<k>)")
    return out


def chat_params(
    params: dict[str, Any], out: dict[str, Any], used: set[str], notes: list[str]
) -> None:
    """Fill `out` with the Chat params of a generateContent request's `params` (see the
    module doc); `used`: the request's keys carried over (the others are noted dropped)."""
    for name in ("generationConfig", "generation_config"):
        config = params.get(name)
        if isinstance(config, dict):
            used.add(name)
            _generation(config, out, notes)
    for name in ("toolConfig", "tool_config"):
        config = params.get(name)
        found = field(config, "functionCallingConfig") if isinstance(config, dict) else None
        calling: dict[str, Any] = found if isinstance(found, dict) else {}
        mode = field(calling, "mode")
        if isinstance(mode, str) and mode.upper() in _MODES:
            used.add(name)
            allowed = field(calling, "allowedFunctionNames") or []
            if mode.upper() == "ANY" and isinstance(allowed, list) and len(allowed) == 1:
                out["tool_choice"] = function_choice(allowed[0])
            else:
                out["tool_choice"] = _MODES[mode.upper()]


def _generation(config: dict[str, Any], out: dict[str, Any], notes: list[str]) -> None:
    rest = []
    for key, value in config.items():
        camel = "".join(w.capitalize() if i else w for i, w in enumerate(key.split("_")))
        if camel in _CONFIG:
            out[_CONFIG[camel]] = value
        elif camel not in ("responseMimeType", "responseSchema", "responseJsonSchema"):
            rest.append(key)
    schema = field(config, "responseJsonSchema")
    if schema is None and field(config, "responseSchema") is not None:
        schema = json_schema(field(config, "responseSchema"))
    if field(config, "responseMimeType") == "application/json":
        out["response_format"] = (
            {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
            if isinstance(schema, dict)
            else {"type": "json_object"}
        )
    if rest:
        notes.append(f"params: dropped generationConfig {', '.join(sorted(rest))} (Gemini's own)")
