"""`toolproxy replay`: the glue between the CLI and the replay.

`cmd_replay`: load the config, plan the items (`--cases`, or the capture with the
filters), skip the cells of `--run` that `replay_cells` already holds (resume), resolve
the keys from the environment, build the live tools for `--tools live`, play the matrix
(`engine.run_matrix`) into the capture through `sink.StoreSink` with progress bars (in this
process, or over `--workers` processes: `workers`; `--tools live` always plays here), then
grade it (`grading.grade_replay`) and print one summary row per candidate plus the
recorded production model, and the `toolproxy report` command to run next (`replaysummary`).

`toolproxy replay-diff` is `toolproxy.cli.replay.cmd_replay_diff`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolproxy import store
from toolproxy.cli.filters import filter_fields, resolve_prefixes
from toolproxy.cli.replaysummary import (
    hint_notes,
    render_summary,
    report_baseline,
    report_command,
    summarize,
)
from toolproxy.errors import UserError
from toolproxy.grade.expectations import load_cases
from toolproxy.grade.model import Case
from toolproxy.grade.rows import GradeRow
from toolproxy.replay.config import changed_candidates, load_config, resolve_key
from toolproxy.replay.grading import grade_replay, load_cells
from toolproxy.replay.model import CellResult, ReplayConfig, ReplayItem
from toolproxy.replay.shares import count_workers
from toolproxy.replay.sink import StoreSink, writer_id
from toolproxy.replay.summary import (
    CellBrief,
    brief,
    failure_notes,
)
from toolproxy.replay.workers import usable_cpus
from toolproxy.store.queries import mcp as mcp_reads
from toolproxy.store.queries import replays as replay_reads
from toolproxy.suites import REPEATS as SUITE_REPEATS
from toolproxy.suites import suite_path
from toolproxy.util.gctools import frozen_gc, paused_gc
from toolproxy.util.words import counted
from toolproxy.wire.common import decoded

if TYPE_CHECKING:
    from toolproxy.replay.livetools import McpLiveTools

Progress = Callable[[str, int, int], None]
PLAIN_EVERY_S = 2.0  # seconds between plain progress lines per candidate


def select_config(config: ReplayConfig, names: Sequence[str], repeats: int | None) -> ReplayConfig:
    """The config narrowed to `names` (all when empty) with `repeats` overriding k."""
    known = [c.name for c in config.candidates]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UserError(
            f"no candidate named {', '.join(unknown)}; the config has {', '.join(known)}"
        )
    if repeats is not None and not 1 <= repeats <= 100:
        raise UserError("--repeats must be between 1 and 100")
    update: dict[str, Any] = {}
    if names:
        update["candidates"] = [c for c in config.candidates if c.name in names]
    if repeats is not None:
        update["repeats"] = repeats
    return config.model_copy(update=update)


def read_state(
    capture: Path, run: str, config: ReplayConfig
) -> tuple[set[tuple[str, str, int]], list[tuple[str, str, Any]]]:
    """(candidate, item id, repeat) of every cell of `run` already in the store, and the
    MCP servers' tool schemas (`load_server_tools`): one read of the store for both. A
    UserError when a candidate's played cells went to another model or endpoint than
    `config` names (`changed_candidates`)."""
    with store.reading(capture) as r:
        done = replay_reads.done_cells(r, run)
        played = replay_reads.played_targets(r, run) if done else {}
        server_tools = mcp_reads.server_tools(r)
    if problems := changed_candidates(run, config, played):
        raise UserError("\n".join([*problems, "use a new --run, or restore the config"]))
    return done, server_tools


def plan_items(
    args: argparse.Namespace, capture: Path
) -> tuple[list[ReplayItem], list[Case] | None, list[str]]:
    """The items to replay, the cases given (None: captured traffic), and notes."""
    from toolproxy.replay.plan import PlanFilters, plan_from_capture, plan_from_cases

    if args.cases:
        cases = load_cases(args.cases)
        plan = plan_from_cases(cases, capture)
        return list(plan), cases, plan.describe()
    try:
        filters = PlanFilters(**resolve_prefixes(capture, filter_fields(args)), per=args.per)
    except ValueError as exc:
        raise UserError(f"--label needs --label-run ({exc})") from None
    plan = plan_from_capture(capture, filters)
    return list(plan), None, plan.describe()


def build_live_tools(args: argparse.Namespace, capture: Path) -> McpLiveTools:
    """`McpLiveTools` over the servers of `--mcp-config` (else the usual config files),
    with the tools they exposed at their latest pull (none pulled: listed on first use)."""
    from toolproxy.mcp.pull import ServerSelection, find_specs
    from toolproxy.replay.livetools import McpLiveTools

    selection = ServerSelection(config=args.mcp_config)
    specs, _, _ = find_specs(selection, Path.cwd(), Path.home(), os.environ, sys.platform)
    with store.reading(capture) as r:
        rows = mcp_reads.tool_annotations(r)
    listed: dict[str, list[dict[str, Any]]] = {}
    for server, name, notes in rows:
        listed.setdefault(server, []).append({"name": name, "annotations": decoded(notes)})
    return McpLiveTools(specs, listed or None, allow_side_effects=args.allow_side_effects)


@contextmanager
def progress_bars(config: ReplayConfig, todo: dict[str, int], quiet: bool) -> Iterator[Progress]:
    """A `progress(candidate, finished, total)` callback: rich bars on a terminal, else a
    line per candidate every few seconds and when it finishes; with `quiet`, nothing."""
    if quiet:
        yield lambda name, finished, total: None
        return
    if sys.stderr.isatty():
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        bars = Progress(
            "[bold]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=False,
        )
        tasks = {
            c.name: bars.add_task(c.name, total=todo.get(c.name, 0)) for c in config.candidates
        }
        with bars:
            yield lambda name, finished, total: bars.update(
                tasks[name], completed=finished, total=total
            )
        return
    last: dict[str, float] = {}

    def line(name: str, finished: int, total: int) -> None:
        now = time.monotonic()
        if finished == total or now - last.get(name, 0.0) >= PLAIN_EVERY_S:
            last[name] = now
            print(f"replay: {name}: {finished}/{total} cells", file=sys.stderr, flush=True)

    yield line


def cmd_replay(args: argparse.Namespace) -> int:
    """Re-send captured sessions or cases to candidate models, resumably, then grade them."""
    from toolproxy.replay.engine import done_in_plan, plan_cells

    config, repeats = load_config(args.config), args.repeats
    if args.suite:
        args.cases = [*args.cases, suite_path(args.suite)]
        if repeats is None and "repeats" not in config.model_fields_set:
            repeats = SUITE_REPEATS
    config = select_config(config, args.candidate, repeats)
    run = args.run or f"{args.config.stem}-{datetime.now(UTC):%Y%m%dT%H%M%S}"
    if not args.cases and not Path(args.capture).exists():  # replaying traffic: it must exist
        raise UserError(f"no capture at {args.capture}: record one first, or check --capture")
    capture = store.init_capture(args.capture)
    with paused_gc():
        items, cases, notes = plan_items(args, capture)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if not items:
        raise UserError("nothing to replay: no captured turn or case matched")
    keys = {c.name: resolve_key(c) for c in config.candidates}
    live = build_live_tools(args, capture) if args.tools == "live" else None
    done, server_tools = read_state(capture, run, config)
    todo = {name: len(cells) for name, cells in plan_cells(config, items, done).items()}
    resumed, elsewhere = done_in_plan(config, items, done)
    print(
        f"replay {run}: {len(items)} item(s) x {len(config.candidates)} candidate(s) x "
        f"k={config.repeats}; {sum(todo.values())} cell(s) to play"
        + (f", {len(resumed)} already done" if resumed else ""),
        file=sys.stderr,
    )
    if elsewhere:  # kept in the run, left out of this summary
        print(
            f"note: run {run} also holds {counted(elsewhere, 'cell')} of items this plan does "
            "not replay (other cases or turns, or repeats past k): kept, not summed here",
            file=sys.stderr,
        )
    given = getattr(args, "workers", None)
    workers = 1 if live is not None else count_workers(given, sum(todo.values()), usable_cpus())
    playing = Playing(capture, run, config, items, done, server_tools, todo, args)
    try:
        with frozen_gc():  # the plan lives as long as the play: collections need not walk it
            if workers > 1:
                briefs = play_in_workers(playing, workers)
            else:
                briefs = play_here(playing, keys, live)
    except KeyboardInterrupt:
        print(f"\n{resume_hint(args, run)}", file=sys.stderr)
        return 130
    played = len(briefs)
    if resumed:  # the cells of this plan finished before are read back for the summary
        old = [c for c in load_cells(capture, run) if (c.candidate, c.item_id, c.repeat) in resumed]
        briefs += [brief(c) for c in old]
    if live is not None and live.refused:
        for name, why in sorted(live.refused.items()):
            print(f"note: live tool {name} not run: {why}", file=sys.stderr)
    grades: dict[str, list[GradeRow]] = {}
    if not args.no_grade:
        grades = grade_replay(
            capture, run, items, [c.name for c in config.candidates], config.repeats, cases
        )
    summary = summarize(capture, run, config, items, grades, briefs)
    baseline = report_baseline(config, run, grades)
    command = report_command(capture, run, config, grades, baseline)
    notes = failure_notes(config, briefs) + hint_notes(capture, grades)
    # nothing came back from any candidate (a dead endpoint, a wrong URL or key): a script
    # must not carry on as if there were results
    code = 1 if briefs and all(b.status == "failed" for b in briefs) else 0
    if args.json:
        print(
            json.dumps(
                {"run": run, "played": played, "summary": summary, "report": command,
                 "failures": notes}, indent=2,
            )
        )  # fmt: skip
        return code
    print(f"\nreplay run {run} in {capture}\n")
    print(render_summary(summary))
    for note in notes:
        print(f"toolproxy replay: {note}", file=sys.stderr)
    if command:
        print(f"\nnext: {command}")
    print(f"diffs: toolproxy replay-diff {run} -c {capture} --changed")
    return code


def resume_hint(args: argparse.Namespace, run: str) -> str:
    """What to type to go on with an interrupted run (the cells finished are kept)."""
    again = ["toolproxy", "replay", str(args.config), "--run", run, "-c", str(args.capture)]
    suite = getattr(args, "suite", None)
    if suite:  # its file was added to the cases: name the suite, whose k is 3
        again += ["--suite", suite]
    given = args.cases[:-1] if suite else args.cases
    again += [a for c in given for a in ("--cases", str(c))]
    if args.repeats:
        again += ["--repeats", str(args.repeats)]
    line = " ".join(shlex.quote(a) for a in again)
    return f"replay {run} interrupted; the cells already played are kept. To go on: {line}"


@dataclass(frozen=True)
class Playing:
    """What playing a run needs, however it is played."""

    capture: Path
    run: str
    config: ReplayConfig
    items: list[ReplayItem]
    done: set[tuple[str, str, int]]  # cells the store already has
    server_tools: list[tuple[str, str, Any]]
    todo: dict[str, int]  # cells to play, per candidate
    args: argparse.Namespace


def play_here(
    p: Playing, keys: dict[str, str | None], live: McpLiveTools | None
) -> list[CellBrief]:
    """Play the cells to play in this process (`--workers 1`, `--tools live`); their briefs."""
    from toolproxy.replay.engine import run_matrix
    from toolproxy.replay.feedback import make_check

    sink = StoreSink(
        p.capture,
        p.run,
        f"{writer_id(p.run)}-{os.getpid()}-{secrets.token_hex(3)}",
        candidates=p.config.candidates,
        items=p.items,
        secrets=[k for k in keys.values() if k],
        server_tools=p.server_tools,
        stream=p.config.stream,
    )
    played: list[CellResult] = []

    async def play(progress: Progress) -> list[CellResult]:
        check = make_check(p.server_tools)
        args = (p.config, p.items, p.run, sink, p.done, keys, p.args.tools)
        if live is None:
            return await run_matrix(*args, None, check, progress)
        async with live:  # MCP sessions live in this event loop and close with it
            return await run_matrix(*args, live, check, progress)

    try:
        with progress_bars(p.config, p.todo, p.args.no_progress) as progress:
            played = asyncio.run(play(progress))
    finally:
        sink.close()
    return [brief(r, sink.scrub) for r in played]


def play_in_workers(p: Playing, workers: int) -> list[CellBrief]:
    """Play the cells to play over `workers` processes (see `toolproxy.replay.workers`);
    their briefs, as the workers sent them back."""
    from toolproxy.replay.engine import plan_cells
    from toolproxy.replay.shares import jobs_for
    from toolproxy.replay.workers import Workers

    cells = plan_cells(p.config, p.items, p.done)
    jobs = jobs_for(p.capture, p.run, p.config, cells, workers, p.server_tools)
    # started before the progress bars: rich's refresh thread would rule out forking
    with Workers(jobs) as started:
        how = "forked" if started.forked else "spawned"
        print(f"replay {p.run}: {len(jobs)} worker process(es), {how}", file=sys.stderr)
        with progress_bars(p.config, p.todo, p.args.no_progress) as progress:
            try:
                return started.follow(progress, p.todo)
            except RuntimeError as exc:
                again = f"run again with --run {p.run} to play the rest"
                raise UserError(f"{exc}; {again}") from None
