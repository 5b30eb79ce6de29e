"""`toolproxy tui` in a real terminal: tmux runs the installed command, keys are sent as a
person types them, and the screen is read back from the pane."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.seeded import seed_capture

TOOLPROXY = Path(sys.executable).parent / "toolproxy"


class Terminal:
    """A detached tmux session on its own server socket, 100x30."""

    def __init__(self, command: str, cwd: Path) -> None:
        self.socket = f"toolproxy-test-{uuid.uuid4().hex[:8]}"
        self.tmux("new-session", "-d", "-s", "t", "-x", "100", "-y", "30", "-c", str(cwd),
                  f"TERM=xterm-256color {command}")  # fmt: skip

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        )
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", *keys)

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen:\n{self.screen()}")

    def alive(self) -> bool:
        return subprocess.run(
            ["tmux", "-L", self.socket, "has-session", "-t", "t"], capture_output=True
        ).returncode == 0  # fmt: skip

    def close(self) -> None:
        self.tmux("kill-server")


@pytest.fixture
def terminal(tmp_path):
    seed_capture(tmp_path / "cap")
    term = Terminal(f"{shlex.quote(str(TOOLPROXY))} tui cap --cases cases.yaml", tmp_path)
    yield term
    term.close()


def test_the_real_app_in_a_real_terminal(terminal, tmp_path):
    shown = terminal.wait_for("sessions 1-5 of 5")
    assert "s-m" in shown and "gpt-a-2026" in shown
    terminal.keys("/")
    terminal.wait_for("filter: model:")  # the filter's input is up: keys sent sooner go to
    terminal.keys("tool:search", "Enter")  # the table ("o" sorts), as a slow CI run showed
    shown = terminal.wait_for("sessions 1-1 of 1")
    assert "s-b" in shown and "s-a" not in shown
    terminal.keys("Escape")
    terminal.wait_for("sessions 1-5 of 5")
    terminal.keys("Down", "Down", "Down", "Down", "Enter")  # s-a, the oldest
    shown = terminal.wait_for("3 turn(s)")
    assert "weather in Paris?" in shown
    terminal.keys("a")
    terminal.wait_for("added case get_weather-a0")
    assert "id: get_weather-a0" in (tmp_path / "cases.yaml").read_text()
    terminal.keys("q")
    deadline = time.monotonic() + 30
    while terminal.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not terminal.alive()
