"""The mitmproxy addon: taps every flow and hands it to the recorder. Nothing else.

Load it with `mitmdump -s addons/toolproxy_capture.py` (or mitmweb / mitmproxy), or via
`toolproxy record`. Every hook is fail-open: an exception inside the addon is counted and
logged once, and the flow goes on exactly as it would without the addon.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from mitmproxy import connection, ctx, exceptions, http
from mitmproxy.proxy import server_hooks

from toolproxy.capture import lifeline, limits
from toolproxy.capture.loopback import rebind_wide
from toolproxy.capture.recorder import Recorder
from toolproxy.capture.session import RETRY_WINDOW_S
from toolproxy.capture.tap import BodyTap, RawExchange
from toolproxy.capture.worker import RecorderConfig, RecorderProcess
from toolproxy.records import MAX_BODY

log = logging.getLogger("toolproxy")

META = "toolproxy"
MAX_PENDING_FAILURES = 10_000
# The error of an exchange still open when mitmproxy stopped (classified connection_reset).
STOPPED = "connection closed: the proxy stopped before the exchange finished"
BEFORE_REQUEST = (
    " (before any request was read: mitmproxy connects upstream as soon as a client "
    "connects; set connection_strategy=lazy to have the request recorded too)"
)


class _FlowState:
    __slots__ = ("request_tap", "response_tap", "submitted")

    def __init__(self, limit: int) -> None:
        self.request_tap = BodyTap(limit)
        self.response_tap = BodyTap(limit)
        self.submitted = False


class ToolproxyAddon:
    """Records every HTTP flow into a toolproxy capture without altering it."""

    def __init__(self) -> None:
        self.recorder: Recorder | RecorderProcess | None = None
        self._config: tuple[object, ...] | None = None
        self.hook_errors = 0
        self._loopback = False
        self._rebind: asyncio.Task[int] | None = None  # held: the loop keeps tasks weakly
        # client id -> (client, server, when) of upstream connections that failed
        self._connect_failures: dict[str, tuple[connection.Client, connection.Server, float]] = {}
        self._inflight: dict[str, http.HTTPFlow] = {}  # flow id -> flow not yet submitted

    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        lifeline.die_with_parent()  # started by `toolproxy record`: never outlive it
        loader.add_option(
            "toolproxy_capture",
            str,
            limits.default_capture(),
            f"Capture directory to record into (default: ${limits.CAPTURE_ENV}, else "
            f"{limits.DEFAULT_CAPTURE}).",
        )
        loader.add_option(
            "toolproxy_flush_interval",
            str,  # mitmproxy options have no float type; parsed in configure()
            "0.5",
            "Seconds between flushes to disk; a kill -9 loses at most this window (0.01-10).",
        )
        loader.add_option(
            "toolproxy_session_header",
            str,
            "x-toolproxy-session",
            "Request header whose value names the session explicitly.",
        )
        loader.add_option(
            "toolproxy_retry_window",
            str,  # parsed in configure(), like the flush interval
            str(RETRY_WINDOW_S),
            "Seconds after an answered request within which the same request again, nobody "
            "having continued the first, counts as its retry (0: never; failed requests "
            "are retried within 10 minutes regardless).",
        )
        loader.add_option(
            "toolproxy_redact_headers",
            Sequence[str],
            [],
            "Extra header names whose values are never written (defaults always apply).",
        )
        loader.add_option(
            "toolproxy_redact_query",
            Sequence[str],
            [],
            "Extra query parameter names whose values are never written.",
        )
        loader.add_option(
            "toolproxy_redact_json",
            Sequence[str],
            [],
            "Dotted JSON paths removed from bodies before writing (`*` matches any key).",
        )
        loader.add_option(
            "toolproxy_max_body",
            int,
            MAX_BODY,
            "Bytes of each body kept in the capture (the client always gets all of it).",
        )
        loader.add_option(
            "toolproxy_proxy_id",
            str,
            "",
            "Id of this proxy in the capture (default: host-pid-rand).",
        )
        loader.add_option(
            "toolproxy_worker",
            bool,
            True,
            "Parse and write in a separate process (off mitmproxy's GIL); false: a thread.",
        )
        loader.add_option(
            "toolproxy_auto_compact",
            bool,
            True,
            "The worker compacts its segment files into Parquet while recording.",
        )

    def configure(self, updated: set[str]) -> None:
        opts = ctx.options
        if "listen_host" in updated and opts.listen_host == "" and "toolproxy_capture" in updated:
            # First configure after loading: listen on loopback unless told otherwise.
            self._loopback = True
            opts.listen_host = "127.0.0.1"
        if not any(name.startswith("toolproxy_") for name in updated):
            return
        interval = _checked(
            "toolproxy_flush_interval", limits.flush_seconds, opts.toolproxy_flush_interval
        )
        retry_window = _checked(
            "toolproxy_retry_window", limits.retry_seconds, opts.toolproxy_retry_window
        )
        if opts.toolproxy_max_body < 0:
            raise exceptions.OptionsError("toolproxy_max_body must be >= 0 bytes")
        _checked("toolproxy_session_header", limits.name, opts.toolproxy_session_header)
        for header in opts.toolproxy_redact_headers:
            _checked("toolproxy_redact_headers", limits.name, header)
        for param in opts.toolproxy_redact_query:
            _checked("toolproxy_redact_query", limits.name, param)
        for path in opts.toolproxy_redact_json:
            _checked("toolproxy_redact_json", limits.dotted_path, path)
        capture = Path(opts.toolproxy_capture).expanduser()
        if capture.exists() and not capture.is_dir():
            raise exceptions.OptionsError(
                f"toolproxy_capture {capture} exists and is not a directory"
            )
        config = (
            str(capture.resolve()),
            interval,
            opts.toolproxy_session_header,
            retry_window,
            tuple(opts.toolproxy_redact_headers),
            tuple(opts.toolproxy_redact_query),
            tuple(opts.toolproxy_redact_json),
            opts.toolproxy_proxy_id,
            opts.toolproxy_worker,
        )
        if config == self._config:
            return
        self._config = config
        self._start_recorder(capture)

    def running(self) -> None:
        """Rebind servers that mitmproxy started on all interfaces before this addon loaded.

        Called from an event loop, also synchronously when the script loads into a running
        mitmproxy (or reloads), so the rebind runs as a task.
        """
        if not self._loopback:
            return
        self._loopback = False
        proxyserver = ctx.master.addons.get("proxyserver")
        if proxyserver is not None:
            self._rebind = asyncio.get_running_loop().create_task(
                rebind_wide(proxyserver.servers, log.warning)
            )

    def _start_recorder(self, capture: Path) -> None:
        from toolproxy.store import init_capture  # the catalog; proxies then write segments only

        opts = ctx.options
        try:
            capture.mkdir(parents=True, exist_ok=True)
            init_capture(capture, live=opts.toolproxy_auto_compact)
        except Exception as exc:  # noqa: BLE001 - readers can create the catalog later
            log.warning(f"toolproxy: could not initialise catalog in {capture}: {exc}")
        if self.recorder is not None:
            self.recorder.close()
        proxy_id = opts.toolproxy_proxy_id or (
            f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        )
        config = RecorderConfig(
            capture_dir=capture,
            proxy_id=proxy_id,
            flush_interval=float(opts.toolproxy_flush_interval),
            session_header=opts.toolproxy_session_header,
            retry_window=float(opts.toolproxy_retry_window),
            redact_headers=tuple(opts.toolproxy_redact_headers),
            redact_query=tuple(opts.toolproxy_redact_query),
            redact_json=tuple(opts.toolproxy_redact_json),
            auto_compact=opts.toolproxy_auto_compact,
            run_info={
                "mode": ",".join(opts.mode),
                "listen": f"{opts.listen_host or '*'}:{opts.listen_port or 8080}",
                "recorder": "worker" if opts.toolproxy_worker else "in-process",
                "worker_lost": 0,
            },
        )
        if opts.toolproxy_worker:
            self.recorder = RecorderProcess(config, log=log.warning)
        else:
            self.recorder = config.build(log.warning)
        self.recorder.start()
        log.info(f"toolproxy: recording into {capture} as {proxy_id}")

    def _fail(self, where: str, exc: BaseException) -> None:
        self.hook_errors += 1
        if self.recorder is not None:
            self.recorder.count_error(f"hook:{where}", f"addon hook {where} failed: {exc!r}")

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        try:
            state = _FlowState(ctx.options.toolproxy_max_body)
            flow.metadata[META] = state
            self._inflight[flow.id] = flow
            if len(self._inflight) > MAX_PENDING_FAILURES:  # a flow no hook ever ended
                self._inflight.pop(next(iter(self._inflight)))
            if not flow.request.stream:
                flow.request.stream = state.request_tap
        except Exception as exc:  # noqa: BLE001
            self._fail("requestheaders", exc)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        try:
            state = flow.metadata.get(META)
            if state is not None and flow.response is not None and not flow.response.stream:
                flow.response.stream = state.response_tap
        except Exception as exc:  # noqa: BLE001
            self._fail("responseheaders", exc)

    def response(self, flow: http.HTTPFlow) -> None:
        self._submit(flow, complete=True)

    def error(self, flow: http.HTTPFlow) -> None:
        self._submit(flow, complete=False)

    def http_connect_error(self, flow: http.HTTPFlow) -> None:
        """A CONNECT (explicit proxy) that could not reach its server: mitmproxy answers 502
        itself; recorded as the attempt it was, with mitmproxy's reason."""
        reason = None
        try:
            if flow.metadata.get(META) is None:
                flow.metadata[META] = _FlowState(0)
            if flow.error is None and flow.response is not None:
                reason = flow.response.get_text(strict=False) or "CONNECT failed"
        except Exception as exc:  # noqa: BLE001
            self._fail("http_connect_error", exc)
        self._submit(flow, complete=False, error=reason)

    def server_connect_error(self, data: server_hooks.ServerConnectionHookData) -> None:
        """Remember a failed upstream connection until the client goes: if no flow of that
        client was recorded by then (reverse mode connects when the client connects, before
        any request is read), the attempt is recorded on its own."""
        try:
            if self.recorder is not None:
                self._connect_failures[data.client.id] = (data.client, data.server, time.time())
                while len(self._connect_failures) > MAX_PENDING_FAILURES:
                    self._connect_failures.pop(next(iter(self._connect_failures)))
        except Exception as exc:  # noqa: BLE001
            self._fail("server_connect_error", exc)

    def client_disconnected(self, client: connection.Client) -> None:
        try:
            failure = self._connect_failures.pop(client.id, None)
            if failure is not None and self.recorder is not None:
                self.recorder.submit(connect_attempt(*failure))
        except Exception as exc:  # noqa: BLE001
            self._fail("client_disconnected", exc)

    def _submit(self, flow: http.HTTPFlow, complete: bool, error: str | None = None) -> None:
        try:
            state = flow.metadata.get(META)
            self._connect_failures.pop(flow.client_conn.id, None)  # this flow records it
            self._inflight.pop(flow.id, None)
            if self.recorder is None or state is None or state.submitted:
                return
            state.submitted = True
            self.recorder.submit(raw_exchange(flow, state, complete, error))
        except Exception as exc:  # noqa: BLE001
            self._fail("submit", exc)

    def done(self) -> None:
        # Flows still open when mitmproxy stops (SIGTERM, Ctrl-C) never reach their last
        # hook: record each as far as it got, so an answer the client saw is never lost.
        for flow in list(self._inflight.values()):
            state = flow.metadata.get(META)
            if state is not None and state.response_tap.ended:
                self._submit(flow, complete=True)
            else:
                self._submit(flow, complete=False, error=STOPPED)
        if self.recorder is not None:
            self.recorder.close()
            self.recorder = None


