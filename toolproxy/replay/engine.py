"""The replay matrix: candidates × items × repeats, resumable, each candidate at its pace.

`run_matrix` plays every cell not in `done` (cells whose `replay_cells` row the store
already has; a half-finished cell has no row, so it is simply played again with fresh
exchange ids). Each candidate has its own workers (`candidate.concurrency` of them: the
candidate's semaphore), its own SDK client, its own token bucket (`rate_limit` requests
per second, shared by its workers) and its own backoff, so a slow or broken candidate
(429s, 500s, garbage, cut streams, hangs) only ever fails its own cells.

`Sink` is where turns and cells go (the store's sink writes them as capture rows);
`LiveTools` runs a call for `--tools live` (`livetools.McpLiveTools`); `MemorySink` keeps
everything in lists, for tests and dry runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from toolproxy.replay import client as candidate_client
from toolproxy.replay.feedback import CallCheck, make_check
from toolproxy.replay.loop import Backoff, Pace, TokenBucket, ToolsMode, run_cell
from toolproxy.replay.model import (
    Candidate,
    CellResult,
    ReplayConfig,
    ReplayItem,
    Step,
    TurnRecord,
)

Progress = Callable[[str, int, int], None]
CellKey = tuple[str, str, int]  # (candidate name, item id, repeat)


class Sink(Protocol):
    """Where a replay's turns and cells are written (sync or async methods both work)."""

    def write_turn(
        self,
        run: str,
        candidate: Candidate,
        item: ReplayItem,
        repeat: int,
        step_index: int,
        step: Step,
        turn: TurnRecord,
        request_messages: list[dict[str, Any]],
        reply: Any = None,
    ) -> Awaitable[None] | None:
        """One request of a cell: `turn` is what the candidate did with `request_messages`
        (the whole conversation sent, feedback included), at step `step_index` of `item`;
        `reply` is the `CandidateReply` (body sent, status, model, latency)."""
        ...

    def write_cell(self, result: CellResult) -> Awaitable[None] | None:
        """The cell's outcome; once written, the cell is done and never played again."""
        ...


@dataclass(frozen=True)
class LiveResult:
    """What a tool said when run live."""

    content: str
    is_error: bool = False


class LiveTools(Protocol):
    """Runs candidates' calls on real tools (`--tools live`)."""

    async def call(self, name: str, arguments: dict[str, Any]) -> LiveResult | None:
        """Run model-facing tool `name`; None when it is unknown or may not run."""
        ...


@dataclass
class MemorySink:
    """A sink that keeps what it is given, in order."""

    turns: list[tuple[str, str, str, int, int, TurnRecord, list[dict[str, Any]]]] = field(
        default_factory=list
    )
    cells: list[CellResult] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def write_turn(
        self,
        run: str,
        candidate: Candidate,
        item: ReplayItem,
        repeat: int,
        step_index: int,
        step: Step,
        turn: TurnRecord,
        request_messages: list[dict[str, Any]],
        reply: Any = None,
    ) -> None:
        """Keep (run, candidate name, item id, repeat, step, turn, messages); and the
        reply's request bodies in `bodies`."""
        self.bodies.append(getattr(reply, "request", None) or {})
        self.turns.append(
            (run, candidate.name, item.item_id, repeat, step_index, turn, request_messages)
        )

    def write_cell(self, result: CellResult) -> None:
        """Keep the cell's result."""
        self.cells.append(result)

    def done(self) -> set[CellKey]:
        """The cells written so far, as `run_matrix` takes them."""
        return {(c.candidate, c.item_id, c.repeat) for c in self.cells}


def plan_cells(
    config: ReplayConfig, items: Iterable[ReplayItem], done: set[CellKey]
) -> dict[str, list[tuple[ReplayItem, int]]]:
    """Per candidate, the (item, repeat) cells still to play, item by item."""
    listed = list(items)
    return {
        c.name: [
            (item, r)
            for item in listed
            for r in range(config.repeats)
            if (c.name, item.item_id, r) not in done
        ]
        for c in config.candidates
    }


def done_in_plan(
    config: ReplayConfig, items: Iterable[ReplayItem], done: set[CellKey]
) -> tuple[set[CellKey], int]:
    """The cells of `done` this plan holds (its candidates, items and repeats), and how many
    other cells of its candidates the run holds (other cases or turns, repeats past k):
    kept in the run, not in this plan's summary."""
    names = {c.name for c in config.candidates}
    planned = {i.item_id for i in items}
    ours = {c for c in done if c[0] in names}
    held = {c for c in ours if c[1] in planned and c[2] < config.repeats}
    return held, len(ours) - len(held)


async def run_matrix(
    config: ReplayConfig,
    items: Iterable[ReplayItem],
    run: str,
    sink: Sink,
    done: set[CellKey],
    keys: Mapping[str, str | None],
    tools_mode: ToolsMode,
    live_tools: LiveTools | None,
    grader_check: CallCheck | None,
    progress: Progress | None = None,
    *,
    backoff: Backoff | None = None,
) -> list[CellResult]:
    """Play every cell of the matrix not in `done`; returns the results of those played.

    `keys` maps candidate names to API keys (None: keyless). `progress(candidate,
    finished, total)` is called after every cell, `total` counting the cells to play now.
    """
    todo = plan_cells(config, items, done)
    check = grader_check or make_check()
    results: list[CellResult] = []

    async def play(candidate: Candidate) -> None:
        cells = todo[candidate.name]
        if not cells:
            return
        queue: asyncio.Queue[tuple[ReplayItem, int]] = asyncio.Queue()
        for cell in cells:
            queue.put_nowait(cell)
        key = keys.get(candidate.name)
        client = candidate_client.make_async_client(candidate, key)
        bucket = TokenBucket(candidate.rate_limit) if candidate.rate_limit else None
        pace = Pace(client=client, bucket=bucket, backoff=backoff or Backoff())
        finished = 0

        async def worker() -> None:
            nonlocal finished
            while not queue.empty():
                item, repeat = queue.get_nowait()
                try:
                    result = await run_cell(
                        candidate,
                        item,
                        repeat,
                        key,
                        check,
                        tools_mode,
                        live_tools,
                        config.feedback_retries,
                        sink,
                        run=run,
                        stream=config.stream,
                        pace=pace,
                    )
                except Exception as exc:  # noqa: BLE001 - one broken cell stops nothing
                    # Not written: without its row the cell is played again next time.
                    result = _internal(run, candidate, item, repeat, exc)
                results.append(result)
                finished += 1
                if progress is not None:
                    progress(candidate.name, finished, len(cells))

        try:
            workers = min(candidate.concurrency, len(cells))
            await asyncio.gather(*(worker() for _ in range(workers)))
        finally:
            await client.close()

    await asyncio.gather(*(play(c) for c in config.candidates))
    return results


def _internal(
    run: str, candidate: Candidate, item: ReplayItem, repeat: int, exc: Exception
) -> CellResult:
    """The result of a cell the program itself failed to play (a bug, or the sink)."""
    return CellResult(
        run=run,
        candidate=candidate.name,
        item_id=item.item_id,
        repeat=repeat,
        finished_at=datetime.now(UTC).isoformat(),
        status="failed",
        steps_total=len(item.steps),
        error_kind="internal",
        error=f"{type(exc).__name__}: {exc}"[:500],
    )
