"""OpenAI Responses replies: a `response` object or its typed SSE events."""

from __future__ import annotations

from typing import Any

from toolproxy.scripted.context import (
    Context,
    arguments_text,
    count_tokens,
    dump_json,
    frame_sse,
    split_text,
)
from toolproxy.scripted.script import Reply

# finish_reason overrides that end a response as incomplete, with the reason reported.
INCOMPLETE_REASONS = {
    "length": "max_output_tokens",
    "max_tokens": "max_output_tokens",
    "max_output_tokens": "max_output_tokens",
    "content_filter": "content_filter",
}


def _message_item(ctx: Context, status: str, text: str) -> dict[str, Any]:
    content = [] if status == "in_progress" else [_text_part(text)]
    return {
        "id": ctx.make_id("msg_"),
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    }


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _call_items(reply: Reply, ctx: Context, status: str) -> list[dict[str, Any]]:
    return [
        {
            "id": ctx.make_id("fc_", i),
            "type": "function_call",
            "status": status,
            "arguments": "" if status == "in_progress" else arguments_text(call),
            "call_id": ctx.call_id(call, i, "call_"),
            "name": call.name,
        }
        for i, call in enumerate(reply.tool_calls)
    ]


def _output(reply: Reply, ctx: Context) -> list[dict[str, Any]]:
    items = [] if reply.text is None else [_message_item(ctx, "completed", reply.text)]
    return items + _call_items(reply, ctx, "completed")


def _response(reply: Reply, ctx: Context, final: bool) -> dict[str, Any]:
    """The response object: in progress and empty, or final with output and usage."""
    req = ctx.request
    reason = INCOMPLETE_REASONS.get(reply.finish_reason or "")
    status = "in_progress" if not final else "incomplete" if reason else "completed"
    usage = None
    if final:
        counts = count_tokens(reply, ctx)
        usage = {
            "input_tokens": counts.input,
            "input_tokens_details": {"cached_tokens": counts.cached},
            "output_tokens": counts.output,
            "output_tokens_details": {"reasoning_tokens": counts.reasoning},
            "total_tokens": counts.total,
        }
    return {
        "id": ctx.make_id("resp_"),
        "object": "response",
        "created_at": ctx.created,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": {"reason": reason} if final and reason else None,
        # Echo what the real API echoes, so clients reading these back see their request.
        "instructions": req.get("instructions"),
        "max_output_tokens": req.get("max_output_tokens"),
        "model": ctx.model,
        "output": _output(reply, ctx) if final else [],
        "parallel_tool_calls": req.get("parallel_tool_calls", True),
        "previous_response_id": req.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": req.get("store", True),
        "temperature": req.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": req.get("tool_choice", "auto"),
        "tools": req.get("tools", []),
        "top_p": req.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": req.get("metadata") or {},
    }


def render_body(reply: Reply, ctx: Context) -> bytes:
    """The non-streamed `response` object."""
    return dump_json(_response(reply, ctx, final=True))


def render_events(reply: Reply, ctx: Context) -> list[bytes]:
    """The typed event stream, each event numbered by `sequence_number`."""
    payloads: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        payloads.append({"type": kind, "sequence_number": len(payloads), **fields})

    emit("response.created", response=_response(reply, ctx, final=False))
    emit("response.in_progress", response=_response(reply, ctx, final=False))
    index = 0
    if reply.text is not None:
        item_id = ctx.make_id("msg_")
        at = {"item_id": item_id, "output_index": index, "content_index": 0}
        emit(
            "response.output_item.added",
            output_index=index,
            item=_message_item(ctx, "in_progress", ""),
        )
        emit("response.content_part.added", **at, part=_text_part(""))
        for piece in split_text(reply.text, reply.text_chunk_size):
            emit("response.output_text.delta", **at, delta=piece, logprobs=[])
        emit("response.output_text.done", **at, text=reply.text, logprobs=[])
        emit("response.content_part.done", **at, part=_text_part(reply.text))
        emit(
            "response.output_item.done",
            output_index=index,
            item=_message_item(ctx, "completed", reply.text),
        )
        index += 1
    started = _call_items(reply, ctx, "in_progress")
    finished = _call_items(reply, ctx, "completed")
    for call, item, done in zip(reply.tool_calls, started, finished, strict=True):
        at = {"item_id": item["id"], "output_index": index}
        emit("response.output_item.added", output_index=index, item=item)
        for piece in split_text(arguments_text(call), reply.args_chunk_size):
            emit("response.function_call_arguments.delta", **at, delta=piece)
        emit("response.function_call_arguments.done", **at, arguments=done["arguments"])
        emit("response.output_item.done", output_index=index, item=done)
        index += 1
    final = _response(reply, ctx, final=True)
    emit(f"response.{final['status']}", response=final)
    return [frame_sse(p, event=p["type"]) for p in payloads]
