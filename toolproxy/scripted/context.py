"""What every renderer needs: the request it answers, ids, token counts, SSE framing.

Pure: no I/O. Ids come from the play number in deterministic mode so that two plays of the
same script produce the same bytes.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from toolproxy.scripted.script import Reply, ScriptedCall

Format = Literal["chat", "responses", "messages", "ollama", "gemini", "converse"]

# 2023-11-14T22:13:20Z: any fixed instant will do; this one is easy to spot.
FIXED_CREATED = 1_700_000_000


def _slug(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", key)[:40] or "_"


@dataclass(frozen=True)
class Context:
    """One request being answered: its format, what it asked for, and how ids are made."""

    fmt: Format
    key: str = "default"
    play: int = 1
    deterministic: bool = True
    model: str = "scripted"
    stream: bool = False
    include_usage: bool = False
    array: bool = False  # a Gemini stream as one JSON array (no `alt=sse` asked)
    bedrock: bool = False  # on a Bedrock path: streams in AWS event-stream messages, its errors
    request: dict[str, Any] = field(default_factory=dict)
    request_bytes: int = 0
    token: str = field(init=False)
    created: int = field(init=False)

    def __post_init__(self) -> None:
        # One token per response keeps every id of that response consistent.
        if self.deterministic:
            token, created = f"{_slug(self.key)}_{self.play:04d}", FIXED_CREATED
        else:
            token, created = uuid.uuid4().hex[:24], int(time.time())
        object.__setattr__(self, "token", token)
        object.__setattr__(self, "created", created)

    def make_id(self, prefix: str, *parts: object) -> str:
        """An id such as `chatcmpl-default_0001` or `call_default_0001_2`."""
        return prefix + "_".join([self.token, *map(str, parts)])

    def call_id(self, call: ScriptedCall, index: int, prefix: str) -> str:
        """The scripted call id, or one made from the response token and call position."""
        return call.id if call.id is not None else self.make_id(prefix, index)


@dataclass(frozen=True)
class Counts:
    """Token counts a reply reports."""

    input: int
    output: int
    cached: int
    reasoning: int

    @property
    def total(self) -> int:
        """Input plus output tokens."""
        return self.input + self.output


def arguments_text(call: ScriptedCall) -> str:
    """A call's argument text as emitted: a dict compactly serialised, a string verbatim."""
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(call.arguments, separators=(",", ":"), ensure_ascii=False)


def count_tokens(reply: Reply, ctx: Context) -> Counts:
    """Scripted usage where given, else about four characters per token."""
    usage = reply.usage
    emitted = len(reply.text or "") + sum(len(arguments_text(c)) for c in reply.tool_calls)
    estimate_in = max(1, ctx.request_bytes // 4)
    estimate_out = max(1, emitted // 4)
    if usage is None:
        return Counts(estimate_in, estimate_out, 0, 0)
    return Counts(
        estimate_in if usage.input_tokens is None else usage.input_tokens,
        estimate_out if usage.output_tokens is None else usage.output_tokens,
        usage.cached_input_tokens,
        usage.reasoning_tokens,
    )


def split_text(text: str, size: int) -> list[str]:
    """Consecutive pieces of at most `size` characters (none for the empty string)."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def dump_json(value: Any) -> bytes:
    """Compact UTF-8 JSON, as the providers send it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def frame_sse(data: Any, event: str | None = None) -> bytes:
    """One SSE event: an optional `event:` line, one `data:` line, a blank line."""
    payload = data.encode() if isinstance(data, str) else dump_json(data)
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + payload + b"\n\n"
