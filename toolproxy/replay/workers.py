"""A replay spread over worker processes (`toolproxy replay --workers N`).

One event loop is CPU-bound well below what a fast endpoint can answer (most of it is the
SDK's HTTP stack), so the cells still to play are split over N processes:

- `shares.partition` (pure) deals each candidate's cells round-robin over at most N
  workers and splits the candidate's `concurrency` and `rate_limit` between them.
- `Workers` starts a worker per share and turns the progress lines each worker writes
  (cells finished, at most ten lines a second) into progress. On Linux, from a process
  with no other thread (native ones counted: `can_fork`), a worker is a fork (it starts
  playing at once: spawning `python -m toolproxy.replay.workers` costs ~1.3 s of imports
  per worker, half the run at 1,000 cells); otherwise it is that spawned process, its
  `Job` sent as one JSON line on stdin. No key is in a job: a worker resolves keys from
  the environment it inherits. A worker writes its cells with its own `StoreSink` (its
  own segment writer id), so every cell's row is written by exactly one process, and a
  killed run (parent or worker) resumes like a single-process one: cells with a
  `replay_cells` row are skipped, the others played again.
- A worker watches a pipe only its parent writes to (a spawned worker: its stdin) and
  exits when it closes: a worker never outlives its parent.
"""

from __future__ import annotations

import gc
import json
import os
import secrets
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from toolproxy.replay.shares import Job
from toolproxy.replay.summary import CellBrief, brief

Progress = Callable[[str, int, int], None]


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
                except KeyboardInterrupt:  # Ctrl-C reaches the whole process group
                    code = 130
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


def preload() -> None:
    """Import what a worker plays with and make what every worker would make first (the
    TLS context): a forked worker inherits it all. Starts no thread."""
    from toolproxy.grade import runner  # noqa: F401 - imported for the children
    from toolproxy.replay import client, engine, feedback, sink  # noqa: F401

    client.tls_context()  # imports the transport's TLS modules too


def usable_cpus() -> int | None:
    """CPUs this process may run on (its affinity mask, e.g. a container's share)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def os_threads() -> int:
    """Threads this process has, native ones included (DuckDB's, aiohttp's resolver, rich's
    refresher): what `threading` sees where the OS cannot say."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def can_fork() -> bool:
    """Fork (not spawn) workers: on Linux, from a process that has no other thread, native
    ones included, at this moment. Forking beside another thread can copy a lock that
    thread holds into the child, where nothing ever releases it (a hang): the store's
    connections are closed after each query, so between queries there is none."""
    return sys.platform == "linux" and os_threads() == 1


