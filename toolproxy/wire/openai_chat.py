"""OpenAI Chat Completions (``POST .../chat/completions``), streamed or not.

Only the first choice is recorded: agents ask for one (``n`` defaults to 1), and a request
with ``n > 1`` keeps its other choices in the raw body.
Custom (grammar) tools, ``{"type": "custom", "custom": {"name", "input"}}`` calls, are
recorded like functions, their free-text input standing as its own parsed value.
The legacy functions API (before ``tools``, still served and still sent by older agents)
is read as the same records: ``functions`` are offered tools (after any ``tools``), a
message's ``function_call`` is a call without an id (after any ``tool_calls``), streamed
as ``delta.function_call`` pieces; ``function_call`` in the request stays a param, as
``tool_choice`` does, and role ``function`` results are tool turns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
    join_text,
    joined_text,
    make_call,
    reply_turn,
    request_params,
    text_parts,
)


def parse_request(body: JsonObject) -> ParsedRequest:
    """A Chat request: messages as sent, system messages left in them (system is None)."""
    messages = body.get("messages")
    legacy = [{"type": "function", "function": f} for f in as_list(body.get("functions"))]
    tools = function_tools([*as_list(body.get("tools")), *legacy])
    results = []
    for index, message in enumerate(as_list(messages)):
        message = as_dict(message)
        if message.get("role") in ("tool", "function"):
            call_id = as_str(message.get("tool_call_id"))
            content = join_text(message.get("content"))
            results.append(ToolResult(message_index=index, call_id=call_id, content=content))
    return ParsedRequest(
        wire_format="openai_chat",
        model=as_str(body.get("model")),
        stream=body.get("stream") is True,
        params=request_params(body),
        messages=messages,
        tools=tools,
        tool_results=results,
        turns=build_turns(messages),
    )


def build_turns(messages: Any) -> list[Turn]:
    """One Turn per message; legacy role 'function' results count as tool turns."""
    turns = []
    for message in as_list(messages):
        message = as_dict(message)
        role = as_str(message.get("role")) or "user"
        text = join_text(message.get("content"))
        if role == "assistant":
            calls = [_sent_call_key(call) for call in _message_calls(message)]
            turns.append(Turn(role=role, text=text, calls=calls))
        elif role in ("tool", "function"):
            call_id = as_str(message.get("tool_call_id"))
            turns.append(Turn(role="tool", text=text, call_id=call_id))
        else:
            turns.append(Turn(role=role, text=text))
    return turns


def _message_calls(message: JsonObject) -> list[Any]:
    """A message's tool calls, its legacy `function_call` (no id) after them."""
    calls = as_list(message.get("tool_calls"))
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        calls = [*calls, {"id": None, "type": "function", "function": legacy}]
    return calls


def _sent_call_key(call: Any) -> CallKey:
    call = as_dict(call)
    if call.get("type") == "custom":
        spec = as_dict(call.get("custom"))
        arguments = canonical_json(spec.get("input", ""))
    else:
        spec = as_dict(call.get("function"))
        arguments = arguments_key(spec.get("arguments", ""))
    return (as_str(call.get("id")), as_str(spec.get("name")), arguments)


def parse_response(body: JsonObject) -> ParsedResponse:
    """A non-streamed chat.completion object (or an error body)."""
    choice = _first_choice(body.get("choices"))
    message = as_dict(choice.get("message"))
    calls: list[ToolCall] = []
    for call in _message_calls(message):
        call = as_dict(call)
        custom = call.get("type") == "custom"
        spec = as_dict(call.get("custom" if custom else "function"))
        raw = spec.get("input" if custom else "arguments", "")
        calls.append(make_call(len(calls), call.get("id"), spec.get("name"), raw, free_text=custom))
    response = ParsedResponse(
        response_id=as_str(body.get("id")),
        model=as_str(body.get("model")),
        text=joined_text(text_parts(message.get("content"))),
        refusal=as_str(message.get("refusal")) or None,
        tool_calls=calls,
        finish_reason=as_str(choice.get("finish_reason")),
        usage=_usage(body.get("usage")),
        error=error_message(body),
    )
    response.reply = reply_turn(response)
    return response


def _first_choice(choices: Any) -> JsonObject:
    for choice in as_list(choices):
        choice = as_dict(choice)
        if as_int(choice.get("index")) in (0, None):
            return choice
    return {}


