"""Calling an OpenAI-compatible Chat Completions endpoint: the one adapter over the `openai` SDK
that toolproxy's own features use (the LLM judge, and replay's candidate calls).

`make_client(base_url, model, key_env)` returns an `LlmClient` pinned to one model;
`client.complete(messages, **params)` returns a `Completion` holding the reply's text or,
when the endpoint fails, a stable `error_kind` and a message saying what happened. Endpoint
failures are values, not exceptions: callers decide what a failure means for them.

The API key is read from the environment variable named by `key_env` when the client is
made, handed to the SDK, and never put in a result or a message. An unset variable sends a
placeholder, so keyless local endpoints (vLLM, llama.cpp, Ollama) work without one.

`acall(candidate, ...)` is replay's async call: streamed or not, with TTFT/TPS measured,
tool-call deltas put back together, and failures as `CandidateReply.error_kind` values
(listed with that class below).

Stable strings (`Completion.error_kind`):
    timeout       no complete reply within `timeout_s` (after the retries)
    connection    the endpoint could not be reached, or dropped the connection
    http_status   the endpoint answered with an HTTP error status (4xx, 5xx)
    bad_response  the endpoint answered 200 with something that is not a chat completion
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Literal

import httpx2
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from pydantic import BaseModel, Field

from toolproxy.replay.model import Candidate, RecordedCall, TurnRecord
from toolproxy.wire.common import as_dict, as_int, as_list, as_str, load_json, parse_arguments

ErrorKind = Literal["timeout", "connection", "http_status", "bad_response"]
NO_KEY = "no-key"  # what an unset key variable sends: keyless endpoints ignore it
MAX_MESSAGE = 500


class Completion(BaseModel):
    """One call's outcome: the reply's text, or why there is none."""

    text: str | None = Field(default=None, description="the first choice's text (None: error)")
    model: str | None = Field(default=None, description="the model the endpoint says answered")
    finish_reason: str | None = None
    error_kind: ErrorKind | None = Field(default=None, description="None exactly when it worked")
    error: str | None = Field(default=None, description="what went wrong, one line")

    @property
    def ok(self) -> bool:
        """Whether the endpoint gave a reply."""
        return self.error_kind is None


@dataclass
class LlmClient:
    """A client pinned to one endpoint and one model."""

    sdk: openai.OpenAI
    model: str
    key_env: str

    def complete(self, messages: Sequence[dict[str, Any]], **params: Any) -> Completion:
        """Send `messages` to the pinned model (extra `params` go into the request body)."""
        try:
            response = self.sdk.chat.completions.create(
                model=self.model,
                messages=list(messages),  # type: ignore[arg-type]  # plain dicts are the wire form
                **params,
            )
        except openai.APITimeoutError:
            return _failed("timeout", f"no reply within {self.sdk.timeout} s")
        except openai.APIConnectionError as exc:
            return _failed("connection", f"cannot reach {self.sdk.base_url}: {_cause(exc)}")
        except openai.APIStatusError as exc:
            hint = f" (is ${self.key_env} set?)" if exc.status_code in (401, 403) else ""
            return _failed("http_status", f"HTTP {exc.status_code}{hint}: {exc.message}")
        except openai.APIResponseValidationError as exc:
            return _failed("bad_response", f"not a chat completion: {exc.message}")
        return _read(response)


def make_client(
    base_url: str,
    model: str,
    key_env: str,
    *,
    timeout_s: float = 60.0,
    retries: int = 2,
) -> LlmClient:
    """A client for the endpoint at `base_url` (e.g. `https://api.openai.com/v1`), pinned to
    `model`, with the API key from `$key_env`. `retries` re-sends on timeouts, connection
    errors, 408/409/429 and 5xx (the SDK's rule, with its backoff)."""
    sdk = openai.OpenAI(
        base_url=base_url,
        api_key=os.environ.get(key_env) or NO_KEY,
        timeout=timeout_s,
        max_retries=retries,
    )
    return LlmClient(sdk=sdk, model=model, key_env=key_env)


def _read(response: Any) -> Completion:
    """The text of a completion; anything else that parsed (a bare string, an object
    without choices) is a bad response, since the SDK only validates loosely."""
    choices = getattr(response, "choices", None)
    if not choices:
        return _failed("bad_response", f"not a chat completion: {_cut(repr(response))}")
    choice = choices[0]
    message = getattr(choice, "message", None)
    text = getattr(message, "content", None)
    if not isinstance(text, str):
        return _failed("bad_response", "the reply has no text content")
    return Completion(
        text=text,
        model=getattr(response, "model", None),
        finish_reason=getattr(choice, "finish_reason", None),
    )


def _failed(kind: ErrorKind, message: str) -> Completion:
    return Completion(error_kind=kind, error=_cut(message))


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc
    return f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


# --- replay: one candidate turn, streamed or not, measured ------------------------------
#
# Stable strings (`CandidateReply.error_kind`); `RETRYABLE` are worth sending again:
#     rate_limited  HTTP 429                                   (retried, honours Retry-After)
#     server_error  HTTP 5xx                                   (retried)
#     client_error  any other HTTP 4xx: the request is wrong   (not retried: it would fail again)
#     timeout       no answer, or no next chunk, within the candidate's timeout (retried)
#     connection    cannot connect, or the connection dropped before a reply began (retried)
#     cut_stream    a stream that stopped before its end (no finish_reason)  (retried)
#     bad_response  200 with something that is not a chat completion (not retried: an
#                   endpoint that answers garbage answers it again)

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
_BODY_CHARS = 2000


class CandidateReply(BaseModel):
    """One request to a candidate: what it answered and how fast, or why it did not."""

    text: str | None = Field(default=None, description="assistant text, if any")
    calls: list[RecordedCall] = Field(default_factory=list, description="tool calls, in order")
    finish_reason: str | None = None
    model: str | None = Field(default=None, description="the model the endpoint says answered")
    input_tokens: int | None = None
    output_tokens: int | None = None
    stream: bool = Field(default=False, description="whether the request asked for a stream")
    ttft_ms: float | None = Field(default=None, description="stream: to first content delta")
    tps: float | None = Field(default=None, description="stream: output tokens per second")
    latency_ms: float | None = Field(default=None, description="request to complete reply")
    status: int | None = Field(default=None, description="HTTP status, when one came")
    error_kind: ReplyErrorKind | None = Field(default=None, description="None exactly when ok")
    error: str | None = Field(default=None, description="what went wrong, one line")
    retry_after: float | None = Field(default=None, description="seconds the endpoint asked")
    request: dict[str, Any] = Field(default_factory=dict, description="the body sent")
    response: dict[str, Any] = Field(default_factory=dict, description="JSON-able summary")

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


def make_async_client(candidate: Candidate, key: str | None) -> openai.AsyncOpenAI:
    """An async SDK client for `candidate`: no SDK retries (replay backs off itself)."""
    return openai.AsyncOpenAI(
        base_url=candidate.base_url,
        api_key=key or "not-needed",
        max_retries=0,
        timeout=candidate.timeout_s,
    )


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


async def acall(
    candidate: Candidate,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]],
    params: dict[str, Any],
    stream: bool,
    key: str | None,
    *,
    client: openai.AsyncOpenAI | None = None,
) -> CandidateReply:
    """Send one Chat Completions request to `candidate`; never raises.

    `client` (from `make_async_client`) is reused when given, so a run keeps its
    connections; without it a client is made and closed for this one call.
    """
    body = build_body(candidate, messages, tools, params, stream)
    own = client is None
    sdk = client or make_async_client(candidate, key)
    try:
        reply = await (_stream(sdk, body) if stream else _whole(sdk, body))
    finally:
        if own:
            await sdk.close()
    reply.request = body
    if not reply.response:
        reply.response = _summary(reply)
    return reply


