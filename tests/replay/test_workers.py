"""Replay over worker processes: forked only when safe, each cell written exactly once, no
worker outliving its parent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from contextlib import closing

import pytest

from tests.replay_cells import TOOL, cand, item
from toolproxy import store
from toolproxy.cli.main import main
from toolproxy.replay.engine import plan_cells
from toolproxy.replay.model import ReplayConfig
from toolproxy.replay.shares import jobs_for
from toolproxy.replay.workers import Workers, can_fork, os_threads, run_workers
from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream


def test_native_threads_rule_out_forking(tmp_path):
    # DuckDB's threads are invisible to `threading`: an open connection has several
    capture = store.init_capture(tmp_path / "cap")
    with closing(store.open_capture(capture)) as con:
        con.execute("SELECT count(*) FROM exchanges").fetchall()
        assert threading.active_count() == 1 or os_threads() > threading.active_count()
        assert os_threads() > 1 and not can_fork()
        config = ReplayConfig(candidates=[cand("down", 2, url="http://127.0.0.1:9/v1")])
        jobs = jobs_for(capture, "f", config, plan_cells(config, [item("i0")], set()), 1)
        with pytest.raises(RuntimeError, match="other threads"):
            Workers(jobs, fork=True)
    stop = threading.Event()
    waiting = threading.Thread(target=stop.wait)
    waiting.start()
    try:
        assert not can_fork()
    finally:
        stop.set()
        waiting.join()


def test_workers_write_each_cell_once_and_send_back_briefs(tmp_path):
    # nothing listens on port 9: every cell fails fast, and is still written (as failed).
    # Forked or spawned, whichever this process allows now: the outcome is the same.
    config = ReplayConfig(candidates=[cand("down", 4, url="http://127.0.0.1:9/v1")], repeats=2)
    items = [item(f"i{n}") for n in range(5)]
    capture = store.init_capture(tmp_path / "cap")
    jobs = jobs_for(capture, "f", config, plan_cells(config, items, set()), 2)
    seen: list[tuple[str, int, int]] = []
    briefs = run_workers(jobs, lambda *a: seen.append(a), {"down": 10})
    finished = [f for _, f, _ in seen]  # cumulative, batched: at most 10 lines/s a worker
    assert finished == sorted(finished) and finished[-1] == 10
    assert {(name, total) for name, _, total in seen} == {("down", 10)}
    assert len(briefs) == 10 and {(b.candidate, b.status) for b in briefs} == {("down", "failed")}
    _, rows = store.query(capture, "SELECT item_id, repeat, status FROM replay_cells")
    assert Counter((i, r) for i, r, _ in rows) == {(i.item_id, r): 1 for i in items for r in (0, 1)}
    assert {s for _, _, s in rows} == {"failed"}


def test_spawned_workers_play_like_forked_ones(tmp_path):
    config = ReplayConfig(candidates=[cand("down", 2, url="http://127.0.0.1:9/v1")])
    items = [item(f"i{n}") for n in range(3)]
    capture = store.init_capture(tmp_path / "cap")
    jobs = jobs_for(capture, "s", config, plan_cells(config, items, set()), 2)
    with Workers(jobs, fork=False) as started:
        assert not started.forked
        briefs = started.follow(None, {"down": 3})
    assert sorted(b.status for b in briefs) == ["failed"] * 3
    _, rows = store.query(capture, "SELECT DISTINCT item_id FROM replay_cells WHERE run = 's'")
    assert sorted(r[0] for r in rows) == ["i0", "i1", "i2"]


def write_cases(path, n):
    with path.open("w") as f:
        for i in range(n):
            case = {
                "id": f"c{i}",
                "messages": [{"role": "user", "content": f"weather? {i}"}],
                "tools": [TOOL],
                "calls": [{"tool": "get_weather", "args": {"city": "Paris"}}],
            }
            f.write(json.dumps(case) + "\n")


WEATHER = Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={"city": "Paris"})])


def test_command_forks_workers_from_a_fresh_process(tmp_path):
    # what users run: `toolproxy replay` in its own process, single-threaded when it forks
    write_cases(tmp_path / "cases.jsonl", 8)
    with ScriptedUpstream(Script(cycle=True, replies={"m": [WEATHER]})) as up:
        cfg = tmp_path / "cands.yaml"
        cfg.write_text(
            f"candidates:\n  - name: m\n    base_url: {up.url}/v1\n    model: m\n"
            "    concurrency: 4\n"
        )
        argv = [sys.executable, "-m", "toolproxy.cli", "replay", str(cfg), "-c"]
        argv += [str(tmp_path / "cap"), "--run", "f", "--cases", str(tmp_path / "cases.jsonl")]
        argv += ["--workers", "2", "--no-progress", "--json"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "2 worker process(es), forked" in done.stderr
        assert "multi-threaded" not in done.stderr  # Python's fork-with-threads warning
        out = json.loads(done.stdout)
        assert out["played"] == 8
        row = out["summary"][0]
        # a case has no recorded reply to diverge from: it completes, its grade passes
        assert (row["cells"], row["diverged"], row["failed"], row["pass_rate"]) == (
            "8/8",
            0,
            0,
            1.0,
        ), row
        assert row["completed"] == 8
        assert len(up.requests) == 8
    _, rows = store.query(tmp_path / "cap", "SELECT item_id FROM replay_cells WHERE run = 'f'")
    assert Counter(r[0] for r in rows) == {f"c{i}": 1 for i in range(8)}


def test_command_with_two_workers_writes_each_cell_once(tmp_path, capsys):
    # in this (test) process the scripted upstream serves from threads: workers are spawned
    write_cases(tmp_path / "cases.jsonl", 6)
    with ScriptedUpstream(Script(cycle=True, replies={"m": [WEATHER]})) as up:
        cfg = tmp_path / "cands.yaml"
        cfg.write_text(
            "repeats: 2\ncandidates:\n"
            f"  - name: m\n    base_url: {up.url}/v1\n    model: m\n    concurrency: 3\n"
        )
        capture = tmp_path / "cap"
        argv = ["replay", str(cfg), "-c", str(capture), "--run", "w", "--no-progress"]
        argv += ["--cases", str(tmp_path / "cases.jsonl"), "--workers", "2", "--json"]
        assert main(argv) == 0
        captured = capsys.readouterr()
        assert "2 worker process(es), spawned" in captured.err
        summary = json.loads(captured.out)  # stdout: the summary only
        assert summary["played"] == 12
        assert summary["summary"][0]["cells"] == "12/12", summary
        # cases have no recorded reply to diverge from
        assert (summary["summary"][0]["completed"], summary["summary"][0]["diverged"]) == (12, 0)
        sent = len(up.requests)
        assert sent == 12
        assert main(argv) == 0  # resumed: every cell done, nothing sent again
        again = json.loads(capsys.readouterr().out)
        assert again["played"] == 0 and again["summary"][0]["cells"] == "12/12"
        assert again["summary"][0]["completed"] == 12  # read back from the store
        assert len(up.requests) == sent
    _, rows = store.query(capture, "SELECT item_id, repeat FROM replay_cells WHERE run = 'w'")
    assert Counter(rows) == {(f"c{n}", r): 1 for n in range(6) for r in (0, 1)}
    _, writers = store.query(
        capture, "SELECT count(DISTINCT session_id) FROM exchanges WHERE proxy_id = 'replay:w'"
    )
    assert writers == [(12,)]


def group_gone(pgid: int, within_s: float = 30.0) -> bool:
    """Whether every process of group `pgid` has exited (polled)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_parent_killed_with_sigkill_takes_its_workers_and_the_run_resumes(tmp_path):
    write_cases(tmp_path / "cases.jsonl", 40)
    slow = Reply(tool_calls=WEATHER.tool_calls, delay_s=0.2)
    with ScriptedUpstream(Script(cycle=True, replies={"m": [slow]})) as up:
        cfg = tmp_path / "cands.yaml"
        cfg.write_text(
            f"candidates:\n  - name: m\n    base_url: {up.url}/v1\n    model: m\n"
            "    concurrency: 4\n"
        )
        capture = store.init_capture(tmp_path / "cap")
        argv = [sys.executable, "-m", "toolproxy.cli", "replay", str(cfg), "-c", str(capture)]
        argv += ["--run", "k", "--cases", str(tmp_path / "cases.jsonl"), "--no-grade"]
        argv += ["--workers", "2", "--no-progress"]
        first = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                _, rows = store.query(capture, "SELECT count(*) FROM replay_cells")
                if rows[0][0] >= 4:
                    break
                time.sleep(0.05)
        finally:
            os.kill(first.pid, signal.SIGKILL)  # the parent only: its workers must follow
            first.wait()
        assert group_gone(first.pid)  # no worker outlives its parent
        _, rows = store.query(capture, "SELECT item_id FROM replay_cells WHERE run = 'k'")
        done = {r[0] for r in rows}
        assert 4 <= len(done) < 40 and len(rows) == len(done)
        second = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert second.returncode == 0, second.stderr
        assert f"{40 - len(done)} cell(s) to play, {len(done)} already done" in second.stderr
    _, rows = store.query(capture, "SELECT item_id FROM replay_cells WHERE run = 'k'")
    assert Counter(r[0] for r in rows) == {f"c{i}": 1 for i in range(40)}
