"""One candidate request, as replay keeps it: the body sent (`build_body`) and what came
back (`CandidateReply`). Pure.

`client.acall` makes replies from the SDK; `stream.Assembly` from a stream's chunks; the
loop, the sink and the grader read them.

Stable strings (`CandidateReply.error_kind`); `RETRYABLE` are worth sending again:
    rate_limited  HTTP 429                                   (retried, honours Retry-After)
    server_error  HTTP 5xx                                   (retried)
    client_error  any other HTTP 4xx: the request is wrong   (not retried: it would fail again)
    timeout       no answer, or no next chunk, within the candidate's timeout (retried)
    connection    cannot connect, or the connection dropped before a reply began (retried)
    cut_stream    a stream that stopped before its end (no finish_reason)  (retried)
    bad_response  200 with something that is not a chat completion (not retried: an
                  endpoint that answers garbage answers it again)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from toolproxy.records import ToolCall
from toolproxy.replay.model import Candidate, TurnRecord
from toolproxy.wire.common import one_line, parse_arguments

ReplyErrorKind = Literal[
    "rate_limited",
    "server_error",
    "client_error",
    "timeout",
    "connection",
    "cut_stream",
    "bad_response",
]
RETRYABLE: frozenset[str] = frozenset(
    {"rate_limited", "server_error", "timeout", "connection", "cut_stream"}
)

# Keys the request body owns; a recorded or configured param never overrides them.
_RESERVED = frozenset({"model", "messages", "tools", "stream", "stream_options"})


def build_body(
    candidate: Candidate,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]],
    params: dict[str, Any],
    stream: bool,
) -> dict[str, Any]:
    """The request body: recorded `params`, then the candidate's params over them."""
    body: dict[str, Any] = {"model": candidate.model, "messages": list(messages)}
    if tools:
        body["tools"] = list(tools)
    merged = {**params, **candidate.params}
    if not tools:
        merged.pop("tool_choice", None)  # endpoints refuse tool_choice without tools
        merged.pop("parallel_tool_calls", None)
    body.update({k: v for k, v in merged.items() if k not in _RESERVED})
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


class CandidateReply(BaseModel):
    """One request to a candidate: what it answered and how fast, or why it did not."""

    text: str | None = Field(default=None, description="assistant text, if any")
    calls: list[ToolCall] = Field(default_factory=list, description="tool calls, in order")
    finish_reason: str | None = None
    model: str | None = Field(default=None, description="the model the endpoint says answered")
    input_tokens: int | None = None
    output_tokens: int | None = None
    stream: bool = Field(default=False, description="whether the request asked for a stream")
    ttft_ms: float | None = Field(
        default=None, description="stream: to first content delta; whole: to first body byte"
    )
    tps: float | None = Field(default=None, description="stream: output tokens per second")
    latency_ms: float | None = Field(default=None, description="request to complete reply")
    status: int | None = Field(default=None, description="HTTP status, when one came")
    error_kind: ReplyErrorKind | None = Field(default=None, description="None exactly when ok")
    error: str | None = Field(default=None, description="what went wrong, one line")
    retry_after: float | None = Field(default=None, description="seconds the endpoint asked")
    request: dict[str, Any] = Field(default_factory=dict, description="the body sent")
    response: dict[str, Any] = Field(default_factory=dict, description="JSON-able summary")
    body: bytes = Field(default=b"", description="the response body as received, if read")
    chunks: list[Any] = Field(
        default_factory=list, exclude=True, description="a stream's chunks, as the SDK read them"
    )

    def response_body(self) -> bytes:
        """The body as received; a stream as one `data:` event per chunk the SDK read
        (rendered only when asked: the store wants it, the replay loop does not)."""
        if not self.chunks:
            return self.body
        events = [b"data: " + c.model_dump_json(exclude_unset=True).encode() for c in self.chunks]
        done = [b"data: [DONE]"] if self.finish_reason else []
        return b"\n\n".join([*events, *done]) + b"\n\n"

    @property
    def ok(self) -> bool:
        """Whether the candidate answered."""
        return self.error_kind is None

    @property
    def retryable(self) -> bool:
        """Whether sending the same request again may work."""
        return self.error_kind in RETRYABLE

    def turn(self, step: int, attempt: int, exchange_id: str) -> TurnRecord:
        """This reply as the `TurnRecord` of `step`'s `attempt`."""
        return TurnRecord(
            step=step,
            attempt=attempt,
            exchange_id=exchange_id,
            calls=self.calls,
            text=self.text,
            finish_reason=self.finish_reason,
            error_kind=self.error_kind,
            error=self.error,
            ttft_ms=self.ttft_ms,
            tps=self.tps,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
        )

    def assistant_message(self) -> dict[str, Any]:
        """The reply as the Chat Completions assistant message that continues the talk."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": c.call_id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_raw},
                }
                for c in self.calls
            ]
        return message


def make_call(call_id: str | None, name: str | None, raw: str, index: int) -> ToolCall:
    arguments, _error = parse_arguments(raw)
    # An id is needed to answer the call; endpoints that omit it get a stable stand-in.
    return ToolCall(
        call_id=call_id or f"call_{index}", name=name, arguments_raw=raw, arguments=arguments
    )


def failure(kind: ReplyErrorKind, message: str, stream: bool) -> CandidateReply:
    return CandidateReply(stream=stream, error_kind=kind, error=one_line(message))


def bad(message: str, *, stream: bool) -> CandidateReply:
    return CandidateReply(
        stream=stream, status=200, error_kind="bad_response", error=one_line(message)
    )


def summary(reply: CandidateReply) -> dict[str, Any]:
    """What the store keeps of a reply (the error summary is set where the error is read)."""
    if not reply.ok:
        return {"status": reply.status, "error_kind": reply.error_kind, "error": reply.error}
    return {
        "status": reply.status,
        "model": reply.model,
        "stream": reply.stream,
        "finish_reason": reply.finish_reason,
        "text": reply.text,
        "tool_calls": [
            {"id": c.call_id, "name": c.name, "arguments": c.arguments_raw} for c in reply.calls
        ],
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
    }
