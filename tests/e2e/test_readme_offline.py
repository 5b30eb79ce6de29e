"""The README's "Try the workflow offline" block, run as written: bash, in a fresh directory
that holds only what a clone has there (`.venv`, `examples/`, `replays/`), with the real
scripted upstream, the real local model, a real `mitmdump` and the `openai` SDK agent.

What is asserted is the pipeline and the labels' consistency, not the model's quality."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from toolproxy import store
from toolproxy.grade.labels import PRECEDENCE

ROOT = Path(__file__).resolve().parents[2]


def offline_block() -> str:
    readme = (ROOT / "README.md").read_text()
    found = re.search(r"### Try the workflow offline\n.*?```bash\n(.*?)```", readme, re.S)
    assert found, "the README lost its offline walkthrough"
    return found.group(1)


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_the_offline_walkthrough_runs_as_written(tmp_path):
    block = offline_block()
    ports = sorted({int(p) for p in re.findall(r"--port (\d+)", block)})
    assert ports == [8080, 8089, 9000]
    assert not [p for p in ports if listening(p)], "a port the README uses is taken"
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    for name in ("examples", "replays"):
        (tmp_path / name).symlink_to(ROOT / name)
    script = tmp_path / "walkthrough.sh"
    script.write_text(block)
    shell = subprocess.Popen(
        ["bash", "-euo", "pipefail", str(script)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = shell.communicate(timeout=600)
    finally:
        try:
            os.killpg(shell.pid, signal.SIGTERM)  # whatever the block left behind on failure
        except ProcessLookupError:
            pass
    assert shell.returncode == 0, out[-4000:]
    assert "Traceback" not in out, out

    # every step did its part
    assert out.count("answer:") == 6  # the agent finished its six tasks
    assert "mcp-server-time  stdio      ok      2" in out
    assert "wrote 5 cases to expectations/offline.yaml" in out
    assert "run prod: 5 cases graded" in out
    assert re.search(r"^smollm2\s+smollm2-135m-instruct\s+5/5", out, re.M), out
    assert re.search(r"^metric\s+prod\s+cand:recorded\*\s+cand:smollm2$", out, re.M), out

    # production earns what it was labeled from; every candidate failure has one label
    capture = tmp_path / "captures" / "offline"
    _, rows = store.query(capture, "SELECT run, passed, label FROM grades ORDER BY run")
    by_run: dict[str, list[tuple[bool, str | None]]] = {}
    for run, passed, label in rows:
        by_run.setdefault(run, []).append((passed, label))
    assert set(by_run) == {"prod", "cand:recorded", "cand:smollm2"}
    assert by_run["prod"] == [(True, None)] * 5 == by_run["cand:recorded"]
    for passed, label in by_run["cand:smollm2"]:
        assert (label is None) if passed else (label in PRECEDENCE), (passed, label)

    # the servers the block started are gone once it has stopped them
    deadline = time.monotonic() + 15
    while [p for p in ports if listening(p)] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in ports if listening(p)]


def test_the_example_agent_says_when_nothing_listens():
    from toolproxy.capture.proxy import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    agent = [sys.executable, str(ROOT / "examples" / "agent.py"), "--base-url", url]
    done = subprocess.run([*agent, "--wait", "0.3"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == f"agent: nothing listens at {url} after 0.3 s\n"
