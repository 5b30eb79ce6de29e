"""Grading a replay run with the same grader as recorded traffic, one run per candidate.

Expectations: the `--cases` given, or, for captured traffic, the recorded calls accepted
as they are (`grade.labeling.cases_from_capture` over the replayed sessions, text turns
included as `no_call` cases): one case per recorded exchange, i.e. per step.

Runs written to `grades` (one segment write each):

- `<run>:<candidate>`, `source = replay:<candidate>`: per cell and per step that has a
  case, the candidate's first attempt at that step (before any closed-loop correction),
  read back from the replayed exchange like any recorded one.
- `<run>:recorded`, `source = capture`: the recorded exchange of each case, for the
  production model's row in `toolproxy report`.

Repeats: one GradeRow per (case, repeat), `case_id = "<case id>#<repeat>"` (0-based). The
recorded run repeats its one observation under the same k ids, so the report's vendor
metrics (trigger P/R/F1, which pair runs by case id) compare every candidate repeat with
production, and pass rates are not skewed. A step the candidate never reached (the cell
diverged or failed earlier) is `not_graded` with reason `no_exchange: not reached ...`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolproxy import store
from toolproxy.grade.labeling import LabelFilters, cases_from_capture
from toolproxy.grade.model import Case, Observation
from toolproxy.grade.observe import Ungradable, load_observations
from toolproxy.grade.rows import GradeRow
from toolproxy.grade.runner import Grading, grades_batch, load_server_tools, written_by
from toolproxy.replay.compare import first_attempts
from toolproxy.replay.model import RECORDED, CellResult, ReplayItem
from toolproxy.store.segments import SegmentWriter


@dataclass(frozen=True)
class StepCase:
    """A case attached to one step of one item."""

    item_id: str
    step: int
    case: Case


def grade_run_name(run: str, who: str) -> str:
    """`<run>:<candidate>`, or `<run>:recorded` for the production model."""
    return f"{run}:{who}"


def repeat_id(case_id: str, repeat: int) -> str:
    """The case id of one repeat in a replay grading run."""
    return f"{case_id}#{repeat}"


def attach_cases(items: Sequence[ReplayItem], cases: Iterable[Case]) -> list[StepCase]:
    """Pair cases with steps: by `item.case_id` (cases replayed as items, step 0), else by
    the recorded exchange id of a step."""
    by_id = {c.id: c for c in cases}
    by_exchange = {c.exchange_id: c for c in by_id.values() if c.exchange_id}
    found: list[StepCase] = []
    for item in items:
        if item.case_id is not None and item.case_id in by_id:
            found.append(StepCase(item.item_id, 0, by_id[item.case_id]))
            continue
        for index, step in enumerate(item.steps):
            case = by_exchange.get(step.exchange_id) if step.exchange_id else None
            if case is not None:
                found.append(StepCase(item.item_id, index, case))
    return found


def recorded_cases(capture: Path, items: Sequence[ReplayItem]) -> list[Case]:
    """The recorded calls of the items' exchanges as cases that accept them as made."""
    sessions = sorted({i.session_id for i in items if i.session_id})
    wanted = {s.exchange_id for i in items for s in i.steps if s.exchange_id}
    if not wanted:
        return []
    cases = cases_from_capture(capture, LabelFilters(sessions=sessions, no_calls=True))
    return [c for c in cases if c.exchange_id in wanted]


def load_cells(capture: Path | str, run: str) -> list[CellResult]:
    """The run's finished cells (one per cell: the latest row wins if a cell appears twice)."""
    from toolproxy.store.queries.replays import cells as cell_rows

    with store.reading(capture) as r:
        rows = cell_rows(r, run)
    cells: dict[tuple[str, str, int], CellResult] = {}
    for row in rows:
        data = {k: _loads(v) for k, v in row.items()}
        cell = CellResult.model_validate({k: v for k, v in data.items() if v is not None})
        cells[(cell.candidate, cell.item_id, cell.repeat)] = cell
    return list(cells.values())


