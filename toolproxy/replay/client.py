"""Replay's calls to a candidate: the `openai` SDK adapter (async, streamed or not).

`make_async_client(candidate, key)` is the SDK client a run keeps per candidate: no SDK
retries (replay backs off itself) and the aiohttp transport (`openai[aiohttp]`), which
costs about half the CPU per request of the default httpx transport: a replay at high
concurrency is bound by the client's CPU, not by the endpoint.

`acall(candidate, ...)` sends one Chat Completions request and never raises: failures are
`CandidateReply.error_kind` values (`toolproxy.replay.reply`).
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import cache
from typing import Any, Final

import httpx2
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from toolproxy.capture.redact import without
from toolproxy.replay.model import Candidate
from toolproxy.replay.reply import (
    CandidateReply,
    ReplyErrorKind,
    bad,
    build_body,
    failure,
    make_call,
    summary,
)
from toolproxy.replay.stream import Assembly
from toolproxy.wire.common import (
    as_dict,
    as_int,
    as_list,
    as_str,
    exception_text,
    load_json,
    one_line,
)

_BODY_CHARS = 2000
# the SDK's header for a response whose body the caller reads (`with_streaming_response`)
_BODY_AS_IT_COMES: Final = {"X-Stainless-Raw-Response": "stream"}


@cache
def tls_context() -> ssl.SSLContext:
    """The TLS context every candidate client shares: the SDK's default (certifi's roots,
    `SSL_CERT_FILE`/`SSL_CERT_DIR` honoured), made once per process (~30 ms each time)."""
    return httpx2.create_ssl_context()


def make_async_client(candidate: Candidate, key: str | None) -> openai.AsyncOpenAI:
    """An async SDK client for `candidate`: no SDK retries (replay backs off itself), the
    aiohttp transport, as many pooled connections as the candidate's concurrency. Made
    inside the event loop that uses it (aiohttp binds its session to the running loop)."""
    return openai.AsyncOpenAI(
        base_url=candidate.base_url,
        api_key=key or "not-needed",
        max_retries=0,
        timeout=candidate.timeout_s,
        http_client=openai.DefaultAioHttpClient(
            timeout=candidate.timeout_s,
            verify=tls_context(),
            limits=httpx2.Limits(
                max_connections=max(candidate.concurrency, 1),
                max_keepalive_connections=max(candidate.concurrency, 1),
            ),
        ),
    )


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
        reply = await (_stream(sdk, body, key) if stream else _whole(sdk, body, key))
    finally:
        if own:
            await sdk.close()
    reply.request = body
    if not reply.response:
        reply.response = summary(reply)
    return reply


async def _whole(sdk: openai.AsyncOpenAI, body: dict[str, Any], key: str | None) -> CandidateReply:
    started = time.perf_counter()
    first: float | None = None
    try:
        # The raw response, read as JSON here: building the SDK's models costs more per
        # call than everything else replay does with a reply. Its body is read as it
        # arrives (the SDK's own `with_streaming_response` header), so the time to its
        # first byte is known: what the capture records as a whole reply's `ttfb_ms`.
        response = await sdk.post(
            "/chat/completions",
            body=body,
            cast_to=httpx2.Response,
            options={"headers": _BODY_AS_IT_COMES},
        )
        parts = []
        try:
            async for part in response.aiter_bytes():
                if first is None:
                    first = time.perf_counter()
                parts.append(part)
        finally:
            await response.aclose()
        raw = b"".join(parts)
    except Exception as exc:  # noqa: BLE001 - every failure is a value for the replay
        return _error_reply(exc, key, streaming=False, stream=False)
    ended = time.perf_counter()
    latency = (ended - started) * 1000
    data, error = load_json(raw)
    choices = data.get("choices") if isinstance(data, dict) else None
    if error is not None or not isinstance(choices, list) or not choices:
        shown = without(raw.decode("utf-8", "replace"), key)[:200]
        reply = bad(f"not a chat completion: {shown!r}", stream=False)
        reply.body = raw
        return reply
    choice = as_dict(choices[0])
    message = as_dict(choice.get("message"))
    calls = []
    for i, tc in enumerate(as_list(message.get("tool_calls"))):
        fn = as_dict(as_dict(tc).get("function"))
        raw_args = fn.get("arguments")
        call_id, name = as_str(as_dict(tc).get("id")), as_str(fn.get("name"))
        calls.append(make_call(call_id, name, raw_args if isinstance(raw_args, str) else "", i))
    usage = as_dict(data.get("usage"))
    return CandidateReply(
        text=as_str(message.get("content")),
        calls=calls,
        finish_reason=as_str(choice.get("finish_reason")),
        model=as_str(data.get("model")),
        input_tokens=as_int(usage.get("prompt_tokens")),
        output_tokens=as_int(usage.get("completion_tokens")),
        latency_ms=latency,
        ttft_ms=((first or ended) - started) * 1000,
        status=200,
        body=raw,
    )


async def _stream(sdk: openai.AsyncOpenAI, body: dict[str, Any], key: str | None) -> CandidateReply:
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
        return _error_reply(exc, key, streaming=False, stream=True)
    acc = Assembly()
    try:
        async for chunk in chunks:
            acc.add(chunk, time.perf_counter())
    except Exception as exc:  # noqa: BLE001 - a broken stream is a value too
        return _error_reply(exc, key, streaming=True, stream=True)
    return acc.reply(started, time.perf_counter())


def _error_reply(
    exc: Exception, key: str | None, *, streaming: bool, stream: bool
) -> CandidateReply:
    """The reply for what the SDK raised, `streaming` once chunks had begun to arrive; the
    candidate's `key` taken out of every text before it is cut (providers quote the key
    they refuse; a cut made first could keep part of it, which the sink's scrub of whole
    keys would miss)."""
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        kind: ReplyErrorKind = (
            "rate_limited" if code == 429 else "server_error" if code >= 500 else "client_error"
        )
        return CandidateReply(
            stream=stream,
            status=code,
            error_kind=kind,
            error=one_line(f"HTTP {code}: {without(exc.message, key)}"),
            retry_after=retry_after(exc.response.headers),
            response={
                "status": code,
                "error_kind": kind,
                "body": without(_text(exc.response), key)[:_BODY_CHARS],
            },
            body=_body(exc.response),
        )
    if isinstance(exc, openai.APIConnectionError | httpx2.TransportError):
        if _timed_out(exc):
            return failure("timeout", "no answer within the timeout", stream)
        kind = "cut_stream" if streaming else "connection"
        lost = without(exception_text(_root(exc)), key)
        reply = failure(kind, f"connection lost: {lost}", stream)
        reply.status = 200 if streaming else None
        return reply
    if isinstance(exc, ValueError | openai.APIResponseValidationError):
        return bad(f"unreadable reply: {without(exception_text(exc), key)}", stream=stream)
    kind = "cut_stream" if streaming else "bad_response"
    return failure(kind, without(f"{type(exc).__name__}: {exc}", key), stream)


def _root(exc: BaseException) -> BaseException:
    """The first exception of `exc`'s chain of causes."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def _timed_out(exc: BaseException) -> bool:
    """Whether `exc` comes from a timeout. The chain decides, not the outer type: the
    aiohttp transport reports a refused or reset connection as `httpx2.ConnectTimeout`
    (and the SDK then as `APITimeoutError`), while a real timeout has a `TimeoutError`
    (aiohttp's, asyncio's, or the socket's) in its chain."""
    link: BaseException | None = exc
    while link is not None:
        if isinstance(link, TimeoutError):
            return True
        link = link.__cause__
    return exc.__cause__ is None and isinstance(
        exc, httpx2.TimeoutException | openai.APITimeoutError
    )


def _body(response: Any) -> bytes:
    try:
        return bytes(response.content)
    except Exception:  # noqa: BLE001 - an unread streamed body has no content
        return b""


def _text(response: Any) -> str:
    try:
        return str(response.text)
    except Exception:  # noqa: BLE001 - an unread streamed body has no text
        return ""


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
