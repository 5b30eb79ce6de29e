"""Starting and stopping `mitmdump` with the toolproxy addon, as a child process.

The CLI runs mitmproxy as a subprocess rather than in-process so that the proxy is the
same program a user can run by hand (`mitmdump -s addons/toolproxy_capture.py`).
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from toolproxy.capture import lifeline
from toolproxy.errors import UserError

ADDON_SCRIPT = Path(__file__).resolve().parents[2] / "addons" / "toolproxy_capture.py"
SCRIPT_TEXT = "from toolproxy.capture.addon import ToolproxyAddon\n\naddons = [ToolproxyAddon()]\n"


def addon_script() -> Path:
    """Path of the addon script: the repo's addons/ copy, or a generated one when installed."""
    if ADDON_SCRIPT.exists():
        return ADDON_SCRIPT
    path = Path(tempfile.gettempdir()) / "toolproxy_capture_addon.py"
    if not path.exists() or path.read_text() != SCRIPT_TEXT:
        path.write_text(SCRIPT_TEXT)
    return path


def mitmdump_path() -> str:
    """mitmdump from this Python's environment (it must import toolproxy)."""
    local = Path(sys.executable).parent / "mitmdump"
    if local.exists():
        return str(local)
    found = shutil.which("mitmdump")
    if not found:
        raise FileNotFoundError("mitmdump not found: install toolproxy into this environment")
    return found


_HANDED_OUT: set[int] = set()


def check_port(host: str, port: int) -> None:
    """Raise UserError when mitmdump could not listen on host:port (taken, not ours)."""
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio binds
            s.bind((host, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            what, other = "is in use (another proxy running?)", "--port"
        else:  # a port it may not take, or an address that is not this host's
            other = "--port" if exc.errno == errno.EACCES else "--host"
            what = f"cannot be listened on: {exc.strerror}"
        raise UserError(f"{host}:{port} {what}; choose another with {other}") from None


def check_confdir(confdir: str | None) -> None:
    """Raise UserError when mitmdump could not keep its CA certificate in `confdir` (made
    here when missing, as mitmdump would make it)."""
    if confdir is None:
        return
    path = Path(confdir).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--confdir {path}: cannot be made: {exc.strerror}") from None
    if not (path / "mitmproxy-ca.pem").exists() and not os.access(path, os.W_OK):
        raise UserError(f"--confdir {path}: cannot write the CA certificate into it")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago, and not handed out before by this process
    (the kernel may return the same free port twice when callers bind it later)."""
    while True:
        with socket.socket() as s:
            s.bind((host, 0))
            port = int(s.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


@dataclass
class ProxySpec:
    """What to run: a reverse proxy to `upstream`, or a regular (explicit) proxy."""

    capture: Path
    upstream: str | None = None
    host: str = "127.0.0.1"
    port: int = 8080
    flush_interval: float = 0.5
    session_header: str | None = None
    retry_window: float | None = None
    redact_headers: list[str] = field(default_factory=list)
    redact_query: list[str] = field(default_factory=list)
    redact_json: list[str] = field(default_factory=list)
    proxy_id: str | None = None
    confdir: str | None = None
    with_addon: bool = True
    # Without the addon: stream bodies (stream_large_bodies=1) or keep mitmdump's buffering.
    bare_stream: bool = True
    extra: list[str] = field(default_factory=list)

    def argv(self) -> list[str]:
        """The mitmdump command line."""
        mode = f"reverse:{self.upstream}" if self.upstream else "regular"
        argv = [
            mitmdump_path(),
            "--mode",
            mode,
            "--listen-host",
            self.host,
            "--listen-port",
            str(self.port),
            # mitmdump's own flow log prints URLs, which can carry keys: keep it quiet.
            "--set",
            "flow_detail=0",
        ]
        if self.confdir:
            argv += ["--set", f"confdir={self.confdir}"]
        if not self.with_addon:
            streaming = ["--set", "stream_large_bodies=1"] if self.bare_stream else []
            return argv + streaming + self.extra
        argv += ["-s", str(addon_script())]
        settings = {
            "toolproxy_capture": str(self.capture),
            "toolproxy_flush_interval": str(self.flush_interval),
        }
        if self.session_header:
            settings["toolproxy_session_header"] = self.session_header
        if self.retry_window is not None:
            settings["toolproxy_retry_window"] = str(self.retry_window)
        if self.proxy_id:
            settings["toolproxy_proxy_id"] = self.proxy_id
        for key, values in (
            ("toolproxy_redact_headers", self.redact_headers),
            ("toolproxy_redact_query", self.redact_query),
            ("toolproxy_redact_json", self.redact_json),
        ):
            for value in values:
                argv += ["--set", f"{key}={value}"]
        for key, value in settings.items():
            argv += ["--set", f"{key}={value}"]
        return argv + self.extra


def wait_listening(
    host: str, port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0
) -> None:
    """Block until the proxy accepts connections; raise with its output if it died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"mitmdump exited with {proc.returncode}")
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"mitmdump did not listen on {host}:{port} within {timeout:.0f}s")


