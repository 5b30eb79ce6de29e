"""A replay spread over worker processes (`toolproxy replay --workers N`).

One event loop is CPU-bound well below what a fast endpoint can answer (most of it is the
SDK's HTTP stack), so the cells still to play are split over N processes:

- `partition` (pure) deals each candidate's cells round-robin over at most N workers and
  splits the candidate's `concurrency` and `rate_limit` between the workers that got some
  of its cells: the config's per-candidate limits stay totals across all workers.
- `run_workers` starts a worker per share and turns the line each worker writes per
  finished cell into progress. On Linux, from a single-threaded process, a worker is a
  fork (it starts playing at once: spawning `python -m toolproxy.replay.workers` costs
  ~1.3 s of imports per worker, half the run at 1,000 cells); otherwise it is that
  spawned process, its `Job` sent as one JSON line on stdin. No key is in a job: a worker
  resolves keys from the environment it inherits. A worker writes its cells with its own
  `StoreSink` (its own segment writer id), so every cell's row is written by exactly one
  process, and a killed run (parent or worker) resumes like a single-process one: cells
  with a `replay_cells` row are skipped, the others played again.
- A worker watches a pipe only its parent writes to (a spawned worker: its stdin) and
  exits when it closes: a worker never outlives its parent.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, Field

from toolproxy.replay.model import ReplayConfig, ReplayItem

Progress = Callable[[str, int, int], None]
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
    tools_mode: str = Field(default="recorded", description="`recorded` (live stays in-process)")


def auto_workers(cells: int, cpus: int | None) -> int:
    """`--workers auto`: 1 below `AUTO_MIN_CELLS` cells, else min(cpus, 4)."""
    if cells < AUTO_MIN_CELLS:
        return 1
    return max(1, min(cpus or 1, MAX_AUTO_WORKERS))


def count_workers(given: str | int | None, cells: int) -> int:
    """`--workers`: a number, or `auto`/None (`auto_workers` on this machine's CPUs)."""
    if given is None or given == "auto":
        return auto_workers(cells, os.cpu_count())
    return max(1, int(given))


def jobs_for(
    capture: Path,
    run: str,
    config: ReplayConfig,
    todo: Mapping[str, Sequence[tuple[ReplayItem, int]]],
    workers: int,
) -> list[Job]:
    """One `Job` per share of `partition`."""
    return [
        Job(capture=str(capture), run=run, config=c, items=i, cells=k)
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


class _Worker:
    """A started worker: its progress lines, its exit status, and how to stop it."""

    def __init__(self, job: Job, fork: bool, others: list[int]) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid = 0
        self.lines: IO[bytes]
        if fork:
            # no exec: the child has every module the parent imported (~1 s of imports saved)
            lines_r, lines_w = os.pipe()
            stop_r, self.stop_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child
                code = 1
                try:
                    sys.stdout = sys.stderr  # the parent's stdout is its own (e.g. --json)
                    for fd in (lines_r, self.stop_w, *others):
                        os.close(fd)
                    code = serve(job, os.fdopen(lines_w, "w"), stop_r)
                except BaseException:
                    traceback.print_exc()
                finally:
                    sys.stderr.flush()
                    os._exit(code)  # never back into the parent's code (or its atexit)
            os.close(lines_w)
            os.close(stop_r)
            self.pid = pid
            self.lines = os.fdopen(lines_r, "rb")
            return
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolproxy.replay.workers"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(job.model_dump_json().encode() + b"\n")
        self.proc.stdin.flush()  # stdin stays open: closing it tells the worker to stop
        self.lines = self.proc.stdout
        self.stop_w = self.proc.stdin.fileno()

    def fds(self) -> list[int]:
        """The parent's ends of this worker's pipes (a later fork child must close them)."""
        return [self.lines.fileno(), self.stop_w]

    def wait(self) -> int:
        """The exit status (blocking)."""
        if self.proc is not None:
            return self.proc.wait()
        return os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])

    def stop(self) -> None:
        """Ask a running worker to stop (it exits when its stop pipe closes) and reap it."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
            if self.proc.stdin is not None:
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass
            self.proc.wait()
            return
        try:
            os.close(self.stop_w)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass  # already reaped by wait()


def can_fork() -> bool:
    """Fork (not spawn) workers: on Linux, from a single-threaded process only (forking
    with other threads alive may copy a held lock into the child)."""
    return sys.platform == "linux" and threading.active_count() == 1


def run_workers(
    jobs: Sequence[Job],
    progress: Progress | None,
    totals: Mapping[str, int],
    *,
    fork: bool | None = None,
) -> int:
    """Play every job in its own worker process; returns the cells they finished.

    `fork`: fork this process (None: when `can_fork()`), else start
    `python -m toolproxy.replay.workers`. Raises `RuntimeError` when a worker fails (its
    unfinished cells have no row: the next run with the same `--run` plays them)."""
    forking = can_fork() if fork is None else fork
    started: list[_Worker] = []
    finished: dict[str, int] = dict.fromkeys(totals, 0)
    lock = threading.Lock()

    def follow(worker: _Worker) -> None:
        for line in worker.lines:
            try:
                name = json.loads(line)["candidate"]
            except (ValueError, KeyError, TypeError):
                continue
            with lock:
                finished[name] = finished.get(name, 0) + 1
                if progress is not None:
                    progress(name, finished[name], totals.get(name, 0))

    try:
        for job in jobs:
            started.append(_Worker(job, forking, [fd for w in started for fd in w.fds()]))
        readers = [threading.Thread(target=follow, args=(w,), daemon=True) for w in started]
        for reader in readers:
            reader.start()
        codes = [w.wait() for w in started]
        for reader in readers:
            reader.join()
    finally:
        for worker in started:
            worker.stop()
            worker.lines.close()
    failed = [str(c) for c in codes if c != 0]
    if failed:
        raise RuntimeError(f"{len(failed)} replay worker(s) failed (exit {', '.join(failed)})")
    return sum(finished.values())


def play_job(job: Job, report: Callable[[str], None]) -> int:
    """Play a job's cells into its capture; `report(candidate)` after each cell."""
    import asyncio

    from toolproxy.grade.runner import load_server_tools
    from toolproxy.replay.config import resolve_key
    from toolproxy.replay.engine import run_matrix
    from toolproxy.replay.feedback import make_check
    from toolproxy.replay.sink import StoreSink, writer_id

    capture = Path(job.capture)
    keys = {c.name: resolve_key(c) for c in job.config.candidates}
    own = set(job.cells)
    # run_matrix plays what is not "done": everything of this job's matrix it does not own
    done = {
        (c.name, item.item_id, r)
        for c in job.config.candidates
        for item in job.items
        for r in range(job.config.repeats)
    } - own
    server_tools = load_server_tools(capture)
    sink = StoreSink(
        capture,
        job.run,
        f"{writer_id(job.run)}-{os.getpid()}-{secrets.token_hex(3)}",
        candidates=job.config.candidates,
        items=job.items,
        secrets=[k for k in keys.values() if k],
        server_tools=server_tools,
        stream=job.config.stream,
    )
    try:
        results = asyncio.run(
            run_matrix(
                job.config,
                job.items,
                job.run,
                sink,
                done,
                keys,
                "recorded",
                None,
                make_check(server_tools),
                lambda name, _f, _t: report(name),
            )
        )
    finally:
        sink.close()
    return len(results)