def grade_candidate(
    grading: Grading,
    cells: Sequence[CellResult],
    step_cases: Sequence[StepCase],
    observations: Mapping[str, Observation | Ungradable],
    source: str,
) -> list[GradeRow]:
    """One candidate's rows: per cell, per step case, its first attempt graded. Pure."""
    by_item: dict[str, list[StepCase]] = {}
    for sc in step_cases:
        by_item.setdefault(sc.item_id, []).append(sc)
    rows: list[GradeRow] = []
    for cell in sorted(cells, key=lambda c: (c.item_id, c.repeat)):
        turns = first_attempts(cell)
        for sc in by_item.get(cell.item_id, []):
            case = sc.case.model_copy(update={"id": repeat_id(sc.case.id, cell.repeat)})
            turn = turns.get(sc.step)
            observed: Observation | Ungradable
            if turn is None:
                where = f" at step {cell.diverged_at}" if cell.diverged_at is not None else ""
                observed = Ungradable(
                    kind="no_exchange",
                    reason=f"not reached: the replay {cell.status}{where}",
                )
            else:
                observed = observations.get(turn.exchange_id) or Ungradable(
                    kind="no_exchange", reason=f"exchange {turn.exchange_id} is not in the capture"
                )
            rows.append(grading.grade(case, observed).model_copy(update={"source": source}))
    return rows


def grade_recorded(
    grading: Grading,
    step_cases: Sequence[StepCase],
    observations: Mapping[str, Observation | Ungradable],
    repeats: int,
) -> list[GradeRow]:
    """The production model's rows: each case's recorded exchange, under the k repeat ids."""
    rows: list[GradeRow] = []
    for sc in step_cases:
        observed: Observation | Ungradable = Ungradable(
            kind="needs_replay", reason="the case has no recorded exchange"
        )
        if sc.case.exchange_id:
            observed = observations.get(sc.case.exchange_id) or Ungradable(
                kind="no_exchange", reason=f"exchange {sc.case.exchange_id} is not in the capture"
            )
        for repeat in range(repeats):
            case = sc.case.model_copy(update={"id": repeat_id(sc.case.id, repeat)})
            rows.append(grading.grade(case, observed))
    return rows


def grade_replay(
    capture: Path,
    run: str,
    items: Sequence[ReplayItem],
    candidates: Sequence[str],
    repeats: int,
    cases: Sequence[Case] | None = None,
) -> dict[str, list[GradeRow]]:
    """Grade every candidate of a replay run and the recorded model; store and return the
    rows by grading-run name. `cases`: the expectations (None: the recorded calls)."""
    expectations = list(cases) if cases is not None else recorded_cases(capture, items)
    step_cases = attach_cases(items, expectations)
    cells = load_cells(capture, run)
    ids = {t.exchange_id for c in cells for t in first_attempts(c).values()}
    ids |= {sc.case.exchange_id for sc in step_cases if sc.case.exchange_id}
    observations = load_observations(capture, ids)
    graded_at = datetime.now(UTC).isoformat()
    server_tools = load_server_tools(capture)
    runs: dict[str, list[GradeRow]] = {}
    for name in candidates:
        grading = Grading(grade_run_name(run, name), graded_at, None, server_tools)
        own = [c for c in cells if c.candidate == name]
        runs[grading.run] = grade_candidate(
            grading, own, step_cases, observations, f"replay:{name}"
        )
    if any(sc.case.exchange_id for sc in step_cases):
        grading = Grading(grade_run_name(run, RECORDED), graded_at, None, server_tools)
        runs[grading.run] = grade_recorded(grading, step_cases, observations, repeats)
    write_grades(capture, runs)
    return runs


def write_grades(capture: Path, runs: Mapping[str, Sequence[GradeRow]]) -> None:
    """Each run's rows in one segment write of its own (a run is stored whole or not), with
    their summary (`store.gradewrites`)."""
    writer = SegmentWriter(
        capture, f"grade-{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
    )
    for run, rows in runs.items():
        if rows:
            data = writer.encode("grades", [r.as_row() for r in rows])
            writer.write_encoded(grades_batch(writer, data, written_by(run, rows)))


def _loads(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
