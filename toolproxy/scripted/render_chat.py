"""OpenAI Chat Completions replies: a `chat.completion` body or `chat.completion.chunk` SSE."""

from __future__ import annotations

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

DONE = b"data: [DONE]\n\n"


def _finish_reason(reply: Reply) -> str:
    if reply.finish_reason is not None:
        return reply.finish_reason
    return "tool_calls" if reply.tool_calls else "stop"


def _usage(counts: Counts) -> dict[str, Any]:
    return {
        "prompt_tokens": counts.input,
        "completion_tokens": counts.output,
        "total_tokens": counts.total,
        "prompt_tokens_details": {"cached_tokens": counts.cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": counts.reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def render_body(reply: Reply, ctx: Context) -> bytes:
    """The non-streamed `chat.completion` object."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.text,
        "refusal": None,
        "annotations": [],
    }
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": ctx.call_id(call, i, "call_"),
                "type": "function",
                "function": {"name": call.name, "arguments": arguments_text(call)},
            }
            for i, call in enumerate(reply.tool_calls)
        ]
    return dump_json(
        {
            "id": ctx.make_id("chatcmpl-"),
            "object": "chat.completion",
            "created": ctx.created,
            "model": ctx.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": _finish_reason(reply),
                }
            ],
            "usage": _usage(count_tokens(reply, ctx)),
            "service_tier": "default",
            "system_fingerprint": None,
        }
    )


def _call_deltas(reply: Reply, ctx: Context) -> list[dict[str, Any]]:
    """Tool-call deltas, parallel calls interleaved round-robin (parsers must key by index)."""
    headers: list[dict[str, Any]] = []
    pieces: list[list[str]] = []
    for i, call in enumerate(reply.tool_calls):
        headers.append(
            {
                "index": i,
                "id": ctx.call_id(call, i, "call_"),
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
        )
        pieces.append(split_text(arguments_text(call), reply.args_chunk_size))
    deltas = [{"tool_calls": [header]} for header in headers]
    for round_ in range(max((len(p) for p in pieces), default=0)):
        for i, call_pieces in enumerate(pieces):
            if round_ < len(call_pieces):
                piece = {"index": i, "function": {"arguments": call_pieces[round_]}}
                deltas.append({"tool_calls": [piece]})
    return deltas


def render_events(reply: Reply, ctx: Context) -> list[bytes]:
    """The streamed chunks, one SSE event each, ending with `data: [DONE]`."""
    base: dict[str, Any] = {
        "id": ctx.make_id("chatcmpl-"),
        "object": "chat.completion.chunk",
        "created": ctx.created,
        "model": ctx.model,
        "service_tier": "default",
        "system_fingerprint": None,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body = {**base, "choices": [choice]}
        if ctx.include_usage:
            # OpenAI sends usage: null on every chunk but the last when usage is asked for.
            body["usage"] = None
        return frame_sse(body)

    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": "", "refusal": None}]
    deltas += [{"content": piece} for piece in split_text(reply.text or "", reply.text_chunk_size)]
    deltas += _call_deltas(reply, ctx)
    events = [chunk(delta) for delta in deltas]
    events.append(chunk({}, _finish_reason(reply)))
    if ctx.include_usage:
        usage = _usage(count_tokens(reply, ctx))
        events.append(frame_sse({**base, "choices": [], "usage": usage}))
    events.append(DONE)
    return events
