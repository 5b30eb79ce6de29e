"""The scripted upstream: a real HTTP/1.1 server that plays a script in a background thread.

It impersonates OpenAI Chat Completions, OpenAI Responses and Anthropic Messages closely
enough for the real SDKs, and breaks on cue (status codes, garbage, cut streams, resets,
hangs). It is the only stand-in for a model endpoint in the project's tests.
"""

from __future__ import annotations

import socket
import ssl
import threading
from pathlib import Path
from socketserver import ThreadingTCPServer
from types import TracebackType

from toolproxy.errors import UserError
from toolproxy.scripted.handler import Handler, RecordedRequest
from toolproxy.scripted.script import Playback, Script


class _Server(ThreadingTCPServer):
    daemon_threads = True
    request_queue_size = 512
    allow_reuse_address = True
    tls: ssl.SSLContext | None = None

    def get_request(self) -> tuple[socket.socket, object]:
        sock, addr = super().get_request()
        if self.tls is not None:
            # Handshake in the handler thread (first read), not in the accept loop.
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr


class ScriptedUpstream:
    """A scripted model endpoint serving in a background thread until `stop()`.

    Serving starts in the constructor, so `url` is usable at once; use it as a context
    manager or call `stop()`.
    """

    def __init__(
        self,
        script: Script | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        deterministic: bool | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.playback = Playback(script or Script())
        self._deterministic = deterministic
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        handler = type("BoundHandler", (Handler,), {"upstream": self})
        self._server = _Server((host, port), handler)
        self._server.tls = tls
        # A short poll interval keeps stop() quick; tests start and stop many of these.
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            args=(0.05,),
            name="scripted-upstream",
            daemon=True,
        )
        self._thread.start()

    @property
    def url(self) -> str:
        """Base URL such as `http://127.0.0.1:PORT` (append /v1 for OpenAI clients)."""
        host, port = self._server.server_address[:2]
        scheme = "https" if self._server.tls else "http"
        return f"{scheme}://{host!s}:{port}"

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self._server.server_address[1])

    @property
    def script(self) -> Script:
        """The script being played."""
        return self.playback.script

    @property
    def deterministic(self) -> bool:
        """Whether ids and timestamps are fixed (constructor override, else the script's)."""
        if self._deterministic is not None:
            return self._deterministic
        return self.playback.script.deterministic

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of the requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def set_script(self, script: Script) -> None:
        """Play `script` from its start."""
        self.playback.replace(script)

    def reset(self) -> None:
        """Replay from the start: positions and id counters restart; requests are kept."""
        self.playback.reset()

    def clear_requests(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self._requests.clear()

    def stop(self) -> None:
        """Stop serving, wake sleeping replies and close open connections."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by its handler
        self._thread.join()

    def __enter__(self) -> ScriptedUpstream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)


DEFAULT_SCRIPT = Path(__file__).with_name("default.yaml")  # tool calls, as documented


def serve_forever(
    script_path: str | None, host: str, port: int, script: Script | None = None
) -> None:
    """Serve `script`, else the script at `script_path` (none: the default script) until
    interrupted."""
    script = script or Script.load(script_path or DEFAULT_SCRIPT)
    try:
        upstream = ScriptedUpstream(script, host=host, port=port)
    except OSError as exc:  # the port is taken, or the host is not ours
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    print(f"scripted upstream listening on {upstream.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        upstream.stop()
