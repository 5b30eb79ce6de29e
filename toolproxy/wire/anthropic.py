"""Anthropic Messages (``POST .../messages``), streamed or not.

Arguments: a non-streamed response carries each tool_use ``input`` as an object, so its
arguments_raw is that object re-serialised (compact separators, ensure_ascii=False) and
its arguments the object itself. A streamed one carries the text: arguments_raw is the
``input_json_delta.partial_json`` pieces concatenated exactly, and no text at all means
``{}`` (the API's own reading of an argument-less call), not an error.

Usage is normalised to OpenAI's meaning: input_tokens counts the whole prompt, i.e.
Anthropic's ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``, and
cached_input_tokens is ``cache_read_input_tokens``. finish_reason is the raw stop_reason.
Thinking and server-tool blocks (server_tool_use, web_search_tool_result) are not the
agent's text or calls and are skipped on both the request and the response side. The MCP
connector's calls (`mcp_tool_use`: the provider runs them on a server of the request's
`mcp_servers`) are the model's calls, recorded with the block's `server_name` as
`mcp_server`; each of `mcp_servers` is an offered tool of kind `mcp`. Their results
(`mcp_tool_result`) stay in the bodies: they are not the agent's.
"""

from __future__ import annotations

from typing import Any

from toolproxy.records import (
    ParsedRequest,
    ParsedResponse,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
    canonical_json,
)
from toolproxy.wire.bedrock import model_in_path
from toolproxy.wire.common import (
    Codec,
    DecodedStream,
    JsonObject,
    as_dict,
    as_int,
    as_list,
    as_str,
    error_message,
    join_text,
    joined_text,
    make_call,
    merge_usage,
    offered,
    reply_turn,
    request_params,
    text_parts,
)

_CALLS = ("tool_use", "mcp_tool_use")  # the agent's to run, the MCP connector's


def _server(block: JsonObject) -> Any:
    """The MCP server a hosted call ran on (None: the agent's call)."""
    return block.get("server_name") if block.get("type") == "mcp_tool_use" else None


def parse_request(body: JsonObject) -> ParsedRequest:
    """A Messages request: `system` (string or text blocks) is the first turn."""
    messages = body.get("messages")
    system = join_text(body["system"]) if body.get("system") is not None else None
    tools = []
    for position, tool in enumerate(as_list(body.get("tools"))):
        tool = as_dict(tool)
        # Client tools have no type or type "custom"; built-ins are typed, e.g. bash_20250124.
        kind = as_str(tool.get("type")) or "custom"
        kind = "function" if kind == "custom" else kind
        tools.append(
            offered(
                position, kind, tool.get("name"), tool.get("description"), tool.get("input_schema")
            )
        )
    for server in map(as_dict, as_list(body.get("mcp_servers"))):
        name = server.get("name")
        tools.append(offered(len(tools), "mcp", name, None, None, mcp_server=name))
    results = []
    for index, message in enumerate(as_list(messages)):
        for block in _blocks(as_dict(message).get("content")):
            if block.get("type") == "tool_result":
                is_error = block.get("is_error")
                results.append(
                    ToolResult(
                        message_index=index,
                        call_id=as_str(block.get("tool_use_id")),
                        content=join_text(block.get("content")),
                        is_error=is_error if isinstance(is_error, bool) else None,
                    )
                )
    return ParsedRequest(
        wire_format="anthropic_messages",
        model=as_str(body.get("model")),
        stream=body.get("stream") is True,
        params=request_params(body),
        system=system,
        messages=messages,
        tools=tools,
        tool_results=results,
        turns=build_turns(system, messages),
    )


def _blocks(content: Any) -> list[JsonObject]:
    return [block for block in as_list(content) if isinstance(block, dict)]


def build_turns(system: str | None, messages: Any) -> list[Turn]:
    """Turns of a conversation: system first; each tool_result block is its own tool turn.

    A user message's text blocks between tool results become user turns in block order.
    """
    turns = [Turn(role="system", text=system)] if system else []
    for message in as_list(messages):
        message = as_dict(message)
        role = as_str(message.get("role")) or "user"
        content = message.get("content")
        if role == "assistant":
            calls = [
                (as_str(b.get("id")), as_str(b.get("name")), canonical_json(b.get("input", {})))
                for b in _blocks(content)
                if b.get("type") in _CALLS
            ]
            turns.append(Turn(role=role, text=join_text(content), calls=calls))
            continue
        if isinstance(content, str):
            turns.append(Turn(role=role, text=content))
            continue
        texts: list[str] | None = None  # text blocks since the last tool result
        produced = False
        for block in _blocks(content):
            if block.get("type") != "tool_result":
                texts = [*(texts or []), *text_parts([block])]
                continue
            if texts is not None:
                turns.append(Turn(role=role, text="\n".join(texts)))
                texts = None
            call_id = as_str(block.get("tool_use_id"))
            turns.append(Turn(role="tool", text=join_text(block.get("content")), call_id=call_id))
            produced = True
        if texts is not None or not produced:
            turns.append(Turn(role=role, text="\n".join(texts or [])))
    return turns


