"""toolproxy.replay.shares: dealing cells and limits to workers (pure)."""

from __future__ import annotations

from tests.replay_cells import cand, item
from toolproxy.replay.engine import plan_cells
from toolproxy.replay.model import ReplayConfig
from toolproxy.replay.shares import auto_workers, count_workers, partition


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
    assert count_workers(3, 10, 2) == 3 and count_workers("auto", 10, 8) == 1
    assert count_workers("auto", 500, 8) == 4 and count_workers(None, 500, 2) == 2
