"""A recorded request, in any captured wire format, as a Chat Completions request. Pure.

`to_chat(wire_format, messages, system, tools_offered_rows, params)` takes what the store
holds for one exchange (`exchanges.messages` / `.system` / `.request_params`, decoded from
JSON, and its `tools_offered` rows) and returns a `ChatRequest`: messages, tools, params
and `notes` saying what had no Chat equivalent and was dropped.

Messages
    openai_chat         as sent (deep-copied); `system` is None for this format. A
                        message that is not an object (an agent may send one to a lenient
                        server) is dropped with a note, as in the other formats. The legacy
                        functions API's `function_call` and `function` messages become tool
                        calls and results (`replay.legacy`), with a note.
    openai_responses    `instructions` → a system message; `input` a string → one user
                        message; items: messages (user / assistant / system; developer →
                        system) with their text parts joined by newlines; consecutive
                        assistant messages and `function_call` items → one assistant
                        message with `tool_calls` (ids = `call_id`);
                        `function_call_output` → a role=tool message. A hosted MCP
                        server's calls (`mcp_call`, `mcp_approval_request`) → tool calls
                        answered by the results the provider got (`replay.hosted`), with
                        a note; its listings and approvals say nothing more. `reasoning`
                        items are dropped silently; anything else (images, custom-tool
                        calls and their outputs, other provider-run tool items, item
                        references) is dropped with a note.
    anthropic_messages  `system` → a system message; per message, text blocks → its text;
                        `tool_use` blocks → assistant `tool_calls` (arguments = compact
                        JSON of `input`, as the capture records them); `tool_result` blocks
                        → role=tool messages, placed *before* the user text of the same
                        message (Chat needs tool results right after the calls;
                        `is_error` has no Chat field, the content goes as is); thinking
                        blocks are dropped silently; images, documents and provider-run tool
                        blocks are dropped with a note. An assistant message with the MCP
                        connector's `mcp_tool_use` / `mcp_tool_result` blocks → tool calls
                        answered by those results, in block order (`replay.hosted`), noted.
    ollama_chat,        Ollama's /api/chat, Gemini's `contents` and Bedrock Converse's
    gemini,             `messages`: their calls → tool calls (ids made up by place where
    bedrock_converse    there are none), their results → the tool messages answering
                        them, their params mapped: `replay.ollama`, `replay.gemini`,
                        `replay.bedrock`.

Tools: the `tools_offered` rows of kind `function` in position order, as
`{"type": "function", "function": {name, description, parameters}}` (no parameters → an
empty object schema), and those of kind `mcp_tool` (a hosted MCP server's tools, as the
provider listed them) the same way, with a note; other kinds (provider built-ins, a hosted
MCP server itself, custom grammar tools) are dropped with a note.

Params (`KEEP_CHAT` are kept for openai_chat; the other formats are mapped):
    tool_choice     Chat's legacy `function_call` (`replay.legacy`); Anthropic
                    `{"type":"auto"|"any"|"none"}` → "auto" | "required" | "none",
                    `{"type":"tool","name":N}` → `{"type":"function","function":{"name":N}}`,
                    `disable_parallel_tool_use: true` → `parallel_tool_calls: false`;
                    Responses `{"type":"function","name":N}` → the Chat form,
                    `allowed_tools` → the Chat `allowed_tools` form; hosted-tool choices are
                    dropped with a note.
    max_tokens      from Responses `max_output_tokens` and Anthropic `max_tokens`
    stop            from Anthropic `stop_sequences`
    response_format from Responses `text.format` (json_schema / json_object)
    temperature, top_p, parallel_tool_calls as they are.
Everything else is provider-only or model-specific (`metadata`, `store`, `stream_options`,
`previous_response_id`, `reasoning`, `top_k`, `logit_bias`, ...) and is dropped with a
note. With no tools left, `tool_choice` and `parallel_tool_calls` are dropped too (the API
refuses them without tools). `stream` is not a param here: each `Step` carries it.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel, Field

from toolproxy.replay import bedrock, gemini, hosted, legacy, ollama
from toolproxy.replay.chatmsg import answer, assistant, chat_call, compact, function_choice
from toolproxy.wire.common import SCHEMA_KINDS
from toolproxy.wire.openai_responses import hosted_call

KEEP_CHAT = (
    "tool_choice",
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "parallel_tool_calls",
    "stop",
    "seed",
    "frequency_penalty",
    "presence_penalty",
    "response_format",
)
Params = dict[str, Any]  # request params, by name
_TEXT_PARTS = ("text", "input_text", "output_text")
_SILENT_ITEMS = ("reasoning",)  # model-internal: a candidate could not use them anyway
_SILENT_BLOCKS = ("thinking", "redacted_thinking")


class ChatRequest(BaseModel):
    """A recorded request converted to Chat Completions."""

    messages: list[dict[str, Any]] = Field(description="Chat Completions messages")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="Chat tools block")
    params: dict[str, Any] = Field(default_factory=dict, description="params, in Chat's forms")
    notes: list[str] = Field(default_factory=list, description="what was dropped or changed")


def _text(content: Any, notes: list[str], where: str) -> str:
    """Text of a content value (string or parts); non-text parts are dropped with a note."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for part in content if isinstance(content, list) else [content]:
        if isinstance(part, str):
            pieces.append(part)
        elif isinstance(part, dict) and part.get("type") in _TEXT_PARTS:
            pieces.append(str(part.get("text") or ""))
        elif isinstance(part, dict) and part.get("type") == "refusal":
            pieces.append(str(part.get("refusal") or ""))
        else:
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            notes.append(f"{where}: dropped a {kind} part (no text)")
    return "\n".join(pieces)


