"""A Bedrock Converse request, as the Chat Completions request a candidate serves. Pure.

The capture reads Converse's `messages` (`wire.bedrock`); a replay sends:

- an `assistant` message → an assistant message: its `text` blocks joined (reasoning
  left out) and its `toolUse` blocks as `tool_calls` (`toolUseId` the id, `input` as
  compact JSON text);
- a `toolResult` block → a `tool` message answering its `toolUseId` (its text and json
  items joined, as the capture records it; `status: error` kept as an `Error: ` prefix),
  before the user text of the same message;
- other blocks (`image`, `document`, `video`, `cachePoint`, `guardContent`) left out with
  a note;
- the params: `inferenceConfig` `maxTokens` → `max_tokens`, `temperature`, `topP` →
  `top_p`, `stopSequences` → `stop`; `toolConfig.toolChoice` `auto` / `any` / `tool`
  → `tool_choice` "auto" / "required" / that function; `additionalModelRequestFields`,
  `guardrailConfig`, `performanceConfig`, ... dropped with a note.
"""

from __future__ import annotations

from typing import Any

from toolproxy.replay.chatmsg import answer, assistant, chat_call, compact, function_choice
from toolproxy.wire.bedrock import result_text

_INFERENCE = {
    "maxTokens": "max_tokens",
    "temperature": "temperature",
    "topP": "top_p",
    "stopSequences": "stop",
}
_QUIET = frozenset({"cachePoint", "reasoningContent"})  # left out without a note


def chat_messages(messages: Any, notes: list[str]) -> list[dict[str, Any]]:
    """`messages` as Chat messages (see the module doc)."""
    out: list[dict[str, Any]] = []
    for n, message in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(message, dict):
            notes.append(f"messages[{n}]: dropped a non-object message")
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        answers: list[dict[str, Any]] = []
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            block = block if isinstance(block, dict) else {}
            use, result = block.get("toolUse"), block.get("toolResult")
            if isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif isinstance(use, dict):
                calls.append(
                    chat_call(use.get("toolUseId"), use.get("name"), compact(use.get("input", {})))
                )
            elif isinstance(result, dict):
                text = result_text(result)
                text = f"Error: {text}" if result.get("status") == "error" else text
                answers.append(answer(result.get("toolUseId"), text))
            elif not _QUIET.intersection(block):
                kinds = ", ".join(sorted(str(k) for k in block)) or "empty"
                notes.append(f"messages[{n}]: dropped a block ({kinds}: no text)")
        if message.get("role") == "assistant":
            out.append(assistant("\n".join(texts), calls))
            continue
        out.extend(answers)
        if texts or not answers:
            out.append({"role": "user", "content": "\n".join(texts)})
    return out


def chat_params(
    params: dict[str, Any], out: dict[str, Any], used: set[str], notes: list[str]
) -> None:
    """Fill `out` with the Chat params of a Converse request's `params` (see the module
    doc); `used`: the request's keys carried over (the others are noted dropped)."""
    config = params.get("inferenceConfig")
    if isinstance(config, dict):
        used.add("inferenceConfig")
        for key, value in config.items():
            if key in _INFERENCE:
                out[_INFERENCE[key]] = value
            else:
                notes.append(f"params: dropped inferenceConfig {key} (Bedrock's own)")
    tools = params.get("toolConfig")
    choice = tools.get("toolChoice") if isinstance(tools, dict) else None
    if isinstance(tools, dict):
        used.add("toolConfig")  # its tools are the offered tools, sent as Chat's
    if isinstance(choice, dict):
        if "any" in choice:
            out["tool_choice"] = "required"
        elif isinstance(choice.get("tool"), dict):
            out["tool_choice"] = function_choice(choice["tool"].get("name"))
        elif "auto" in choice:
            out["tool_choice"] = "auto"
