"""Damaged and hostile setups get one line saying what is wrong, and exit 2: never a
traceback, never a misleading "compacted ..." as the only output."""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from toolproxy import store
from toolproxy.capture.proxy import free_port

TOOLPROXY = str(Path(sys.executable).parent / "toolproxy")


def run(*args: str, prefix: tuple[str, ...] = ()) -> tuple[int, list[str]]:
    done = subprocess.run(
        [*prefix, TOOLPROXY, *args], capture_output=True, text=True, timeout=120, check=False
    )
    return done.returncode, (done.stdout + done.stderr).strip().splitlines()


def one_line_error(code: int, lines: list[str], *words: str) -> str:
    assert code == 2 and len(lines) == 1, (code, lines)
    (line,) = lines
    assert line.startswith("toolproxy: ") and "Traceback" not in line
    for word in words:
        assert word in line, line
    return line


def record(capture: Path, *extra: str, port: int | None = None) -> list[str]:
    return [
        "record",
        "--upstream",
        "http://127.0.0.1:9",
        "--capture",
        str(capture),
        "--port",
        str(port or free_port()),
        *extra,
    ]


def test_capture_path_that_is_a_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("mine")
    for args in (record(path), ["status", "-c", str(path)], ["compact", "-c", str(path)]):
        one_line_error(*run(*args), str(path), "not a directory")
    assert path.read_text() == "mine"


@pytest.mark.parametrize("value", ["0", "-1", "11", "nan"])
def test_flush_interval_out_of_range(tmp_path, value):
    code, lines = run(*record(tmp_path / "cap", "--flush-interval", value))
    assert code == 2 and "--flush-interval" in lines[-1] and "0.01" in lines[-1], lines
    assert not (tmp_path / "cap").exists()


def test_port_in_use(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        one_line_error(*run(*record(tmp_path / "cap", port=port)), f"127.0.0.1:{port}", "in use")


def read_only(directory: Path) -> tuple[str, ...]:
    """Run the command with `directory` mounted read-only (a private mount namespace: works
    as root, where permission bits would not stop a write, and for users with namespaces)."""
    d = shlex.quote(str(directory))
    script = f'mount --bind {d} {d} && mount -o remount,ro,bind {d} && exec "$@"'
    return ("unshare", "--mount", "--map-root-user", "sh", "-c", script, "sh")


def test_read_only_capture_directory(tmp_path):
    capture = tmp_path / "cap"
    store.init_capture(capture)
    ro = read_only(capture)
    one_line_error(*run("compact", "-c", str(capture), prefix=ro), str(capture), "read-only")
    one_line_error(*run(*record(capture), prefix=ro), str(capture), "read-only")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    one_line_error(*run(*record(fresh / "cap"), prefix=read_only(fresh)), "read-only")
    # Reading a read-only capture still works.
    code, lines = run("status", "-c", str(capture), prefix=ro)
    assert code == 0, lines