def _responses_messages(items: Any, notes: list[str]) -> list[dict[str, Any]]:
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    out: list[dict[str, Any]] = []
    open_text: list[str] = []
    open_calls: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []  # the open turn's hosted calls' results (`hosted`)
    dropped_calls: set[str] = set()
    listed = items if isinstance(items, list) else []
    results = hosted.responses_results(listed)
    said = 0

    def close() -> None:
        if open_text or open_calls:
            out.append(assistant("\n".join(t for t in open_text if t), list(open_calls)))
            open_text.clear()
            open_calls.clear()
        out.extend(answers)
        answers.clear()

    for n, item in enumerate(listed):
        if not isinstance(item, dict):
            notes.append(f"input[{n}]: dropped a non-object item")
            continue
        kind = item.get("type") or ("message" if "role" in item else None)
        role = item.get("role") or "user"
        if kind == "message" and role == "assistant":
            if answers:  # written after a hosted call's result
                close()
            open_text.append(_text(item.get("content"), notes, f"input[{n}]"))
        elif kind == "function_call":
            args = item.get("arguments")
            open_calls.append(chat_call(item.get("call_id"), item.get("name"), args or ""))
        elif hosted_call(item):
            call_id = item.get("id")
            open_calls.append(chat_call(call_id, item.get("name"), item.get("arguments") or ""))
            answers.append(answer(call_id, results.get(str(call_id), hosted.NO_RESULT)))
            said += 1
        elif kind in _SILENT_ITEMS or hosted.is_consumed(item):
            continue
        elif kind == "message":
            close()
            role = "system" if role == "developer" else role
            out.append({"role": role, "content": _text(item.get("content"), notes, f"input[{n}]")})
        elif kind == "function_call_output":
            close()
            if item.get("call_id") in dropped_calls:
                notes.append(f"input[{n}]: dropped the output of a dropped custom-tool call")
                continue
            content = _text(item.get("output"), notes, f"input[{n}]")
            out.append(answer(item.get("call_id"), content))
        elif kind == "custom_tool_call_output":
            notes.append(f"input[{n}]: dropped a custom-tool output (custom tools are dropped)")
        else:
            if kind == "custom_tool_call" and isinstance(item.get("call_id"), str):
                dropped_calls.add(item["call_id"])
            notes.append(f"input[{n}]: dropped a {kind} item (no Chat Completions equivalent)")
    close()
    if said:
        notes.append(
            f"input: {said} hosted MCP call(s) sent as tool calls, each answered by the result"
            " the provider got"
        )
    return out


