"""A streamed Chat Completions reply put back together from its chunks: pure.

`Assembly.add(chunk, now)` takes each chunk as the SDK parsed it (read by attribute);
`Assembly.reply(started, ended)` is the `CandidateReply`: text, tool calls joined by their
delta index, usage, TTFT (to the first content or tool-call delta) and TPS (output tokens
over the time between the first and the last chunk). A stream that ended without a
finish_reason is a `cut_stream`; one without chunks a `bad_response`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolproxy.replay.reply import CandidateReply, bad, make_call


@dataclass
class Assembly:
    """A streamed reply being put together: tool-call deltas joined by their index."""

    chunks: int = 0
    first: float | None = None  # first chunk of any kind
    first_delta: float | None = None  # first content or tool-call delta
    last: float | None = None
    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    kept: list[Any] = field(default_factory=list)  # the chunks, for the stored body

    def add(self, chunk: Any, now: float) -> None:
        self.chunks += 1
        self.kept.append(chunk)
        self.first = self.first if self.first is not None else now
        self.last = now
        self.model = getattr(chunk, "model", None) or self.model
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.input_tokens = getattr(usage, "prompt_tokens", None)
            self.output_tokens = getattr(usage, "completion_tokens", None)
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) != 0:
                continue  # n > 1 is not replayed; the first choice is the reply
            delta = getattr(choice, "delta", None)
            content = getattr(delta, "content", None)
            if isinstance(content, str) and content:
                self.text.append(content)
                self._delta(now)
            for tc in getattr(delta, "tool_calls", None) or []:
                self._tool_delta(tc)
                self._delta(now)
            if getattr(choice, "finish_reason", None):
                self.finish_reason = choice.finish_reason

    def _delta(self, now: float) -> None:
        if self.first_delta is None:
            self.first_delta = now

    def _tool_delta(self, tc: Any) -> None:
        index = getattr(tc, "index", None)
        slot = self.calls.setdefault(
            index if isinstance(index, int) else len(self.calls),
            {"id": None, "name": "", "arguments": []},
        )
        slot["id"] = getattr(tc, "id", None) or slot["id"]
        fn = getattr(tc, "function", None)
        name = getattr(fn, "name", None)
        if name and not slot["name"]:
            slot["name"] = name
        piece = getattr(fn, "arguments", None)
        if isinstance(piece, str):
            slot["arguments"].append(piece)

    def reply(self, started: float, ended: float) -> CandidateReply:
        if self.chunks == 0:
            return bad("the stream carried no chunks (not an event stream?)", stream=True)
        calls = [
            make_call(s["id"], s["name"] or None, "".join(s["arguments"]), i)
            for i, (_, s) in enumerate(sorted(self.calls.items()))
        ]
        ttft = None if self.first_delta is None else (self.first_delta - started) * 1000
        span = (self.last or 0.0) - (self.first or 0.0)
        tps = self.output_tokens / span if self.output_tokens and span > 0 else None
        reply = CandidateReply(
            text="".join(self.text) if self.text else None,
            calls=calls,
            finish_reason=self.finish_reason,
            model=self.model,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            stream=True,
            ttft_ms=ttft,
            tps=tps,
            latency_ms=(ended - started) * 1000,
            status=200,
            chunks=self.kept,
        )
        if self.finish_reason is None:
            # Ended cleanly but never said it was done: what a proxy cutting a stream leaves.
            reply.error_kind = "cut_stream"
            reply.error = f"the stream ended after {self.chunks} chunks without a finish_reason"
        return reply
