"""Bedrock Converse replies: a ConverseResponse, or the ConverseStream's AWS event stream.

The stream is what Bedrock sends, message by message: messageStart; per block a
contentBlockStart (a tool use's id and name; none for text), its contentBlockDelta
pieces (text, or the tool input's JSON text), contentBlockStop; messageStop with the
stop reason; metadata with the usage. Every event carries the `p` padding Bedrock adds.
"""

from __future__ import annotations

from typing import Any

from toolproxy.scripted.context import Context, arguments_text, count_tokens, dump_json, split_text
from toolproxy.scripted.script import Reply
from toolproxy.wire.common import decoded
from toolproxy.wire.eventstream import encode


def _stop(reply: Reply) -> str:
    if reply.finish_reason is not None:
        return reply.finish_reason
    return "tool_use" if reply.tool_calls else "end_turn"


def _usage(reply: Reply, ctx: Context) -> dict[str, Any]:
    counts = count_tokens(reply, ctx)
    return {"inputTokens": counts.input, "outputTokens": counts.output, "totalTokens": counts.total}


def render_body(reply: Reply, ctx: Context) -> bytes:
    """The non-streamed ConverseResponse."""
    content: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
    content += [
        {
            "toolUse": {
                "toolUseId": ctx.call_id(call, i, "tooluse_"),
                "name": call.name,
                # the API sends objects: argument text as the JSON it holds, else as is
                "input": decoded(call.arguments),
            }
        }
        for i, call in enumerate(reply.tool_calls)
    ]
    body = {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": _stop(reply),
        "usage": _usage(reply, ctx),
        "metrics": {"latencyMs": 1},
    }
    return dump_json(body)


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return encode(headers, dump_json({**payload, "p": "abcdefghij"}))


def render_events(reply: Reply, ctx: Context) -> list[bytes]:
    """The ConverseStream's messages (see the module doc)."""
    events = [_event("messageStart", {"role": "assistant"})]
    index = 0
    if reply.text:
        for piece in split_text(reply.text, reply.text_chunk_size):
            events.append(
                _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}})
            )
        events.append(_event("contentBlockStop", {"contentBlockIndex": 0}))
        index = 1
    for i, call in enumerate(reply.tool_calls):
        use = {"toolUseId": ctx.call_id(call, i, "tooluse_"), "name": call.name}
        events.append(
            _event("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": use}})
        )
        for piece in split_text(arguments_text(call), reply.args_chunk_size):
            delta = {"toolUse": {"input": piece}}
            events.append(_event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta}))
        events.append(_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    events.append(_event("messageStop", {"stopReason": _stop(reply)}))
    usage = _usage(reply, ctx)
    events.append(_event("metadata", {"usage": usage, "metrics": {"latencyMs": 1}}))
    return events