STARTUP_ERRORS = ("error in script", "Addon error", "Error logged during startup")


def child_pids(pid: int) -> list[int]:
    """Direct children of `pid` (Linux /proc; empty elsewhere)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


class RunningProxy:
    """A mitmdump child process; use as a context manager (tests, demo, benchmarks)."""

    def __init__(
        self, spec: ProxySpec, capture_output: bool = True, own_session: bool = False
    ) -> None:
        self.spec = spec
        self.capture_output = capture_output
        # In its own session the child does not get the terminal's Ctrl-C: the parent
        # forwards one SIGINT instead (a second one would make mitmdump skip its shutdown).
        self.own_session = own_session
        self.proc: subprocess.Popen[bytes] | None = None
        # A file, not a pipe: a chatty child must never block on a full pipe.
        self._out = tempfile.TemporaryFile() if capture_output else None

    @property
    def url(self) -> str:
        return f"http://{self.spec.host}:{self.spec.port}"

    def start(self) -> RunningProxy:
        self.proc = subprocess.Popen(
            self.spec.argv(),
            stdout=self._out,
            stderr=subprocess.STDOUT,
            # output readable as it happens; the child dies with this process (lifeline)
            env={**os.environ, "PYTHONUNBUFFERED": "1", **lifeline.parent_env()},
            start_new_session=self.own_session,
        )
        try:
            wait_listening(self.spec.host, self.spec.port, self.proc)
            self._wait_started()
        except (RuntimeError, TimeoutError) as exc:
            self.kill()
            raise RuntimeError(f"{exc}\n{self.output()}") from None
        return self

    def _wait_started(self, timeout: float = 30.0) -> None:
        """mitmdump binds its port before it has loaded the addon, and exits a moment after
        "listening at" when the addon or an option failed: wait for that verdict."""
        if self._out is None:
            return
        deadline = time.monotonic() + timeout
        assert self.proc is not None
        while "listening at" not in self.output() and self.proc.poll() is None:
            if time.monotonic() > deadline:
                raise TimeoutError("mitmdump did not report listening")
            time.sleep(0.02)
        if any(m in self.output() for m in STARTUP_ERRORS):
            self.proc.wait(10)
        if self.proc.poll() is not None:
            raise RuntimeError(f"mitmdump exited with {self.proc.returncode}")

    def output(self) -> str:
        """What the child printed so far."""
        if self._out is None:
            return ""
        self._out.seek(0)
        return self._out.read().decode(errors="replace")

    def stop(self, timeout: float = 20.0) -> str:
        """Graceful stop (SIGINT lets the addon flush); returns the process output."""
        if self.proc is None:
            return ""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.output()

    def kill(self, wait_children: float = 10.0) -> None:
        """SIGKILL mitmdump, as a crash would, then wait for its orphaned recorder to finish."""
        if self.proc is not None and self.proc.poll() is None:
            children = child_pids(self.proc.pid)
            self.proc.kill()
            self.proc.wait()
            deadline = time.monotonic() + wait_children
            while children and time.monotonic() < deadline:
                children = [pid for pid in children if Path(f"/proc/{pid}").exists()]
                time.sleep(0.05)

    def __enter__(self) -> RunningProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