def _anthropic_messages(messages: Any, notes: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    said = 0
    for n, message in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(message, dict):
            notes.append(f"messages[{n}]: dropped a non-object message")
            continue
        role = message.get("role") or "user"
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if role == "assistant" and isinstance(blocks, list) and hosted.is_connector(blocks):
            out += hosted.anthropic_assistant(blocks, notes, f"messages[{n}]")
            said += 1
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for block in blocks if isinstance(blocks, list) else []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                texts.append(str(block.get("text") or ""))
            elif kind == "tool_use":
                args = compact(block.get("input"))
                calls.append(chat_call(block.get("id"), block.get("name"), args))
            elif kind == "tool_result":
                content = _text(block.get("content"), notes, f"messages[{n}] tool_result")
                results.append(answer(block.get("tool_use_id"), content))
            elif kind not in _SILENT_BLOCKS:
                notes.append(f"messages[{n}]: dropped a {kind} block")
        text = "\n".join(texts)
        if role == "assistant":
            if text or calls:
                out.append(assistant(text, calls))
            continue
        out.extend(results)
        if text or not results:
            out.append({"role": role, "content": text})
    if said:
        notes.append(
            f"messages: {said} assistant message(s) with MCP connector calls sent as tool calls,"
            " each answered by the result the provider got"
        )
    return out


_MESSAGES = {  # each format's conversation as Chat messages (openai_chat: as sent)
    "openai_responses": _responses_messages,
    "anthropic_messages": _anthropic_messages,
    "ollama_chat": ollama.chat_messages,
    "gemini": gemini.chat_messages,
    "bedrock_converse": bedrock.chat_messages,
}


def _tools(rows: list[dict[str, Any]], notes: list[str]) -> list[dict[str, Any]]:
    tools = []
    listed = 0
    for row in sorted(rows, key=lambda r: r.get("position") or 0):
        kind = row.get("kind") or "function"
        listed += kind == "mcp_tool"
        if kind not in SCHEMA_KINDS:
            notes.append(f"tools: dropped {row.get('name')!r} ({row.get('kind')}: not a function)")
            continue
        function: dict[str, Any] = {"name": row.get("name")}
        if row.get("description") is not None:
            function["description"] = row["description"]
        parameters = row.get("parameters")
        function["parameters"] = (
            parameters if parameters is not None else {"type": "object", "properties": {}}
        )
        tools.append({"type": "function", "function": function})
    if listed:
        notes.append(
            f"tools: {listed} tool(s) a hosted MCP server listed offered as functions (the"
            " candidate's calls are compared with the recorded ones, not run)"
        )
    return tools


def _anthropic_params(params: Params, out: Params, used: set[str], _notes: list[str]) -> None:
    choice = params.get("tool_choice")
    if isinstance(choice, dict):
        used.add("tool_choice")
        kind = choice.get("type")
        mapped = {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))
        if kind == "tool":
            out["tool_choice"] = function_choice(choice.get("name"))
        elif mapped is not None:
            out["tool_choice"] = mapped
        else:
            used.discard("tool_choice")
        if choice.get("disable_parallel_tool_use") is True:
            out["parallel_tool_calls"] = False
    for source, target in (("max_tokens", "max_tokens"), ("stop_sequences", "stop")):
        if source in params:
            out[target] = params[source]
            used.add(source)