def parse_response(body: JsonObject) -> ParsedResponse:
    """A non-streamed message object (or an error body)."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in _blocks(body.get("content")):
        if block.get("type") == "text":
            texts.append(as_str(block.get("text")) or "")
        elif block.get("type") in _CALLS:
            value, server = block.get("input", {}), _server(block)
            calls.append(
                make_call(len(calls), block.get("id"), block.get("name"), value, mcp_server=server)
            )
    return _assemble(body, texts, calls, body.get("usage"), error_message(body))


def _assemble(
    message: JsonObject, texts: list[str], calls: list[ToolCall], usage: Any, error: str | None
) -> ParsedResponse:
    """A ParsedResponse from a message's fields and its already-extracted text and calls."""
    response = ParsedResponse(
        response_id=as_str(message.get("id")),
        model=as_str(message.get("model")),
        text=joined_text(texts),
        tool_calls=calls,
        finish_reason=as_str(message.get("stop_reason")),
        usage=_usage(usage),
        error=error,
    )
    response.reply = reply_turn(response)
    return response


def _usage(usage: Any) -> Usage:
    usage = as_dict(usage)
    fresh = as_int(usage.get("input_tokens"))
    cached = as_int(usage.get("cache_read_input_tokens"))
    written = as_int(usage.get("cache_creation_input_tokens"))
    output = as_int(usage.get("output_tokens"))
    known = [n for n in (fresh, cached, written) if n is not None]
    prompt = sum(known) if known else None
    return Usage(
        input_tokens=prompt,
        output_tokens=output,
        total_tokens=None if prompt is None or output is None else prompt + output,
        cached_input_tokens=cached,
    )


def parse_stream(stream: DecodedStream) -> tuple[ParsedResponse, list[str]]:
    """Reassemble message_start / content_block_* / message_delta / message_stop events.

    Complete when message_stop was seen. An `error` event sets the error; the stream then
    ends without message_stop, so the exchange is partial.
    """
    message: JsonObject = {}
    usage: JsonObject = {}
    blocks: dict[int, JsonObject] = {}
    pieces: dict[int, list[str]] = {}
    errors: list[str] = []
    stopped = False
    for event in stream.objects:
        kind = event.get("type")
        index = as_int(event.get("index"))
        if kind == "message_start":
            message = dict(as_dict(event.get("message")))
            merge_usage(usage, message.get("usage"))
        elif kind == "content_block_start" and index is not None:
            blocks[index] = dict(as_dict(event.get("content_block")))
            pieces[index] = []
        elif kind == "content_block_delta" and index in pieces:
            delta = as_dict(event.get("delta"))
            piece = delta.get("text") if delta.get("type") == "text_delta" else None
            if delta.get("type") == "input_json_delta":
                piece = delta.get("partial_json")
            if isinstance(piece, str):
                pieces[index].append(piece)
        elif kind == "message_delta":
            message.update({k: v for k, v in as_dict(event.get("delta")).items() if v is not None})
            merge_usage(usage, event.get("usage"))
        elif kind == "message_stop":
            stopped = True
        elif (error := error_message(event)) is not None:
            errors.append(error)

    texts: list[str] = []
    calls: list[ToolCall] = []
    for index in sorted(blocks):
        block, joined = blocks[index], "".join(pieces[index])
        if block.get("type") == "text":
            texts.append((as_str(block.get("text")) or "") + joined)
        elif block.get("type") in _CALLS:
            call_id, name, server = block.get("id"), block.get("name"), _server(block)
            if joined.strip():
                calls.append(make_call(len(calls), call_id, name, joined, mcp_server=server))
            else:
                # No partial_json text: the input is what content_block_start said ({}).
                start = block.get("input", {})
                raw = joined if start == {} else start
                calls.append(
                    make_call(len(calls), call_id, name, raw, value=start, mcp_server=server)
                )
    response = _assemble(message, texts, calls, usage, "; ".join(errors) or None)
    response.complete = stopped
    notes = [] if stopped else ["stream ended before message_stop"]
    return response, notes


BEDROCK_ACTIONS = ("invoke", "invoke-with-response-stream")  # .../model/{modelId}/{action}
_VERTEX_STREAM = ":streamrawpredict"


def from_path(request: ParsedRequest, path: str) -> None:
    """The model and streaming where the path says them and the body does not: Bedrock's
    InvokeModel (`.../model/{modelId}/invoke-with-response-stream`, the id URL-decoded)
    and Vertex AI's (`.../models/{model}:streamRawPredict`)."""
    bare = path.split("?", 1)[0]
    model, action = model_in_path(bare, BEDROCK_ACTIONS)
    if action:
        request.model = request.model or model
        request.stream = request.stream or action == BEDROCK_ACTIONS[1]
    elif bare.lower().endswith((":rawpredict", _VERTEX_STREAM)):
        model = bare.rpartition("/")[2].partition(":")[0]
        request.model = request.model or model or None
        request.stream = request.stream or bare.lower().endswith(_VERTEX_STREAM)


CODEC = Codec(parse_request, parse_response, parse_stream, from_path)