async def _whole(sdk: openai.AsyncOpenAI, body: dict[str, Any]) -> CandidateReply:
    started = time.perf_counter()
    try:
        # The raw response, read as JSON here: building the SDK's models costs more per
        # call than everything else replay does with a reply.
        response = await sdk.post("/chat/completions", body=body, cast_to=httpx2.Response)
        raw = await response.aread()
    except httpx2.TimeoutException:
        return _failure("timeout", "no answer within the timeout", False)
    except httpx2.TransportError as exc:
        return _failure("connection", f"connection lost: {type(exc).__name__}: {exc}", False)
    except Exception as exc:  # noqa: BLE001 - every failure is a value for the replay
        return _error_reply(exc, streaming=False, stream=False)
    latency = (time.perf_counter() - started) * 1000
    data, error = load_json(raw)
    choices = data.get("choices") if isinstance(data, dict) else None
    if error is not None or not isinstance(choices, list) or not choices:
        shown = raw[:200].decode("utf-8", "replace")
        return _bad(f"not a chat completion: {shown!r}", stream=False)
    choice = as_dict(choices[0])
    message = as_dict(choice.get("message"))
    calls = []
    for i, tc in enumerate(as_list(message.get("tool_calls"))):
        fn = as_dict(as_dict(tc).get("function"))
        raw_args = fn.get("arguments")
        call_id, name = as_str(as_dict(tc).get("id")), as_str(fn.get("name"))
        calls.append(_call(call_id, name, raw_args if isinstance(raw_args, str) else "", i))
    usage = as_dict(data.get("usage"))
    return CandidateReply(
        text=as_str(message.get("content")),
        calls=calls,
        finish_reason=as_str(choice.get("finish_reason")),
        model=as_str(data.get("model")),
        input_tokens=as_int(usage.get("prompt_tokens")),
        output_tokens=as_int(usage.get("completion_tokens")),
        latency_ms=latency,
        status=200,
    )


