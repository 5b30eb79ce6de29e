"""Anthropic Messages replies: a `message` object or its named SSE events (or, through
Bedrock's InvokeModelWithResponseStream, the same events in AWS event-stream chunks)."""

from __future__ import annotations

import base64
import json
from typing import Any

from toolproxy.scripted.context import (
    Context,
    Counts,
    arguments_text,
    count_tokens,
    dump_json,
    frame_sse,
    split_text,
)
from toolproxy.scripted.script import Reply
from toolproxy.wire.eventstream import encode

CHUNK_HEADERS = {
    ":event-type": "chunk",
    ":content-type": "application/json",
    ":message-type": "event",
}


def _stop_reason(reply: Reply) -> str:
    if reply.finish_reason is not None:
        return reply.finish_reason
    return "tool_use" if reply.tool_calls else "end_turn"


def _usage(counts: Counts, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": counts.input,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": counts.cached,
        "output_tokens": output_tokens,
    }


def _message(reply: Reply, ctx: Context, content: list[Any], final: bool) -> dict[str, Any]:
    counts = count_tokens(reply, ctx)
    return {
        "id": ctx.make_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": content,
        # message_start carries no stop reason yet and one output token, as the API does.
        "stop_reason": _stop_reason(reply) if final else None,
        "stop_sequence": None,
        "usage": _usage(counts, counts.output if final else 1),
    }


def _raw_marker(index: int) -> str:
    return f"\x00scripted-raw-input-{index}\x00"


def render_body(reply: Reply, ctx: Context) -> bytes:
    """The non-streamed `message` object.

    A call whose arguments are a raw string has that text spliced in verbatim as `input`,
    so malformed arguments make the whole body malformed, which is what a broken upstream
    would send.
    """
    content: list[Any] = []
    if reply.text is not None:
        content.append({"type": "text", "text": reply.text})
    for i, call in enumerate(reply.tool_calls):
        raw = isinstance(call.arguments, str)
        content.append(
            {
                "type": "tool_use",
                "id": ctx.call_id(call, i, "toolu_"),
                "name": call.name,
                "input": _raw_marker(i) if raw else call.arguments,
            }
        )
    body = dump_json(_message(reply, ctx, content, final=True)).decode()
    for i, call in enumerate(reply.tool_calls):
        if isinstance(call.arguments, str):
            marker = json.dumps(_raw_marker(i), ensure_ascii=False)
            body = body.replace(marker, call.arguments)
    return body.encode()


def render_events(reply: Reply, ctx: Context) -> list[bytes]:
    """The event stream as SSE, or as Bedrock's InvokeModelWithResponseStream sends it
    (`ctx.bedrock`: each event's JSON, base64, in a `chunk` message)."""
    if ctx.bedrock:
        return [eventstream_chunk(p) for p in event_payloads(reply, ctx)]
    return [frame_sse(p, event=p["type"]) for p in event_payloads(reply, ctx)]


def eventstream_chunk(payload: dict[str, Any]) -> bytes:
    """One event as an AWS event-stream `chunk` message (``{"bytes": <base64 JSON>}``)."""
    inner = base64.b64encode(dump_json(payload)).decode()
    return encode(CHUNK_HEADERS, dump_json({"bytes": inner}))


def event_payloads(reply: Reply, ctx: Context) -> list[dict[str, Any]]:
    """The events: message_start, blocks with deltas, message_delta, message_stop."""
    payloads: list[dict[str, Any]] = [
        {"type": "message_start", "message": _message(reply, ctx, [], final=False)}
    ]
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if reply.text is not None:
        deltas = [
            {"type": "text_delta", "text": piece}
            for piece in split_text(reply.text, reply.text_chunk_size)
        ]
        blocks.append(({"type": "text", "text": ""}, deltas))
    for i, call in enumerate(reply.tool_calls):
        start = {"type": "tool_use", "id": ctx.call_id(call, i, "toolu_"), "name": call.name}
        # The API opens every tool_use block with an empty partial_json.
        pieces = ["", *split_text(arguments_text(call), reply.args_chunk_size)]
        deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
        blocks.append(({**start, "input": {}}, deltas))
    for index, (block, deltas) in enumerate(blocks):
        payloads.append({"type": "content_block_start", "index": index, "content_block": block})
        if index == 0:
            payloads.append({"type": "ping"})
        payloads += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        payloads.append({"type": "content_block_stop", "index": index})
    if not blocks:
        payloads.append({"type": "ping"})
    counts = count_tokens(reply, ctx)
    payloads.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
            "usage": _usage(counts, counts.output),
        }
    )
    payloads.append({"type": "message_stop"})
    return payloads
