"""Replay over worker processes: the partition (pure), and each cell written exactly once."""

from __future__ import annotations

import json
from collections import Counter

from toolproxy import store
from toolproxy.cli import main
from toolproxy.replay.engine import plan_cells
from toolproxy.replay.model import Candidate, RecordedCall, ReplayConfig, ReplayItem, Step
from toolproxy.replay.workers import auto_workers, count_workers, jobs_for, partition, run_workers
from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def item(item_id: str) -> ReplayItem:
    step = Step(
        messages=[{"role": "user", "content": f"weather? ({item_id})"}],
        tools=[TOOL],
        recorded_calls=[
            RecordedCall(name="get_weather", arguments_raw='{"city":"Paris"}', arguments={})
        ],
    )
    return ReplayItem(item_id=item_id, kind="exchange", steps=[step])


def cand(name: str, concurrency: int, rate: float | None = None, url: str = "http://x/v1"):
    return Candidate(
        name=name,
        base_url=url,
        model=name,
        concurrency=concurrency,
        rate_limit=rate,
        retries=0,
        timeout_s=5,
    )


def test_partition_splits_cells_and_limits():
    config = ReplayConfig(candidates=[cand("a", 5, 10.0), cand("b", 1)], repeats=2)
    items = [item(f"i{n}") for n in range(4)]
    done = {("a", "i0", 0)}
    shares = partition(config, plan_cells(config, items, done), 2)
    assert len(shares) == 2
    (c0, items0, cells0), (c1, items1, cells1) = shares
    # a: 7 cells round-robin over 2 workers; limits split (3+2 = 5, 5+5 = 10 per second)
    assert [(c.name, c.concurrency, c.rate_limit) for c in c0.candidates] == [
        ("a", 3, 5.0),
        ("b", 1, None),  # concurrency 1: all of b's cells in one worker
    ]
    assert [(c.name, c.concurrency, c.rate_limit) for c in c1.candidates] == [("a", 2, 5.0)]
    every = cells0 + cells1
    assert len(every) == len(set(every)) == 7 + 8
    assert (
        set(every)
        == {(c.name, i.item_id, r) for c in config.candidates for i in items for r in range(2)}
        - done
    )
    assert [c for c in cells0 if c[0] == "a"] == [
        ("a", "i0", 1),
        ("a", "i1", 1),
        ("a", "i2", 1),
        ("a", "i3", 1),
    ]
    assert [i.item_id for i in items0] == ["i0", "i1", "i2", "i3"]
    assert [i.item_id for i in items1] == ["i1", "i2", "i3"]
    assert partition(config, plan_cells(config, items, done), 2) == shares  # deterministic


def test_partition_edges():
    config = ReplayConfig(candidates=[cand("a", 8)])
    items = [item("i0"), item("i1")]
    shares = partition(config, plan_cells(config, items, set()), 4)
    assert [s[2] for s in shares] == [[("a", "i0", 0)], [("a", "i1", 0)]]  # no empty share
    assert [s[0].candidates[0].concurrency for s in shares] == [4, 4]
    assert partition(config, plan_cells(config, items, {("a", "i0", 0), ("a", "i1", 0)}), 4) == []
    assert auto_workers(199, 16) == 1
    assert auto_workers(200, 16) == 4 and auto_workers(5000, 2) == 2
    assert auto_workers(5000, None) == 1
    assert count_workers(3, 10) == 3 and count_workers("auto", 10) == 1


def test_forked_workers_write_each_cell_once(tmp_path):
    # nothing listens on port 9: every cell fails fast, and is still written (as failed)
    config = ReplayConfig(candidates=[cand("down", 4, url="http://127.0.0.1:9/v1")], repeats=2)
    items = [item(f"i{n}") for n in range(5)]
    capture = store.init_capture(tmp_path / "cap")
    jobs = jobs_for(capture, "f", config, plan_cells(config, items, set()), 2)
    seen: list[tuple[str, int, int]] = []
    assert run_workers(jobs, lambda *a: seen.append(a), {"down": 10}, fork=True) == 10
    assert sorted(f for _, f, _ in seen) == list(range(1, 11))
    _, rows = store.query(capture, "SELECT item_id, repeat, status FROM replay_cells")
    assert Counter((i, r) for i, r, _ in rows) == {(i.item_id, r): 1 for i in items for r in (0, 1)}
    assert {s for _, _, s in rows} == {"failed"}


def test_command_with_two_workers_writes_each_cell_once(tmp_path, capsys):
    with (tmp_path / "cases.jsonl").open("w") as f:
        for n in range(6):
            case = {
                "id": f"c{n}",
                "messages": [{"role": "user", "content": f"weather? {n}"}],
                "tools": [TOOL],
                "calls": [{"tool": "get_weather", "args": {"city": "Paris"}}],
            }
            f.write(json.dumps(case) + "\n")
    weather = Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={"city": "Paris"})])
    with ScriptedUpstream(Script(cycle=True, replies={"m": [weather]})) as up:
        cfg = tmp_path / "cands.yaml"
        cfg.write_text(
            "repeats: 2\ncandidates:\n"
            f"  - name: m\n    base_url: {up.url}/v1\n    model: m\n    concurrency: 3\n"
        )
        capture = tmp_path / "cap"
        argv = ["replay", str(cfg), "-c", str(capture), "--run", "w", "--no-progress"]
        argv += ["--cases", str(tmp_path / "cases.jsonl"), "--workers", "2", "--json"]
        assert main(argv) == 0
        summary = json.loads(capsys.readouterr().out)  # stdout: the summary only
        assert summary["played"] == 12
        assert summary["summary"][0]["cells"] == "12/12", summary
        sent = len(up.requests)
        assert sent == 12
        assert main(argv) == 0  # resumed: every cell done, nothing sent again
        assert len(up.requests) == sent
    _, rows = store.query(capture, "SELECT item_id, repeat FROM replay_cells WHERE run = 'w'")
    assert Counter(rows) == {(f"c{n}", r): 1 for n in range(6) for r in (0, 1)}
    _, writers = store.query(
        capture, "SELECT count(DISTINCT session_id) FROM exchanges WHERE proxy_id = 'replay:w'"
    )
    assert writers == [(12,)]
