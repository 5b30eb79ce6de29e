"""The recorder in its own process, so parsing never competes with mitmproxy for the GIL.

mitmproxy runs every flow on one event loop. Parsing, redaction and writing take about
0.5 ms per exchange; in a thread of the proxy process that time is taken from the loop
under load. Here the proxy's hook only appends the raw exchange to an in-memory queue; a
feeder thread pickles it (~7 µs) into a pipe to a worker process (`python -m
toolproxy.capture.worker`) that runs the `Recorder`.

Why a plain pipe: bytes written into it stay readable by the worker after the proxy dies,
so a `kill -9` of mitmdump loses nothing that reached the pipe (enlarged to 1 MiB). The
worker sees end-of-file, flushes and exits. If the worker dies, what it held is lost (at
most a flush window, plus what sat in the pipe) and the feeder falls back to an in-process
recorder: logged once, and visible in the capture (a `fallback` row in `proxy_runs` with
`recorder = 'in-process'`, `worker_lost = 1`; `toolproxy status` warns). Recording goes on.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from toolproxy.capture.recorder import Recorder
from toolproxy.capture.redact import Redactor
from toolproxy.capture.session import RETRY_WINDOW_S, SessionTracker
from toolproxy.capture.tap import RawExchange

PIPE_SIZE = 1 << 20
# The worker yields the CPU to the proxy when both want it: recording may lag a little
# behind under saturation (the pipe and the feeder queue absorb it), forwarding must not.
WORKER_NICE = 5
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
_CLOSE = object()


@dataclass(frozen=True)
class RecorderConfig:
    """Everything a recorder needs, picklable for the worker process."""

    capture_dir: Path
    proxy_id: str
    flush_interval: float = 0.5
    session_header: str = "x-toolproxy-session"
    retry_window: float = RETRY_WINDOW_S
    redact_headers: tuple[str, ...] = ()
    redact_query: tuple[str, ...] = ()
    redact_json: tuple[str, ...] = ()
    run_info: dict[str, Any] = field(default_factory=dict)
    auto_compact: bool = True  # the worker compacts its segments in the background

    def build(self, log: Callable[[str], None]) -> Recorder:
        """A Recorder for this configuration."""
        return Recorder(
            self.capture_dir,
            self.proxy_id,
            Redactor.build(self.redact_headers, self.redact_query, self.redact_json),
            SessionTracker(self.session_header, retry_window=self.retry_window),
            flush_interval=self.flush_interval,
            run_info=self.run_info,
            log=log,
        )


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def write_frame(out: IO[bytes], item: object) -> None:
    """One length-prefixed pickle."""
    data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(len(data).to_bytes(8, "big") + data)
    out.flush()


def read_frame(inp: IO[bytes]) -> object | None:
    """The next frame, or None at end of input (also for a frame cut by a dying writer)."""
    head = inp.read(8)
    if len(head) < 8:
        return None
    size = int.from_bytes(head, "big")
    data = inp.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)  # noqa: S301 - our own parent process, over a private pipe


def run_worker(inp: IO[bytes]) -> None:
    """Worker main: a config frame, then exchanges and error notes until end of input."""
    try:
        os.nice(WORKER_NICE)
    except OSError:
        pass
    config = read_frame(inp)
    if not isinstance(config, RecorderConfig):
        raise SystemExit("toolproxy.capture.worker: expected a RecorderConfig frame first")
    recorder = config.build(_stderr)
    recorder.start()
    compactor = None
    if config.auto_compact:
        from toolproxy.store.autocompact import AutoCompactor

        compactor = AutoCompactor(config.capture_dir, config.proxy_id, log=_stderr)
        compactor.start()
    try:
        while (item := read_frame(inp)) is not None:
            if isinstance(item, tuple):
                recorder.count_error(*item)
            elif isinstance(item, RawExchange):
                recorder.submit(item)
    finally:
        if compactor is not None:
            compactor.stop()
        recorder.close()


class RecorderProcess:
    """Proxy-side handle with the Recorder's interface, backed by a worker process."""

    def __init__(self, config: RecorderConfig, log: Callable[[str], None] = _stderr) -> None:
        self.config = config
        self._log = log
        self._outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._proc: subprocess.Popen[bytes] | None = None
        self._feeder = threading.Thread(target=self._feed, name="toolproxy-feeder", daemon=True)
        self._fallback: Recorder | None = None
        self.worker_lost = 0  # 1 once the worker died and this process took over

    def start(self) -> None:
        env = os.environ.copy()
        # The worker must import this very package, wherever mitmproxy found it.
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "toolproxy.capture.worker"], stdin=subprocess.PIPE, env=env
        )
        assert self._proc.stdin is not None
        try:
            fcntl.fcntl(self._proc.stdin.fileno(), F_SETPIPE_SZ, PIPE_SIZE)
        except OSError:  # not Linux, or over the system limit: the default size still works
            pass
        write_frame(self._proc.stdin, self.config)
        self._feeder.start()

    def submit(self, raw: RawExchange) -> None:
        """Queue one exchange for the worker; never blocks the proxy."""
        self._outbox.put(raw)

    def count_error(self, kind: str, message: str) -> None:
        """Count a proxy-side failure in the capture's stats (logged once per kind)."""
        self._outbox.put((kind, message))

    def _feed(self) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        while (item := self._outbox.get()) is not _CLOSE:
            if self._fallback is None:
                try:
                    write_frame(self._proc.stdin, item)
                    continue
                except (OSError, ValueError) as exc:
                    self._log(
                        f"toolproxy: recorder process is gone ({exc!r}); recording in-process "
                        f"from now on; what it held (at most {self.config.flush_interval} s of "
                        "exchanges) is lost"
                    )
                    self.worker_lost += 1
                    info = {**self.config.run_info, "recorder": "in-process", "worker_lost": 1}
                    self._fallback = replace(self.config, run_info=info).build(self._log)
                    self._fallback.start("fallback")
            if isinstance(item, tuple):
                self._fallback.count_error(*item)
            else:
                self._fallback.submit(item)

    def close(self, timeout: float = 30.0) -> None:
        """Let the worker drain and flush everything queued, then stop it."""
        if self._proc is None:
            return
        self._outbox.put(_CLOSE)
        self._feeder.join(timeout)
        if self._fallback is not None:
            self._fallback.close(timeout)
        try:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._log("toolproxy: recorder process did not stop in time; terminated")
            self._proc.kill()
            self._proc.wait()


if __name__ == "__main__":
    # Run the imported module's function, so frames unpickle to the same classes it checks.
    from toolproxy.capture.worker import run_worker as main

    main(sys.stdin.buffer)
