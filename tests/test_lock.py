"""uv.lock is the one resolution every install gets: it matches pyproject.toml, and the
environment scripts/setup.sh made holds exactly its versions (no package more or less).
Both checks run offline (uv reads the lock and the venv, nothing from the network)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UV = Path(sys.executable).parent / "uv"
ENV = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_OFFLINE": "1", "NO_COLOR": "1"}


def uv(*args: str) -> subprocess.CompletedProcess[str]:
    if not UV.is_file():
        pytest.fail(f"{UV} is missing: run scripts/setup.sh (uv is a dev dependency)")
    argv = [str(UV), *args, "--python", sys.executable]
    return subprocess.run(argv, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)


def test_the_lock_matches_pyproject():
    done = uv("lock", "--check")
    assert done.returncode == 0, done.stderr


def test_the_environment_is_exactly_the_lock():
    done = uv("sync", "--locked", "--check", "--extra", "dev", "--extra", "model")
    assert done.returncode == 0, done.stderr
    assert "Would make no changes" in done.stderr


def test_the_lock_keeps_mitmproxys_caps():
    """mitmproxy 12.2 caps cryptography (and typing-extensions on Python < 3.13): the lock
    never holds a version it refuses."""
    import tomllib

    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    versions = [p["version"] for p in lock["package"] if p["name"] == "cryptography"]
    assert versions and all(tuple(map(int, v.split(".")[:2])) <= (48, 1) for v in versions)
