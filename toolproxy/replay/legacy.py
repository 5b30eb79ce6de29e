"""A Chat request of the legacy functions API, in the `tools` form a candidate serves. Pure.

Before `tools`, Chat Completions offered `functions`, a model called one with the
assistant message's `function_call` (no id) and the agent answered with a `function`
message (naming the function, not the call). The capture records the functions as offered
tools and each `function_call` as a call without an id (`wire.openai_chat`); a replay sends
them as a candidate serving only `tools` (vLLM, llama.cpp, Ollama, hosted) understands:

- an assistant `function_call` → one more entry of its `tool_calls`, with an id made up
  from the message's position (`call_legacy_<n>`);
- a `function` message → a `tool` message answering the call of the assistant message
  before it (as the capture links it, `capture.session`); a second one, or one with no
  such call to answer, stays as it was;
- the `function_call` param → `tool_choice` ("auto" / "none" as they are,
  `{"name": N}` → `{"type": "function", "function": {"name": N}}`), unless the request
  has a `tool_choice` of its own.
"""

from __future__ import annotations

from typing import Any

PREFIX = "call_legacy_"


def modern_messages(messages: list[dict[str, Any]], notes: list[str]) -> list[dict[str, Any]]:
    """`messages` with legacy calls and results in the `tools` form (changed messages are
    new dicts; the others are the same objects). One note when anything changed."""
    out: list[dict[str, Any]] = []
    waiting: str | None = None  # the id made up for the latest assistant message's call
    changed = 0
    for n, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            waiting = None
            called = message.get("function_call")
            if isinstance(called, dict):
                waiting = f"{PREFIX}{n}"
                call = {"id": waiting, "type": "function", "function": dict(called)}
                message = {k: v for k, v in message.items() if k != "function_call"}
                message["tool_calls"] = [*_calls(message), call]
                changed += 1
        elif role == "function" and "tool_call_id" not in message and waiting is not None:
            message = {"role": "tool", "tool_call_id": waiting, "content": _content(message)}
            waiting, changed = None, changed + 1
        out.append(message)
    if changed:
        notes.append(
            f"messages: {changed} legacy function_call / function message(s) sent as tool "
            f"calls and results (ids {PREFIX}<n>, n the call's message)"
        )
    return out


def tool_choice(params: dict[str, Any], notes: list[str]) -> None:
    """The legacy `function_call` param as `tool_choice`, in place (see the module)."""
    if "function_call" not in params:
        return
    choice = params.pop("function_call")
    if "tool_choice" in params:
        notes.append("params: dropped function_call (the request has a tool_choice)")
    elif choice in ("auto", "none"):
        params["tool_choice"] = choice
    elif isinstance(choice, dict) and isinstance(choice.get("name"), str):
        params["tool_choice"] = {"type": "function", "function": {"name": choice["name"]}}
    else:
        notes.append(f"params: dropped function_call {choice!r} (not auto, none or a name)")


def _calls(message: dict[str, Any]) -> list[Any]:
    calls = message.get("tool_calls")
    return list(calls) if isinstance(calls, list) else []


def _content(message: dict[str, Any]) -> Any:
    content = message.get("content")
    return "" if content is None else content