class Workers:
    """Started worker processes, one per job: `follow` them, then `close`.

    Start them before anything starts a thread (progress bars, an event loop's executor,
    an open store connection), so that they can be forks; `forked` says which they are."""

    def __init__(self, jobs: Sequence[Job], *, fork: bool | None = None) -> None:
        """`fork`: None decides by `can_fork()`; True is refused when forking is unsafe."""
        if fork is not False:
            preload()  # what each child would otherwise do first, done once before forking
        safe = can_fork()
        if fork and not safe:
            raise RuntimeError("cannot fork replay workers: this process has other threads")
        self.forked = safe if fork is None else fork
        self.started: list[_Worker] = []
        sys.stdout.flush()  # a fork copies unwritten buffers; the child must not repeat them
        sys.stderr.flush()
        if self.forked:
            # What the parent holds (modules, the plan) goes into the GC's permanent
            # generation: the children's collections never walk it, so they neither pay
            # for it nor copy its pages (CPython's advice for fork without exec). No
            # collection first: with a large plan it costs more than the garbage it frees.
            gc.freeze()
        try:
            for job in jobs:
                others = [fd for w in self.started for fd in w.fds()]
                self.started.append(_Worker(job, self.forked, others))
        except BaseException:
            self.close()
            raise
        finally:
            if self.forked:
                gc.unfreeze()  # in this process: what the parent frees is freed again

    def follow(self, progress: Progress | None, totals: Mapping[str, int]) -> list[CellBrief]:
        """Wait for every worker, turning their lines into `progress`; the briefs of the
        cells they finished (each worker sends its briefs in its last line).

        Raises `RuntimeError` when a worker fails (its unfinished cells have no row: the
        next run with the same `--run` plays them)."""
        finished: dict[str, int] = dict.fromkeys(totals, 0)
        briefs: list[CellBrief] = []
        lock = threading.Lock()

        def read(worker: _Worker) -> None:
            for line in worker.lines:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                with lock:
                    if isinstance(message, dict) and "briefs" in message:
                        briefs.extend(CellBrief.model_validate(b) for b in message["briefs"])
                    elif isinstance(message, dict) and "candidate" in message:
                        name = message["candidate"]
                        finished[name] = finished.get(name, 0) + int(message.get("cells", 1))
                        if progress is not None:
                            progress(name, finished[name], totals.get(name, 0))

        readers = [threading.Thread(target=read, args=(w,), daemon=True) for w in self.started]
        for reader in readers:
            reader.start()
        codes = [w.wait() for w in self.started]
        for reader in readers:
            reader.join()
        failed = [str(c) for c in codes if c != 0]
        if failed:
            raise RuntimeError(f"{len(failed)} replay worker(s) failed (exit {', '.join(failed)})")
        return briefs

    def close(self) -> None:
        """Stop what still runs (it exits when its stop pipe closes) and reap everything."""
        for worker in self.started:
            worker.stop()
            worker.lines.close()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_workers(
    jobs: Sequence[Job],
    progress: Progress | None,
    totals: Mapping[str, int],
    *,
    fork: bool | None = None,
) -> list[CellBrief]:
    """Start `Workers` for `jobs`, follow them to the end, close them; the cells' briefs."""
    with Workers(jobs, fork=fork) as workers:
        return workers.follow(progress, totals)


def play_job(job: Job, report: Callable[[str], None]) -> list[CellBrief]:
    """Play a job's cells into its capture; `report(candidate)` after each cell. The
    cells' briefs, the candidates' keys scrubbed from their errors."""
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
    server_tools = job.server_tools if job.server_tools is not None else load_server_tools(capture)
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
    return [brief(r, sink.scrub) for r in results]


REPORT_EVERY_S = 0.1  # a worker's progress lines, at most this often (and at its end)


def serve(job: Job, out: IO[str], stop: int) -> int:
    """Play `job`, writing progress lines to `out` (`{"candidate", "cells"}`: cells
    finished since the last line, at most every `REPORT_EVERY_S`) and, at the end, one
    with every cell's brief; exit the process as soon as file descriptor `stop` reaches
    its end (the parent closed it, or died)."""

    def watch() -> None:
        while os.read(stop, 4096):  # unbuffered: no lock left held at interpreter exit
            pass
        os._exit(3)  # unwritten cells have no row: the next run plays them

    threading.Thread(target=watch, daemon=True).start()
    unreported: dict[str, int] = {}
    last = time.monotonic()

    def flush() -> None:
        nonlocal last
        for name, cells in unreported.items():
            out.write(json.dumps({"candidate": name, "cells": cells}) + "\n")
        unreported.clear()
        out.flush()
        last = time.monotonic()

    def report(name: str) -> None:
        unreported[name] = unreported.get(name, 0) + 1
        if time.monotonic() - last >= REPORT_EVERY_S:
            flush()

    briefs = play_job(job, report)
    flush()
    out.write(json.dumps({"briefs": [b.model_dump() for b in briefs]}) + "\n")
    out.flush()
    return 0


def main() -> int:
    """Spawned worker: a `Job` on the first stdin line, a JSON line per finished cell on
    stdout; stops when stdin closes."""
    out = sys.stdout
    sys.stdout = sys.stderr  # stdout carries progress lines only
    job = Job.model_validate_json(sys.stdin.buffer.readline())
    try:
        return serve(job, out, sys.stdin.fileno())
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group
        return 130


if __name__ == "__main__":
    sys.exit(main())
