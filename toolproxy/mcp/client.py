"""Talk to MCP servers with the official SDK: the only module that imports ``mcp``.

``fetch_all`` starts or connects to each server (stdio, streamable HTTP or SSE), initializes,
pages through ``tools/list`` and hands back what the server said, or a ``Failure`` that says
what went wrong in words a user can act on (both in ``mcp.outcomes``). Failures are values:
one bad server never stops the others. Each server has one deadline covering start,
initialize and listing.

``Session`` keeps one server open for many ``tools/call`` requests (replay's live tools),
usable from any task; ``call_tool`` is the one-shot form. A call's outcome is
``(content_text, is_error)`` or a ``Failure``.

Quiet by design: a stdio server's stderr goes to a temporary file (its last lines end up in
the failure message), and the SDK's own log records are held back while pulling.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import tempfile
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TextIO, cast

import anyio
import httpx
from mcp import ClientSession, McpError
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from toolproxy.mcp.config import ServerSpec, mask
from toolproxy.mcp.outcomes import Failure, Listing, http_failure, stderr_tail, with_stderr

# Grace after a successful listing for the server to shut down; it never turns success into
# failure (the result is already in hand).
SHUTDOWN_S = 5.0
MAX_PAGES = 1000
# What writing to or reading from a stdio server that has exited raises.
_PIPE_ERRORS = (
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    BrokenPipeError,
    ConnectionResetError,
    EOFError,
)


@dataclass
class _Stage:
    """How far a pull got, for the timeout and crash messages."""

    now: str = "starting the server"


class _PagingError(Exception):
    """tools/list paging that never ends: a repeated cursor, or too many pages."""


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


def describe_error(exc: BaseException, spec: ServerSpec, stage: str, timeout: float) -> Failure:
    """The failure for an exception the SDK (or the OS) raised while pulling ``spec``."""
    # The first real cause, not the cancellations it set off in sibling tasks.
    leaf = next((e for e in _leaves(exc) if isinstance(e, Exception)), exc)
    if isinstance(leaf, TimeoutError):
        return Failure("timeout", f"no answer within {timeout:g} s (while {stage})")
    if isinstance(leaf, FileNotFoundError) and spec.transport == "stdio":
        return Failure("not_found", f"command not found: {spec.command}")
    if isinstance(leaf, OSError) and spec.transport == "stdio" and stage == "starting the server":
        return Failure("cannot_start", f"cannot run {spec.command}: {leaf.strerror or leaf}")
    if isinstance(leaf, httpx.HTTPStatusError):
        return http_failure(leaf.response)
    if isinstance(leaf, httpx.ConnectError | httpx.ConnectTimeout):
        return Failure("connect", f"cannot connect to the server ({leaf or type(leaf).__name__})")
    if isinstance(leaf, _PagingError):
        return Failure("protocol", str(leaf))
    closed = isinstance(leaf, McpError) and "connection closed" in str(leaf).lower()
    if spec.transport == "stdio" and (closed or isinstance(leaf, _PIPE_ERRORS)):
        return Failure("crashed", f"the server exited while {stage}")
    if isinstance(leaf, McpError) and "session terminated" in str(leaf).lower():
        # The SDK's reading of a 404, which at initialize means a wrong URL.
        return Failure("http_error", f"HTTP 404 Not Found while {stage}: is the URL right?")
    if isinstance(leaf, McpError):
        return Failure("protocol", f"the server answered with an error while {stage}: {leaf}")
    return Failure("protocol", f"{type(leaf).__name__} while {stage}: {leaf}")


@asynccontextmanager
async def _stdio(spec: ServerSpec, errlog: TextIO) -> AsyncIterator[tuple[Any, Any]]:
    # Merged over our environment so PATH, HOME and friends reach the server, as editors do.
    params = StdioServerParameters(
        command=spec.command or "",
        args=list(spec.args),
        env={**os.environ, **spec.env},
        cwd=spec.cwd,
    )
    async with stdio_client(params, errlog=errlog) as (read, write):
        yield read, write


@asynccontextmanager
async def _http(spec: ServerSpec, timeout: float) -> AsyncIterator[tuple[Any, Any]]:
    client = httpx.AsyncClient(headers=dict(spec.headers), timeout=httpx.Timeout(timeout))
    async with client, streamable_http_client(spec.url or "", http_client=client) as streams:
        yield streams[0], streams[1]


def _connect(
    spec: ServerSpec, timeout: float, errlog: TextIO | None
) -> AbstractAsyncContextManager[tuple[Any, Any]]:
    if spec.transport == "stdio":
        assert errlog is not None
        return _stdio(spec, errlog)
    if spec.transport == "sse":
        return sse_client(
            spec.url or "", headers=dict(spec.headers), timeout=timeout, sse_read_timeout=timeout
        )
    return _http(spec, timeout)


async def _list(session: ClientSession, stage: _Stage) -> Listing:
    stage.now = "waiting for initialize"
    init = await session.initialize()
    tools: list[dict[str, Any]] = []
    if init.capabilities.tools is not None:
        cursor: str | None = None
        seen: set[str] = set()
        for page in range(1, MAX_PAGES + 1):
            stage.now = f"waiting for tools/list (page {page})"
            result = await session.list_tools(cursor)
            tools += [
                t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools
            ]
            cursor = result.nextCursor
            if not cursor:
                break
            if cursor in seen:
                raise _PagingError(
                    f"tools/list repeated the cursor {cursor[:40]!r}; stopped paging"
                )
            seen.add(cursor)
        else:
            raise _PagingError(f"tools/list still had more after {MAX_PAGES} pages; stopped paging")
    info = init.serverInfo
    return Listing(info.name, info.version, str(init.protocolVersion), tools)


async def fetch_tools(spec: ServerSpec, timeout: float) -> Listing | Failure:
    """Initialize ``spec``'s server and list all its tools, within ``timeout`` seconds."""
    if spec.error:
        return Failure("config", mask(spec.error, spec.secrets))
    stage = _Stage() if spec.transport == "stdio" else _Stage("connecting")
    errlog = None
    if spec.transport == "stdio":
        errlog = cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
    listing: Listing | None = None
    error: Exception | None = None
    scope = anyio.CancelScope(deadline=anyio.current_time() + timeout)
    try:
        with scope:
            async with _connect(spec, timeout, errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    listing = await _list(session, stage)
                    stage.now = "shutting down"
                    scope.deadline = anyio.current_time() + SHUTDOWN_S
    except Exception as exc:  # noqa: BLE001 - every failure becomes a value for the report
        error = exc
    finally:
        tail = stderr_tail(errlog, spec.secrets)
        if errlog is not None:
            errlog.close()
    if listing is not None:
        return listing  # whatever went wrong while shutting down does not matter
    return _final_failure(error, scope.cancel_called, spec, stage.now, timeout, tail)


def _final_failure(
    error: Exception | None,
    timed_out: bool,
    spec: ServerSpec,
    stage: str,
    timeout: float,
    tail: str,
) -> Failure:
    """The failure to report, with the server's stderr tail and every secret masked."""
    if timed_out or error is None:
        failure = describe_error(TimeoutError(), spec, stage, timeout)
    else:
        failure = describe_error(error, spec, stage, timeout)
    return with_stderr(failure, tail, spec.secrets)


@contextmanager
def quiet_sdk_logs() -> Iterator[list[logging.LogRecord]]:
    """Hold back the SDK's and httpx's log records (they would print tracebacks to stderr)."""
    held: list[logging.LogRecord] = []

    class Hold(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            held.append(record)

    handler = Hold()
    loggers = [logging.getLogger(n) for n in ("mcp", "httpx", "httpx_sse")]
    saved = [(lg.propagate, lg.handlers[:]) for lg in loggers]
    for lg in loggers:
        lg.handlers = [handler]
        lg.propagate = False
    try:
        yield held
    finally:
        for lg, (propagate, handlers) in zip(loggers, saved, strict=True):
            lg.handlers = handlers
            lg.propagate = propagate


async def fetch_many(
    specs: Sequence[ServerSpec], timeout: float, concurrency: int = 8
) -> list[Listing | Failure]:
    """``fetch_tools`` for every spec, several at once, results in the specs' order."""
    results: list[Listing | Failure | None] = [None] * len(specs)
    limit = anyio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with limit:
            results[i] = await fetch_tools(specs[i], timeout)

    async with anyio.create_task_group() as tg:
        for i in range(len(specs)):
            tg.start_soon(one, i)
    return [r for r in results if r is not None]


def fetch_all(specs: Sequence[ServerSpec], timeout: float) -> list[Listing | Failure]:
    """``fetch_many`` from synchronous code, with the SDK's logging held back."""
    with quiet_sdk_logs():
        return anyio.run(fetch_many, specs, timeout)


CallOutcome = tuple[str, bool] | Failure


def result_text(result: CallToolResult) -> tuple[str, bool]:
    """A tool result as (text, is_error): text blocks joined by newlines; structured content
    as JSON when there is no text; other blocks named, e.g. ``[image]``."""
    parts = []
    for block in result.content:
        text = getattr(block, "text", None)
        parts.append(text if isinstance(text, str) else f"[{block.type}]")
    if not parts and result.structuredContent is not None:
        parts.append(json.dumps(result.structuredContent, ensure_ascii=False))
    return "\n".join(parts), bool(result.isError)


class Session:
    """One MCP server kept open for many calls.

    The SDK's transports live in anyio task groups, which must be entered and left by one
    task; a background task owns them here, so ``call`` works from any task of the loop.
    ``start`` connects, initializes and lists tools within ``timeout``; ``close`` ends it.
    Hold the SDK's logs back around the whole run (``quiet_sdk_logs``), not per session.
    """

    def __init__(self, spec: ServerSpec, timeout: float) -> None:
        self.spec = spec
        self.timeout = timeout
        self.listing: Listing | None = None
        self.failure: Failure | None = None  # why it could not start, or why it stopped
        self._session: ClientSession | None = None
        self._ready: asyncio.Future[None] | None = None
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> Failure | None:
        """Connect (once); the failure when the server cannot be used."""
        if self._task is None:
            self._ready = asyncio.get_running_loop().create_future()
            self._task = asyncio.create_task(self._own(), name=f"mcp-{self.spec.name}")
        assert self._ready is not None
        await asyncio.shield(self._ready)
        return self.failure

    async def call(self, name: str, arguments: dict[str, Any]) -> CallOutcome:
        """Run tool ``name`` on the server: (text, is_error), or the failure."""
        failure = await self.start()
        if failure is not None or self._session is None:
            return failure or Failure("crashed", "the server is not running")
        try:
            result = await self._session.call_tool(
                name, arguments, read_timeout_seconds=timedelta(seconds=self.timeout)
            )
        except Exception as exc:  # noqa: BLE001 - a failed call is a value
            stage = f"calling {name}"
            return Failure(*_masked(describe_error(exc, self.spec, stage, self.timeout), self.spec))
        return result_text(result)

    async def close(self) -> None:
        """Shut the server down (within ``SHUTDOWN_S``)."""
        self._closing.set()
        if self._task is not None:
            await self._task

    async def _own(self) -> None:
        if self.spec.error:
            self._fail(Failure("config", mask(self.spec.error, self.spec.secrets)))
            return
        stage = _Stage() if self.spec.transport == "stdio" else _Stage("connecting")
        errlog = None
        if self.spec.transport == "stdio":
            errlog = cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
        error: Exception | None = None
        scope = anyio.CancelScope(deadline=anyio.current_time() + self.timeout)
        try:
            with scope:
                async with _connect(self.spec, self.timeout, errlog) as (read, write):
                    async with ClientSession(read, write) as session:
                        self.listing = await _list(session, stage)
                        self._session = session
                        scope.deadline = math.inf
                        self._fail(None)
                        await self._closing.wait()
                        self._session = None
                        scope.deadline = anyio.current_time() + SHUTDOWN_S
        except Exception as exc:  # noqa: BLE001 - every failure becomes a value
            error = exc
        finally:
            tail = stderr_tail(errlog, self.spec.secrets)
            if errlog is not None:
                errlog.close()
            self._session = None
        if self._ready is not None and not self._ready.done():
            self._fail(
                _final_failure(error, scope.cancel_called, self.spec, stage.now, self.timeout, tail)
            )
        elif not self._closing.is_set():
            self.failure = Failure("crashed", f"{self.spec.name} stopped during the run")

    def _fail(self, failure: Failure | None) -> None:
        self.failure = failure
        if self._ready is not None and not self._ready.done():
            self._ready.set_result(None)


def _masked(failure: Failure, spec: ServerSpec) -> tuple[str, str]:
    return failure.kind, mask(failure.message, spec.secrets)


async def call_tool(
    spec: ServerSpec, name: str, arguments: dict[str, Any], timeout: float
) -> CallOutcome:
    """Start ``spec``'s server, run one tool call, shut it down: (text, is_error) or why not."""
    session = Session(spec, timeout)
    try:
        return await session.call(name, arguments)
    finally:
        await session.close()
