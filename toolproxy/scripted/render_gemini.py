"""Gemini generateContent replies: a GenerateContentResponse, or its stream.

A stream (`:streamGenerateContent`) is SSE with `alt=sse` in the query, else one JSON
array written element by element, as the API sends them; the text comes in pieces, the
calls whole (`functionCall` parts, `args` an object, no id), the last chunk with the
`finishReason` and `usageMetadata`.
"""

from __future__ import annotations

from typing import Any

from toolproxy.scripted.context import Context, count_tokens, dump_json, frame_sse, split_text
from toolproxy.scripted.script import Reply


def _finish(reply: Reply) -> str:
    return reply.finish_reason or "STOP"


def _usage(reply: Reply, ctx: Context) -> dict[str, Any]:
    counts = count_tokens(reply, ctx)
    return {
        "promptTokenCount": counts.input,
        "candidatesTokenCount": counts.output,
        "totalTokenCount": counts.total,
    }


def _chunk(ctx: Context, parts: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    finish = more.pop("finishReason", None)
    if finish is not None:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        **more,
        "modelVersion": ctx.model,
        "responseId": ctx.make_id("resp_"),
    }


def _calls(reply: Reply) -> list[dict[str, Any]]:
    return [{"functionCall": {"name": c.name, "args": c.arguments}} for c in reply.tool_calls]


def render_body(reply: Reply, ctx: Context) -> bytes:
    """The non-streamed response."""
    parts = ([{"text": reply.text}] if reply.text else []) + _calls(reply)
    usage = _usage(reply, ctx)
    return dump_json(_chunk(ctx, parts, finishReason=_finish(reply), usageMetadata=usage))


def render_events(reply: Reply, ctx: Context) -> list[bytes]:
    """The stream's chunks: SSE events, or the pieces of one JSON array (`ctx.array`)."""
    chunks = [
        _chunk(ctx, [{"text": p}]) for p in split_text(reply.text or "", reply.text_chunk_size)
    ]
    if reply.tool_calls:
        chunks.append(_chunk(ctx, _calls(reply)))
    last = chunks.pop() if chunks else _chunk(ctx, [{"text": ""}])
    last["candidates"][0]["finishReason"] = _finish(reply)
    last["usageMetadata"] = _usage(reply, ctx)
    chunks.append(last)
    if not ctx.array:
        return [frame_sse(chunk) for chunk in chunks]
    pieces = [(b"[" if i == 0 else b",\r\n") + dump_json(c) for i, c in enumerate(chunks)]
    return [*pieces, b"]"]
