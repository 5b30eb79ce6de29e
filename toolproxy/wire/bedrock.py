"""Amazon Bedrock's Converse API (``POST .../model/{modelId}/converse`` and
``/converse-stream``), as boto3's `bedrock-runtime` client and the agent frameworks on it
(Strands, LangChain's ChatBedrockConverse, LiteLLM) send it.

- The request: `messages` (role `user` or `assistant`, each a list of content blocks:
  `text`, `toolUse` {toolUseId, name, input}, `toolResult` {toolUseId, content, status};
  `image`, `document`, `reasoningContent`, `cachePoint` are not text), `system` (text
  blocks), `toolConfig.tools[].toolSpec` (the offered tools, their schema in
  `inputSchema.json`; a `cachePoint` entry is not a tool), `toolConfig.toolChoice`,
  `inferenceConfig`, `additionalModelRequestFields`, `guardrailConfig`... as params. The
  model and whether it streams are in the path (`from_path`: the model id URL-decoded,
  an ARN as it stands).
- A call: a `toolUse` block of `output.message`, its `input` an object (re-serialised
  compactly, as Anthropic's). A result: a `toolResult` block, linked to its call by
  `toolUseId`; its text the `text` items joined, `json` items as compact JSON; `status`
  "error" is the agent's error flag.
- Text: the `text` blocks (not `reasoningContent`). finish_reason: `stopReason` as sent
  (`end_turn`, `tool_use`, `max_tokens`, `guardrail_intervened`, ...); usage from `usage`
  (`inputTokens` counts the prompt, `cacheReadInputTokens` the cached part of it).
- A stream (an AWS event stream, `wire.eventstream`): `contentBlockStart` opens a tool
  use (its id and name), `contentBlockDelta` carries text or the tool input's JSON text
  in pieces (joined exactly: its arguments_raw), `messageStop` the stop reason,
  `metadata` the usage. Complete when `messageStop` came and the body ended; an
  exception message (throttling, validation, a model stream error) is the error.
- An error body (HTTP 4xx/5xx): ``{"message": ...}``, the error.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from toolproxy.records import (
    ParsedRequest,
    ParsedResponse,
    ToolCall,
    ToolOffered,
    ToolResult,
    Turn,
    Usage,
)
from toolproxy.wire.common import (
    CallKey,
    Codec,
    DecodedStream,
    JsonObject,
    arguments_key,
    as_dict,
    as_int,
    as_list,
    as_str,
    error_message,
    joined_text,
    make_call,
    offered,
    reply_turn,
)

_NOT_PARAMS = frozenset({"messages", "system", "modelId"})
STREAM_ACTION = "converse-stream"
ACTIONS = ("converse", STREAM_ACTION)  # .../model/{modelId}/{action}


def parse_request(body: JsonObject) -> ParsedRequest:
    """A Converse request (the model and streaming are set from the path)."""
    messages = body.get("messages")
    system = _text(body.get("system")) or None
    results = [
        ToolResult(
            message_index=index,
            call_id=as_str(result.get("toolUseId")),
            content=result_text(result),
            is_error=True if result.get("status") == "error" else None,
        )
        for index, message in enumerate(map(as_dict, as_list(messages)))
        for result in _blocks(message.get("content"), "toolResult")
    ]
    return ParsedRequest(
        wire_format="bedrock_converse",
        model=as_str(body.get("modelId")),
        stream=False,
        params={k: v for k, v in body.items() if k not in _NOT_PARAMS},
        system=system,
        messages=messages,
        tools=offered_tools(as_dict(body.get("toolConfig")).get("tools")),
        tool_results=results,
        turns=build_turns(system, messages),
    )


def offered_tools(tools: Any) -> list[ToolOffered]:
    """Each `toolSpec` (a function, its schema `inputSchema.json`); a `systemTool` by its
    name; `cachePoint` markers are not tools."""
    found: list[ToolOffered] = []
    for tool in map(as_dict, as_list(tools)):
        if isinstance(spec := tool.get("toolSpec"), dict):
            schema = as_dict(spec.get("inputSchema")).get("json")
            found.append(
                offered(len(found), "function", spec.get("name"), spec.get("description"), schema)
            )
        elif isinstance(system := tool.get("systemTool"), dict):
            found.append(offered(len(found), "system_tool", system.get("name"), None, None))
    return found


def _blocks(content: Any, kind: str) -> list[JsonObject]:
    """The `kind` objects (`toolUse`, `toolResult`) of a message's content blocks."""
    found = (as_dict(block).get(kind) for block in as_list(content))
    return [value for value in found if isinstance(value, dict)]


def _text(content: Any) -> str:
    """The `text` blocks of a content list, joined with newlines."""
    return "\n".join(
        block["text"]
        for block in map(as_dict, as_list(content))
        if isinstance(block.get("text"), str)
    )


def result_text(result: JsonObject) -> str:
    """A tool result's content: its text items, its json items as compact JSON, joined."""
    pieces = []
    for item in map(as_dict, as_list(result.get("content"))):
        if isinstance(item.get("text"), str):
            pieces.append(item["text"])
        elif "json" in item:
            pieces.append(json.dumps(item["json"], separators=(",", ":"), ensure_ascii=False))
    return "\n".join(pieces)


