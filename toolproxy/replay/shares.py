"""How a replay's cells are dealt to worker processes: pure.

`partition` deals each candidate's cells round-robin over at most N workers and splits the
candidate's `concurrency` and `rate_limit` between the workers that got some of its
cells: the config's per-candidate limits stay totals across all workers. `jobs_for` makes
one `Job` per share; `count_workers` says how many workers `--workers` means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from toolproxy.replay.model import ReplayConfig, ReplayItem

CellKey = tuple[str, str, int]  # (candidate name, item id, repeat)
MAX_AUTO_WORKERS = 4
AUTO_MIN_CELLS = 200  # fewer cells than this: one process (start-up would cost more)


class Job(BaseModel):
    """What one worker plays (sent on its stdin; holds no secret)."""

    capture: str = Field(description="the capture path")
    run: str = Field(description="the replay run name")
    config: ReplayConfig = Field(description="the candidates it plays, limits already split")
    items: list[ReplayItem] = Field(description="the items its cells belong to")
    cells: list[tuple[str, str, int]] = Field(description="(candidate, item id, repeat) to play")
    server_tools: list[tuple[str, str, Any]] | None = Field(
        default=None,
        description="the capture's MCP tool schemas (`load_server_tools`); None: read them",
    )


def auto_workers(cells: int, cpus: int | None) -> int:
    """`--workers auto`: 1 below `AUTO_MIN_CELLS` cells, else min(cpus, 4)."""
    if cells < AUTO_MIN_CELLS:
        return 1
    return max(1, min(cpus or 1, MAX_AUTO_WORKERS))


def count_workers(given: str | int | None, cells: int, cpus: int | None) -> int:
    """`--workers`: a number, or `auto`/None (`auto_workers` on `cpus` CPUs)."""
    if given is None or given == "auto":
        return auto_workers(cells, cpus)
    return max(1, int(given))


def jobs_for(
    capture: Path,
    run: str,
    config: ReplayConfig,
    todo: Mapping[str, Sequence[tuple[ReplayItem, int]]],
    workers: int,
    server_tools: list[tuple[str, str, Any]] | None = None,
) -> list[Job]:
    """One `Job` per share of `partition` (`server_tools`: read once here, not per worker)."""
    return [
        Job(capture=str(capture), run=run, config=c, items=i, cells=k, server_tools=server_tools)
        for c, i, k in partition(config, todo, workers)
    ]


def partition(
    config: ReplayConfig, todo: Mapping[str, Sequence[tuple[ReplayItem, int]]], workers: int
) -> list[tuple[ReplayConfig, list[ReplayItem], list[CellKey]]]:
    """Split the cells to play (`engine.plan_cells`) over up to `workers` shares.

    Each candidate's cells go round-robin to m = min(workers, concurrency, cells) workers;
    worker i gets concurrency // m (+1 for the first concurrency % m) and rate_limit / m.
    Returns, per non-empty share: its config (only its candidates, their limits split),
    its items (in plan order) and its cells. Deterministic."""
    shares: list[dict[str, Any]] = [{"cands": [], "cells": []} for _ in range(max(1, workers))]
    for cand in config.candidates:
        cells = list(todo.get(cand.name, []))
        m = min(len(shares), cand.concurrency, len(cells))
        for w in range(m):
            own = cells[w::m]
            limits: dict[str, Any] = {
                "concurrency": cand.concurrency // m + (w < cand.concurrency % m)
            }
            if cand.rate_limit is not None:
                limits["rate_limit"] = cand.rate_limit / m
            shares[w]["cands"].append(cand.model_copy(update=limits))
            shares[w]["cells"].extend((item, r, cand.name) for item, r in own)
    out = []
    for share in shares:
        if not share["cells"]:
            continue
        items = _unique([item for item, _, _ in share["cells"]])
        keys = [(name, item.item_id, r) for item, r, name in share["cells"]]
        out.append((config.model_copy(update={"candidates": share["cands"]}), items, keys))
    return out


def _unique(items: Sequence[ReplayItem]) -> list[ReplayItem]:
    seen: set[str] = set()
    kept = []
    for item in items:
        if item.item_id not in seen:
            seen.add(item.item_id)
            kept.append(item)
    return kept
