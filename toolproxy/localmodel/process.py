"""`LocalModel`: the local model's server as a child process, started, waited for, stopped.

`with LocalModel() as model:` gives `model.url` (`http://127.0.0.1:PORT/v1` for the
`openai` SDK's base_url) once the model is loaded; leaving the block (or an error, or
Ctrl-C) terminates the process. A server that cannot start raises `ModelError` with the
last lines it printed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import deque
from types import TracebackType

from toolproxy.capture import lifeline
from toolproxy.capture.proxy import free_port
from toolproxy.errors import UserError
from toolproxy.localmodel.weights import MODEL_NAME, READY, ModelMissing, missing

START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 10.0


class ModelError(UserError):
    """The local model's server did not start or stopped."""


class LocalModel:
    """The local model served on `port` (a free one by default)."""

    name = MODEL_NAME

    def __init__(self, port: int | None = None, threads: int | None = None) -> None:
        self.port = port or free_port()
        self.threads = threads
        self.process: subprocess.Popen[str] | None = None
        self.output: deque[str] = deque(maxlen=30)  # the server's last lines, for errors

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL (ends in /v1)."""
        return f"{self.base}/v1"

    def start(self) -> LocalModel:
        why = missing()
        if why:
            raise ModelMissing(why)
        argv = [sys.executable, "-m", "toolproxy.localmodel.server", "--port", str(self.port)]
        if self.threads:
            argv += ["--threads", str(self.threads)]
        self.process = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env={**os.environ, **lifeline.parent_env()},  # it dies with this process
        )
        ready = threading.Event()
        threading.Thread(target=self._read, args=(ready,), daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready.wait(0.05):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = "\n".join(self.output)
                raise ModelError(f"the local model did not start on port {self.port}:\n{tail}")
        return self

    def _read(self, ready: threading.Event) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line.rstrip())
            if READY in line:  # llama.cpp may have begun a log line on the same one
                ready.set()

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> LocalModel:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