def serve(job: Job, out: IO[str], stop: int) -> int:
    """Play `job`, writing a JSON line per finished cell to `out`; exit the process as soon
    as file descriptor `stop` reaches its end (the parent closed it, or died)."""

    def watch() -> None:
        while os.read(stop, 4096):  # unbuffered: no lock left held at interpreter exit
            pass
        os._exit(3)  # unwritten cells have no row: the next run plays them

    threading.Thread(target=watch, daemon=True).start()

    def report(name: str) -> None:
        out.write(json.dumps({"candidate": name}) + "\n")
        out.flush()

    play_job(job, report)
    out.flush()
    return 0


def main() -> int:
    """Spawned worker: a `Job` on the first stdin line, a JSON line per finished cell on
    stdout; stops when stdin closes."""
    out = sys.stdout
    sys.stdout = sys.stderr  # stdout carries progress lines only
    job = Job.model_validate_json(sys.stdin.buffer.readline())
    return serve(job, out, sys.stdin.fileno())


def _unique(items: Sequence[ReplayItem]) -> list[ReplayItem]:
    seen: set[str] = set()
    kept = []
    for item in items:
        if item.item_id not in seen:
            seen.add(item.item_id)
            kept.append(item)
    return kept


if __name__ == "__main__":
    sys.exit(main())