def _checked[V, T](option: str, check: Callable[[V], T], value: V) -> T:
    """`check(value)`; its ValueError as mitmproxy's OptionsError, naming `option`."""
    try:
        return check(value)
    except ValueError as e:
        raise exceptions.OptionsError(f"{option}: {e}") from None


def _host(address: object) -> str | None:
    return str(address[0]) if isinstance(address, tuple) and address else None


def raw_exchange(
    flow: http.HTTPFlow, state: _FlowState, complete: bool, error: str | None = None
) -> RawExchange:
    """Copy what mitmproxy observed into a plain record (no parsing here: hot path).
    `error`: a failure mitmproxy answered for itself without setting `flow.error`."""
    req, resp = flow.request, flow.response
    rtap, stap = state.request_tap, state.response_tap
    request_body = rtap.body() if rtap.size else (req.raw_content or b"")
    raw = RawExchange(
        exchange_id=flow.id,
        started_at=req.timestamp_start,
        method=req.method,
        scheme=req.scheme,
        host=req.pretty_host,
        port=req.port,
        path=req.path,
        request_headers=list(req.headers.items(multi=True)),
        request_body=request_body,
        request_size=rtap.size or len(request_body),
        request_end=req.timestamp_end or rtap.ended_at,
        truncated=rtap.truncated or stap.truncated,
        error=flow.error.msg if flow.error else error,
        client_connection=flow.client_conn.id,
        client_peer=_host(flow.client_conn.peername),
    )
    if resp is not None:
        body = stap.body() if stap.size else (resp.raw_content or b"")
        raw.status_code = resp.status_code
        raw.response_headers = list(resp.headers.items(multi=True))
        raw.response_started = resp.timestamp_start
        raw.response_body = body
        raw.response_size = stap.size or len(body)
        raw.first_byte = stap.first_at
        raw.last_byte = stap.last_at
        raw.arrivals = stap.arrivals
        raw.ended_at = resp.timestamp_end or stap.ended_at or time.time()
        raw.response_complete = complete and (stap.ended or not stap.size)
    else:
        raw.ended_at = time.time()
        raw.response_complete = False
    return raw


def connect_attempt(
    client: connection.Client, server: connection.Server, failed_at: float
) -> RawExchange:
    """A client connection whose upstream could not be reached before any request was read:
    an exchange with no request (method and path empty) and mitmproxy's reason."""
    host, port = (server.address or ("", 0))[:2]
    return RawExchange(
        exchange_id=f"connect-{client.id}",
        started_at=client.timestamp_start or failed_at,
        method="",
        scheme="https" if server.tls else "http",
        host=str(server.sni or host),
        port=int(port),
        path="",
        request_headers=[],
        request_body=b"",
        ended_at=failed_at,
        response_complete=False,
        error=(server.error or "could not connect upstream") + BEFORE_REQUEST,
        client_connection=client.id,
        client_peer=_host(client.peername),
    )
