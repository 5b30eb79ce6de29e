"""A request of Ollama's own chat API, as the Chat Completions request a candidate serves. Pure.

Ollama's `/api/chat` (`wire.ollama`) sends messages much as Chat does, but a call's
`arguments` is an object, a call has no id, and a `tool` message names no call (the k-th
one after an assistant message answers its k-th call). A replay sends:

- each call with its arguments as compact JSON text and, when it has none, an id made up
  from its place (`call_ollama_<message>_<k>`);
- each `tool` message answering the call it answers by place (its own `tool_call_id`
  when it has one); one with no call left to answer is dropped, noted;
- `images` and `thinking` left out (noted for images);
- the params: `options` `temperature`, `top_p`, `seed`, `stop` as they are, `num_predict`
  → `max_tokens`; `format` "json" → `response_format` json_object, a JSON Schema → a
  json_schema one; the rest (`keep_alive`, `think`, other options) dropped with a note.
"""

from __future__ import annotations

from typing import Any

from toolproxy.replay.chatmsg import answer, answered, assistant, chat_call, compact

PREFIX = "call_ollama_"
_OPTIONS = {"temperature": "temperature", "top_p": "top_p", "seed": "seed", "stop": "stop"}


def chat_messages(messages: Any, notes: list[str]) -> list[dict[str, Any]]:
    """`messages` of an /api/chat request as Chat messages (see the module doc)."""
    out: list[dict[str, Any]] = []
    waiting: list[str] = []  # ids of the last assistant message's calls not answered yet
    made = 0
    for n, message in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(message, dict):
            notes.append(f"messages[{n}]: dropped a non-object message")
            continue
        role = message.get("role") or "user"
        said = message.get("content")
        content = said if isinstance(said, str) else ""
        if message.get("images"):
            notes.append(f"messages[{n}]: dropped its images (no text)")
        if role == "assistant":
            calls: list[dict[str, Any]] = []
            ids: list[str] = []
            listed = message.get("tool_calls")
            for k, call in enumerate(listed if isinstance(listed, list) else []):
                if not isinstance(call, dict):
                    continue
                found = call.get("function")
                spec: dict[str, Any] = found if isinstance(found, dict) else {}
                call_id = call.get("id") if isinstance(call.get("id"), str) else None
                made += call_id is None
                call_id = call_id or f"{PREFIX}{n}_{k}"
                arguments = spec.get("arguments", {})
                text = arguments if isinstance(arguments, str) else compact(arguments)
                ids.append(call_id)
                calls.append(chat_call(call_id, spec.get("name"), text))
            out.append(assistant(content, calls))
            waiting = ids
        elif role == "tool":
            own = answered(message.get("tool_call_id"), waiting)
            if own is None:
                notes.append(f"messages[{n}]: dropped a tool message with no call to answer")
                continue
            out.append(answer(own, content))
        else:
            out.append({"role": role, "content": content})
    if made:
        notes.append(f"messages: {made} call(s) without an id given one ({PREFIX}<message>_<k>)")
    return out


def chat_params(
    params: dict[str, Any], out: dict[str, Any], used: set[str], notes: list[str]
) -> None:
    """Fill `out` with the Chat params of an /api/chat request's `params` (see the module
    doc); `used`: the request's keys carried over (the others are noted as dropped)."""
    options = params.get("options")
    if isinstance(options, dict):
        used.add("options")
        for key, target in (*_OPTIONS.items(), ("num_predict", "max_tokens")):
            if key in options:
                out[target] = options[key]
        rest = sorted(k for k in options if k not in _OPTIONS and k != "num_predict")
        if rest:
            notes.append(f"params: dropped options {', '.join(map(str, rest))} (Ollama's own)")
    fmt = params.get("format")
    if fmt == "json":
        out["response_format"] = {"type": "json_object"}
        used.add("format")
    elif isinstance(fmt, dict):
        schema = {"name": "output", "schema": fmt}
        out["response_format"] = {"type": "json_schema", "json_schema": schema}
        used.add("format")
