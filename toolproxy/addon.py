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
from collections.abc import Sequence
from pathlib import Path

from mitmproxy import ctx, exceptions, http

from toolproxy.recorder import Recorder
from toolproxy.tap import BodyTap, RawExchange
from toolproxy.worker import RecorderConfig, RecorderProcess

log = logging.getLogger("toolproxy")

DEFAULT_CAPTURE = "captures/default"
META = "toolproxy"


class _FlowState:
    __slots__ = ("request_tap", "response_tap", "submitted")

    def __init__(self, limit: int) -> None:
        self.request_tap = BodyTap(limit)
        self.response_tap = BodyTap(limit)
        self.submitted = False


class ToolproxyCapture:
    """Records every HTTP flow into a toolproxy capture without altering it."""

    def __init__(self) -> None:
        self.recorder: Recorder | RecorderProcess | None = None
        self._config: tuple[object, ...] | None = None
        self.hook_errors = 0
        self._loopback = False

    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        loader.add_option(
            "toolproxy_capture", str, DEFAULT_CAPTURE, "Capture directory to record into."
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
            64 * 1024 * 1024,
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

    def configure(self, updated: set[str]) -> None:
        opts = ctx.options
        if "listen_host" in updated and opts.listen_host == "" and "toolproxy_capture" in updated:
            # First configure after loading: listen on loopback unless told otherwise.
            self._loopback = True
            opts.listen_host = "127.0.0.1"
        if not any(name.startswith("toolproxy_") for name in updated):
            return
        try:
            interval = float(opts.toolproxy_flush_interval)
        except ValueError:
            raise exceptions.OptionsError(
                f"toolproxy_flush_interval must be a number of seconds, "
                f"got {opts.toolproxy_flush_interval!r}"
            ) from None
        if not 0.01 <= interval <= 10:
            raise exceptions.OptionsError(
                f"toolproxy_flush_interval must be between 0.01 and 10 seconds, got {interval}"
            )
        if opts.toolproxy_max_body < 0:
            raise exceptions.OptionsError("toolproxy_max_body must be >= 0 bytes")
        if not opts.toolproxy_session_header.strip():
            raise exceptions.OptionsError("toolproxy_session_header must not be empty")
        capture = Path(opts.toolproxy_capture).expanduser()
        if capture.exists() and not capture.is_dir():
            raise exceptions.OptionsError(
                f"toolproxy_capture {capture} exists and is not a directory"
            )
        for path in opts.toolproxy_redact_json:
            if not path.strip() or ".." in path or path.startswith(".") or path.endswith("."):
                raise exceptions.OptionsError(f"toolproxy_redact_json: bad dotted path {path!r}")
        config = (
            str(capture.resolve()),
            interval,
            opts.toolproxy_session_header,
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

    async def running(self) -> None:
        """Rebind servers that mitmproxy started on all interfaces before this addon loaded.

        mitmdump starts listening concurrently with loading `-s` scripts, so the loopback
        default set in configure() can come too late for the first bind: restart those.
        """
        if not self._loopback:
            return
        self._loopback = False
        proxyserver = ctx.master.addons.get("proxyserver")
        if proxyserver is None:
            return
        while proxyserver.servers.is_updating:
            await asyncio.sleep(0.01)
        for server in list(proxyserver.servers):
            if server.is_running and server.mode.custom_listen_host is None:
                if any(addr[0] in ("", "0.0.0.0", "::") for addr in server.listen_addrs):
                    await server.stop()
                    await server.start()

    def _start_recorder(self, capture: Path) -> None:
        from toolproxy.store import init_capture  # the catalog; proxies then write segments only

        opts = ctx.options
        try:
            capture.mkdir(parents=True, exist_ok=True)
            init_capture(capture)
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
            redact_headers=tuple(opts.toolproxy_redact_headers),
            redact_query=tuple(opts.toolproxy_redact_query),
            redact_json=tuple(opts.toolproxy_redact_json),
            run_info={
                "mode": ",".join(opts.mode),
                "listen": f"{opts.listen_host or '*'}:{opts.listen_port or 8080}",
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

    def _submit(self, flow: http.HTTPFlow, complete: bool) -> None:
        try:
            state = flow.metadata.get(META)
            if self.recorder is None or state is None or state.submitted:
                return
            state.submitted = True
            self.recorder.submit(raw_exchange(flow, state, complete))
        except Exception as exc:  # noqa: BLE001
            self._fail("submit", exc)

    def done(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
            self.recorder = None


def raw_exchange(flow: http.HTTPFlow, state: _FlowState, complete: bool) -> RawExchange:
    """Copy what mitmproxy observed into a plain record (no parsing here: hot path)."""
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
        error=flow.error.msg if flow.error else None,
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
        raw.ended_at = resp.timestamp_end or stap.ended_at or time.time()
        raw.response_complete = complete and (stap.ended or not stap.size)
    else:
        raw.ended_at = time.time()
        raw.response_complete = False
    return raw
