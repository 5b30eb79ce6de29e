"""Ollama's own chat API replies (`/api/chat`): one object, or NDJSON lines (its default).

A call's `arguments` is an object (a scripted raw string is sent as it is, as a server
that got it wrong would); calls carry no id, as Ollama's do. The last line (or the one
object) says `done: true` with `done_reason` and the counts (`prompt_eval_count`,
`eval_count`) and their durations.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from toolproxy.scripted.context import Context, count_tokens, dump_json, split_text
from toolproxy.scripted.script import Reply


def _at(ctx: Context) -> str:
    return datetime.fromtimestamp(ctx.created, UTC).isoformat().replace("+00:00", "Z")


def _calls(reply: Reply) -> list[dict[str, Any]]:
    return [{"function": {"name": c.name, "arguments": c.arguments}} for c in reply.tool_calls]


def _done(reply: Reply, ctx: Context, message: dict[str, Any]) -> dict[str, Any]:
    counts = count_tokens(reply, ctx)
    return {
        "model": ctx.model,
        "created_at": _at(ctx),
        "message": message,
        "done_reason": reply.finish_reason or "stop",
        "done": True,
        "total_duration": 1_000_000 * (counts.input + counts.output),
        "load_duration": 1_000_000,
        "prompt_eval_count": counts.input,
        "prompt_eval_duration": 500_000 * counts.input,
        "eval_count": counts.output,
        "eval_duration": 500_000 * counts.output,
    }


def render_body(reply: Reply, ctx: Context) -> bytes:
    """The non-streamed answer (`"stream": false`)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or ""}
    if reply.tool_calls:
        message["tool_calls"] = _calls(reply)
    return dump_json(_done(reply, ctx, message))


def render_events(reply: Reply, ctx: Context) -> list[bytes]:
    """The streamed lines: the text in pieces, the calls whole in one line, then done."""

    def line(message: dict[str, Any]) -> bytes:
        chunk = {"model": ctx.model, "created_at": _at(ctx), "message": message, "done": False}
        return dump_json(chunk) + b"\n"

    pieces = split_text(reply.text or "", reply.text_chunk_size)
    lines = [line({"role": "assistant", "content": piece}) for piece in pieces]
    if reply.tool_calls:
        lines.append(line({"role": "assistant", "content": "", "tool_calls": _calls(reply)}))
    last = _done(reply, ctx, {"role": "assistant", "content": ""})
    return [*lines, dump_json(last) + b"\n"]