def _usage(usage: Any) -> Usage:
    usage = as_dict(usage)
    return Usage(
        input_tokens=as_int(usage.get("prompt_tokens")),
        output_tokens=as_int(usage.get("completion_tokens")),
        total_tokens=as_int(usage.get("total_tokens")),
        cached_input_tokens=as_int(
            as_dict(usage.get("prompt_tokens_details")).get("cached_tokens")
        ),
        reasoning_tokens=as_int(
            as_dict(usage.get("completion_tokens_details")).get("reasoning_tokens")
        ),
    )


def parse_stream(stream: DecodedStream) -> tuple[ParsedResponse, list[str]]:
    """Reassemble chat.completion.chunk events into one response.

    Tool calls are keyed by their delta ``index``: id, type and name arrive in the first
    delta of an index (later repeats are ignored, never appended), argument text in pieces,
    and parallel calls interleave. Usage comes from whichever chunk carries it (with
    ``stream_options.include_usage`` the last chunk has ``choices: []``).

    Complete when ``data: [DONE]`` was seen, or, for servers that omit it, when a
    finish_reason was seen and the body ended on an event boundary.
    """
    head: JsonObject = {}
    text: list[str] = []
    refused: list[str] = []
    calls: dict[int, _CallBuffer] = {}
    legacy: _CallBuffer | None = None  # the legacy API's one delta.function_call
    finish: str | None = None
    usage: Any = None
    errors: list[str] = []
    for chunk in stream.objects:
        for key in ("id", "model"):
            if head.get(key) is None:
                head[key] = chunk.get(key)
        usage = chunk.get("usage") or usage
        if (error := error_message(chunk)) is not None:
            errors.append(error)
        choice = _first_choice(chunk.get("choices"))
        delta = as_dict(choice.get("delta"))
        if isinstance(content := delta.get("content"), str):
            text.append(content)
        if isinstance(refusal := delta.get("refusal"), str):
            refused.append(refusal)
        for piece in as_list(delta.get("tool_calls")):
            _add_call_delta(calls, as_dict(piece))
        if isinstance(function := delta.get("function_call"), dict):
            legacy = legacy or _CallBuffer()
            legacy.add(function)
        finish = as_str(choice.get("finish_reason")) or finish

    tool_calls = [calls[i].as_message_call() for i in sorted(calls)]
    message: JsonObject = {"content": "".join(text), "tool_calls": tool_calls}
    message["refusal"] = "".join(refused)
    if legacy is not None:
        message["function_call"] = legacy.as_message_call()["function"]
    body = {**head, "choices": [{"message": message, "finish_reason": finish}], "usage": usage}
    response = parse_response(body)
    response.error = "; ".join(errors) or None
    response.reply = reply_turn(response)
    response.complete = stream.done or (finish is not None and stream.ended)
    notes = [] if response.complete else ["stream ended before data: [DONE]"]
    return response, notes


@dataclass
class _CallBuffer:
    """One streamed tool call while its deltas arrive (pieces joined once, at the end)."""

    call_id: str | None = None
    kind: str | None = None
    name: str | None = None
    pieces: list[str] = field(default_factory=list)

    def add(self, spec: JsonObject) -> None:
        """One delta's name (the first kept) and its piece of argument text."""
        custom = self.kind == "custom"
        self.name = self.name or as_str(spec.get("name"))
        if isinstance(more := spec.get("input" if custom else "arguments"), str):
            self.pieces.append(more)

    def as_message_call(self) -> JsonObject:
        """The call as a non-streamed message would carry it."""
        kind = self.kind or "function"
        text_field = "input" if kind == "custom" else "arguments"
        spec = {"name": self.name, text_field: "".join(self.pieces)}
        return {"id": self.call_id, "type": kind, kind: spec}


def _add_call_delta(calls: dict[int, _CallBuffer], piece: JsonObject) -> None:
    """Fold one delta.tool_calls entry into the call it belongs to."""
    index = as_int(piece.get("index"))
    call_id = as_str(piece.get("id"))
    if index is None:
        # Some OpenAI-compatible servers omit index: match by id, else a new id starts a
        # new call and an id-less piece continues the latest one.
        known = [i for i, call in calls.items() if call_id and call.call_id == call_id]
        if known:
            index = known[0]
        elif call_id or not calls:
            index = max(calls, default=-1) + 1
        else:
            index = max(calls)
    call = calls.setdefault(index, _CallBuffer())
    call.call_id = call.call_id or call_id
    call.kind = call.kind or as_str(piece.get("type"))
    call.add(as_dict(piece.get("custom" if call.kind == "custom" else "function")))


CODEC = Codec(parse_request, parse_response, parse_stream)