async def _stream(sdk: openai.AsyncOpenAI, body: dict[str, Any]) -> CandidateReply:
    started = time.perf_counter()
    try:
        chunks = await sdk.post(
            "/chat/completions",
            body=body,
            cast_to=ChatCompletion,
            stream=True,
            stream_cls=openai.AsyncStream[ChatCompletionChunk],
        )
    except Exception as exc:  # noqa: BLE001 - every failure is a value for the replay
        return _error_reply(exc, streaming=False, stream=True)
    acc = _Assembly()
    try:
        async for chunk in chunks:
            acc.add(chunk, time.perf_counter())
    except Exception as exc:  # noqa: BLE001 - a broken stream is a value too
        return _error_reply(exc, streaming=True, stream=True)
    return acc.reply(started, time.perf_counter())


@dataclass
class _Assembly:
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

    def add(self, chunk: Any, now: float) -> None:
        self.chunks += 1
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
            return _bad("the stream carried no chunks (not an event stream?)", stream=True)
        calls = [
            _call(s["id"], s["name"] or None, "".join(s["arguments"]), i)
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
        )
        if self.finish_reason is None:
            # Ended cleanly but never said it was done: what a proxy cutting a stream leaves.
            reply.error_kind = "cut_stream"
            reply.error = f"the stream ended after {self.chunks} chunks without a finish_reason"
        return reply


def _call(call_id: str | None, name: str | None, raw: str, index: int) -> RecordedCall:
    arguments, _error = parse_arguments(raw)
    # An id is needed to answer the call; endpoints that omit it get a stable stand-in.
    return RecordedCall(
        call_id=call_id or f"call_{index}", name=name, arguments_raw=raw, arguments=arguments
    )


def _error_reply(exc: Exception, *, streaming: bool, stream: bool) -> CandidateReply:
    """The reply for what the SDK raised, `streaming` once chunks had begun to arrive."""
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        kind: ReplyErrorKind = (
            "rate_limited" if code == 429 else "server_error" if code >= 500 else "client_error"
        )
        return CandidateReply(
            stream=stream,
            status=code,
            error_kind=kind,
            error=_cut(f"HTTP {code}: {exc.message}"),
            retry_after=retry_after(exc.response.headers),
            response={
                "status": code,
                "error_kind": kind,
                "body": _cut_body(exc.response),
            },
        )
    if isinstance(exc, openai.APITimeoutError):
        return _failure("timeout", "no answer within the timeout", stream)
    if isinstance(exc, openai.APIConnectionError):
        kind = "cut_stream" if streaming else "connection"
        reply = _failure(kind, f"connection lost: {_cause(exc)}", stream)
        reply.status = 200 if streaming else None
        return reply
    if isinstance(exc, ValueError | openai.APIResponseValidationError):
        return _bad(f"unreadable reply: {_cause(exc)}", stream=stream)
    kind = "cut_stream" if streaming else "bad_response"
    return _failure(kind, f"{type(exc).__name__}: {exc}", stream)


def _failure(kind: ReplyErrorKind, message: str, stream: bool) -> CandidateReply:
    return CandidateReply(stream=stream, error_kind=kind, error=_cut(message))


def _bad(message: str, *, stream: bool) -> CandidateReply:
    return CandidateReply(stream=stream, status=200, error_kind="bad_response", error=_cut(message))


def _cut_body(response: Any) -> str:
    try:
        text = str(response.text)
    except Exception:  # noqa: BLE001 - an unread streamed body has no text
        return ""
    return text[:_BODY_CHARS]


def retry_after(headers: Any) -> float | None:
    """Seconds to wait that the endpoint asked for: `retry-after-ms`, else `Retry-After` as
    seconds or an HTTP date; None when absent or unreadable."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _summary(reply: CandidateReply) -> dict[str, Any]:
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