def _responses_params(params: Params, out: Params, used: set[str], _notes: list[str]) -> None:
    choice = params.get("tool_choice")
    if choice is not None:
        used.add("tool_choice")
        kind = choice.get("type") if isinstance(choice, dict) else None
        if isinstance(choice, str):
            out["tool_choice"] = choice
        elif kind == "function":
            out["tool_choice"] = function_choice(choice.get("name"))
        elif kind == "allowed_tools":
            tools = [
                function_choice(t.get("name"))
                for t in choice.get("tools") or []
                if isinstance(t, dict) and t.get("type") == "function"
            ]
            out["tool_choice"] = {
                "type": "allowed_tools",
                "allowed_tools": {"mode": choice.get("mode", "auto"), "tools": tools},
            }
        else:
            used.discard("tool_choice")
    if "max_output_tokens" in params:
        out["max_tokens"] = params["max_output_tokens"]
        used.add("max_output_tokens")
    text = params.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object"):
        schema = {k: v for k, v in fmt.items() if k != "type"}
        out["response_format"] = (
            {"type": "json_schema", "json_schema": schema}
            if fmt["type"] == "json_schema"
            else {"type": "json_object"}
        )
        used.add("text")


_PARAMS = {  # the formats' own params mapping (any other: the Responses API's)
    "anthropic_messages": _anthropic_params,
    "ollama_chat": ollama.chat_params,
    "gemini": gemini.chat_params,
    "bedrock_converse": bedrock.chat_params,
}


def _params(wire_format: str, params: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    used: set[str] = set()
    keep: tuple[str, ...]
    if wire_format == "openai_chat":
        keep = KEEP_CHAT
        legacy.tool_choice(params, notes)
    else:
        keep = ("temperature", "top_p", "parallel_tool_calls")
        _PARAMS.get(wire_format, _responses_params)(params, out, used, notes)
    for key in keep:
        if key in params and key not in used:
            out[key] = params[key]
            used.add(key)
    dropped = sorted(k for k in params if k not in used and k != "stream")
    if dropped:
        notes.append(f"params: dropped {', '.join(dropped)} (no Chat equivalent or provider-only)")
    return out


def _chat_messages(messages: Any, owned: bool, notes: list[str]) -> list[dict[str, Any]]:
    """Chat messages as sent (copied unless `owned`); a non-object one is dropped, noted."""
    if not isinstance(messages, list):
        return []
    if not all(isinstance(m, dict) for m in messages):
        for n, m in enumerate(messages):
            if not isinstance(m, dict):
                notes.append(f"messages[{n}]: dropped a non-object message")
        messages = [m for m in messages if isinstance(m, dict)]
    return messages if owned else copy.deepcopy(messages)


def to_chat(
    wire_format: str,
    messages: Any,
    system: str | None,
    tools_offered_rows: list[dict[str, Any]],
    params: dict[str, Any] | None,
    *,
    owned: bool = False,
) -> ChatRequest:
    """One recorded request as Chat Completions (rules in the module docstring).

    `messages` is `exchanges.messages` decoded (Responses: the `input`, a list or a string),
    `system` the recorded system text, `tools_offered_rows` the exchange's `tools_offered`
    rows with `parameters` decoded, `params` `exchanges.request_params` decoded. An unknown
    wire format is a `ValueError` (only model turns are converted). Chat messages are
    copied, so the request can be changed without touching `messages`; `owned`: the caller
    hands `messages` over (decoded for this call alone) and they are used as they are."""
    notes: list[str] = []
    if wire_format == "openai_chat":
        chat = legacy.modern_messages(_chat_messages(messages, owned, notes), notes)
    elif wire_format in _MESSAGES:
        chat = _MESSAGES[wire_format](messages, notes)
    else:
        raise ValueError(f"not a model wire format: {wire_format!r}")
    if system and wire_format != "openai_chat":
        chat.insert(0, {"role": "system", "content": system})
    tools = _tools(tools_offered_rows, notes)
    out = _params(wire_format, dict(params or {}), notes)
    if not tools:
        gone = [k for k in ("tool_choice", "parallel_tool_calls") if out.pop(k, None) is not None]
        if gone:
            notes.append(f"params: dropped {', '.join(gone)} (no tools left to choose from)")
    return ChatRequest(messages=chat, tools=tools, params=out, notes=notes)