def _call_key(use: JsonObject) -> CallKey:
    return (
        as_str(use.get("toolUseId")),
        as_str(use.get("name")),
        arguments_key(use.get("input", {})),
    )


def build_turns(system: str | None, messages: Any) -> list[Turn]:
    """Turns of a conversation: system first; an assistant message is an assistant turn;
    each tool result is its own tool turn, before the text of the same message."""
    turns = [Turn(role="system", text=system)] if system else []
    for message in map(as_dict, as_list(messages)):
        content = message.get("content")
        if message.get("role") == "assistant":
            calls = [_call_key(use) for use in _blocks(content, "toolUse")]
            turns.append(Turn(role="assistant", text=_text(content), calls=calls))
            continue
        results = _blocks(content, "toolResult")
        for result in results:
            turns.append(
                Turn(role="tool", text=result_text(result), call_id=as_str(result.get("toolUseId")))
            )
        text = _text(content)
        if text or not results:
            turns.append(Turn(role="user", text=text))
    return turns


def parse_response(body: JsonObject) -> ParsedResponse:
    """A Converse response, or an error body (``{"message": ...}``)."""
    content = as_dict(as_dict(body.get("output")).get("message")).get("content")
    calls: list[ToolCall] = []
    for use in _blocks(content, "toolUse"):
        calls.append(
            make_call(len(calls), use.get("toolUseId"), use.get("name"), use.get("input", {}))
        )
    error = error_message(body)
    if error is None and "output" not in body and isinstance(body.get("message"), str):
        error = body["message"]
    response = ParsedResponse(
        text=joined_text([_text(content)]),
        tool_calls=calls,
        finish_reason=as_str(body.get("stopReason")),
        usage=_usage(body.get("usage")),
        error=error,
    )
    response.reply = reply_turn(response)
    return response


def _usage(usage: Any) -> Usage:
    usage = as_dict(usage)
    return Usage(
        input_tokens=as_int(usage.get("inputTokens")),
        output_tokens=as_int(usage.get("outputTokens")),
        total_tokens=as_int(usage.get("totalTokens")),
        cached_input_tokens=as_int(usage.get("cacheReadInputTokens")),
    )


def parse_stream(stream: DecodedStream) -> tuple[ParsedResponse, list[str]]:
    """Join a ConverseStream's events into one response (see the module doc)."""
    blocks: dict[int, JsonObject] = {}
    pieces: dict[int, list[str]] = {}
    kinds: dict[int, str] = {}
    finish: Any = None
    usage: Any = None
    errors: list[str] = []
    stopped = False
    for event in stream.objects:
        kind = event.get("type")
        index = as_int(event.get("contentBlockIndex"))
        if kind == "contentBlockStart" and index is not None:
            use = as_dict(as_dict(event.get("start")).get("toolUse"))
            blocks[index], kinds[index] = use, "toolUse" if use else "text"
            pieces.setdefault(index, [])
        elif kind == "contentBlockDelta" and index is not None:
            delta = as_dict(event.get("delta"))
            if isinstance(delta.get("text"), str):
                kinds.setdefault(index, "text")
                pieces.setdefault(index, []).append(delta["text"])
            elif isinstance(piece := as_dict(delta.get("toolUse")).get("input"), str):
                kinds.setdefault(index, "toolUse")
                pieces.setdefault(index, []).append(piece)
        elif kind == "messageStop":
            finish, stopped = event.get("stopReason"), True
        elif kind == "metadata":
            usage = event.get("usage")
        elif (error := error_message(event)) is not None:
            errors.append(error)
    texts: list[str] = []
    calls: list[ToolCall] = []
    for index in sorted(pieces):
        joined = "".join(pieces[index])
        if kinds.get(index) == "text":
            texts.append(joined)
        elif kinds.get(index) == "toolUse":
            use = blocks.get(index, {})
            # no input text at all: the API's own reading is an empty input, {}
            raw = joined if joined.strip() else {}
            calls.append(make_call(len(calls), use.get("toolUseId"), use.get("name"), raw))
    response = ParsedResponse(
        text=joined_text(["".join(texts)] if texts else []),
        tool_calls=calls,
        finish_reason=as_str(finish),
        usage=_usage(usage),
        error="; ".join(errors) or None,
    )
    response.reply = reply_turn(response)
    response.complete = stopped and stream.ended
    notes = [] if stopped else ["stream ended before messageStop"]
    return response, notes


def model_in_path(path: str, actions: tuple[str, ...]) -> tuple[str | None, str]:
    """(model id, action) of a Bedrock runtime path `.../model/{modelId}/{action}`: the id
    URL-decoded (`anthropic.claude-3-5-haiku-20241022-v1%3A0`, an ARN's `/` as `%2F`)."""
    segments = path.split("?", 1)[0].split("/")
    if len(segments) < 3 or segments[-1].lower() not in actions or segments[-3] != "model":
        return None, ""
    return unquote(segments[-2]) or None, segments[-1].lower()


def from_path(request: ParsedRequest, path: str) -> None:
    """The model (unless the body names one) and whether it streams, from the path."""
    model, action = model_in_path(path, ACTIONS)
    request.model = request.model or model
    request.stream = action == STREAM_ACTION


CODEC = Codec(parse_request, parse_response, parse_stream, from_path, framing="eventstream")
