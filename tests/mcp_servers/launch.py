"""Start a test server as a subprocess and wait until its port accepts connections."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from toolproxy.capture.proxy import free_port

__all__ = ["free_port", "remote_servers", "serve"]


@contextmanager
def serve(argv: Sequence[str], port: int, timeout: float = 30.0) -> Iterator[str]:
    """Run ``argv`` (which listens on ``port``); yields ``http://127.0.0.1:PORT``."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{argv} exited with {proc.returncode} before listening")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def remote_servers(python: str) -> Iterator[dict[str, str]]:
    """The weather server over streamable HTTP and SSE, and an HTTP server that answers 401:
    their MCP URLs under "http", "sse" and "locked"."""
    here = Path(__file__).parent
    weather = str(here / "weather.py")
    locked = str(here.parent / "fixtures" / "mcp" / "unauthorized_server.py")
    h, s, u = free_port(), free_port(), free_port()
    with (
        serve([python, weather, "--http", str(h)], h) as http_url,
        serve([python, weather, "--sse", str(s)], s) as sse_url,
        serve([python, locked, str(u)], u) as locked_url,
    ):
        yield {"http": http_url + "/mcp", "sse": sse_url + "/sse", "locked": locked_url + "/mcp"}
