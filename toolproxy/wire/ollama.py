"""Ollama's own chat API (``POST .../api/chat``), streamed (the default: NDJSON) or not.

Agents on Ollama's native clients (the `ollama` Python and JS libraries, LangChain's
ChatOllama) send this, not the OpenAI-compatible ``/v1``:

- the request: `messages` (system, user, assistant, tool; `images` and `thinking` are not
  text), `tools` in OpenAI's function form; `options` (temperature, num_ctx, ...),
  `format` (structured output: "json" or a JSON Schema), `think`, `keep_alive` are params;
- a call: `message.tool_calls[].function`, its `arguments` an object (re-serialised
  compactly, as Anthropic's `input`); it has no id unless the server gives one;
- a result: a `tool` message (newer clients name the function in `tool_name`). Naming no
  call, the k-th result after an assistant turn answers that turn's k-th call, as the
  legacy Chat functions API's do (`capture.session`); a `tool_call_id` is used when sent;
- a stream: one JSON object per line; `message.content` pieces joined, each chunk's
  `tool_calls` appended (they arrive whole); the last object says `done: true` with
  `done_reason` (the finish reason: "stop", "length", ...) and the counts
  (`prompt_eval_count` input tokens, `eval_count` output tokens). Complete when an object
  with `done: true` was seen; a line `{"error": ...}` is the error.
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
    function_tools,
    joined_text,
    make_call,
    reply_turn,
    request_params,
)


def parse_request(body: JsonObject) -> ParsedRequest:
    """An /api/chat request: messages as sent, system messages left in them."""
    messages = body.get("messages")
    tools = function_tools(body.get("tools"))
    results = [
        ToolResult(
            message_index=index,
            call_id=as_str(message.get("tool_call_id")),
            content=_content(message),
        )
        for index, message in enumerate(map(as_dict, as_list(messages)))
        if message.get("role") == "tool"
    ]
    return ParsedRequest(
        wire_format="ollama_chat",
        model=as_str(body.get("model")),
        stream=body.get("stream") is not False,  # streamed unless told not to
        params=request_params(body),
        system=None,
        messages=messages,
        tools=tools,
        tool_results=results,
        turns=build_turns(messages),
    )


def _content(message: JsonObject) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def build_turns(messages: Any) -> list[Turn]:
    """One turn per message; an assistant's calls keyed as the response's are."""
    turns = []
    for message in map(as_dict, as_list(messages)):
        role = as_str(message.get("role")) or "user"
        calls = [_call_key(c) for c in _calls(message)] if role == "assistant" else []
        call_id = as_str(message.get("tool_call_id")) if role == "tool" else None
        turns.append(Turn(role=role, text=_content(message), calls=calls, call_id=call_id))
    return turns


def _calls(message: JsonObject) -> list[JsonObject]:
    return [as_dict(call) for call in as_list(message.get("tool_calls"))]


def _call_key(call: JsonObject) -> CallKey:
    spec = as_dict(call.get("function"))
    arguments = arguments_key(spec.get("arguments", {}))
    return (as_str(call.get("id")), as_str(spec.get("name")), arguments)


def parse_response(body: JsonObject) -> ParsedResponse:
    """A non-streamed answer (one object with `done: true`), or an error body."""
    message = as_dict(body.get("message"))
    calls: list[ToolCall] = []
    for call in _calls(message):
        spec = as_dict(call.get("function"))
        raw = spec.get("arguments", {})
        calls.append(make_call(len(calls), call.get("id"), spec.get("name"), raw))
    response = ParsedResponse(
        response_id=None,
        model=as_str(body.get("model")),
        text=joined_text([_content(message)]),
        tool_calls=calls,
        finish_reason=as_str(body.get("done_reason")),
        usage=_usage(body),
        error=error_message(body),
        complete=body.get("done") is not False,
    )
    response.reply = reply_turn(response)
    return response


def _usage(body: JsonObject) -> Usage:
    prompt, output = as_int(body.get("prompt_eval_count")), as_int(body.get("eval_count"))
    total = None if prompt is None or output is None else prompt + output
    return Usage(input_tokens=prompt, output_tokens=output, total_tokens=total)


def parse_stream(stream: DecodedStream) -> tuple[ParsedResponse, list[str]]:
    """Join an NDJSON stream's chunks into one answer (see the module doc)."""
    text: list[str] = []
    calls: list[Any] = []
    last: JsonObject = {}
    errors: list[str] = []
    done = False
    for chunk in stream.objects:
        if (error := error_message(chunk)) is not None:
            errors.append(error)
            continue
        message = as_dict(chunk.get("message"))
        if isinstance(piece := message.get("content"), str):
            text.append(piece)
        calls += as_list(message.get("tool_calls"))
        last = chunk
        done = done or chunk.get("done") is True
    body = {**last, "message": {"content": "".join(text), "tool_calls": calls}}
    response = parse_response(body)
    response.error = "; ".join(errors) or None
    response.reply = reply_turn(response)
    response.complete = done
    notes = [] if done else ["stream ended before an object with done: true"]
    return response, notes


CODEC = Codec(parse_request, parse_response, parse_stream, framing="ndjson")
