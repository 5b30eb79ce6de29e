"""The end-of-replay summary: one row per candidate, from each cell's `CellBrief`. Pure.

A brief is what the summary needs of a finished cell (status, closed-loop retries,
whether corrections recovered, TTFT/TPS of its turns). The cells played now are briefed
where they were played (this process, or each worker, which sends its briefs back when
it ends); the cells a resumed run had already finished are briefed from the store. So the
summary never reads back what this run just wrote.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from toolproxy.grade.metrics import ratio
from toolproxy.grade.rows import GradeRow
from toolproxy.grade.vendor import mean
from toolproxy.replay.model import CellResult, ReplayConfig


class CellBrief(BaseModel):
    """What the summary keeps of one finished cell."""

    candidate: str
    status: str = Field(description="completed, diverged or failed")
    retry_count: int = 0
    recovered: bool | None = None
    ttft_ms: list[float] = Field(default_factory=list, description="per turn, where measured")
    tps: list[float] = Field(default_factory=list, description="per turn, where measured")
    error_kind: str | None = Field(default=None, description="a failed cell's last error")
    error: str | None = None


def brief(cell: CellResult, scrub: Callable[[str | None], str | None] | None = None) -> CellBrief:
    """The brief of a finished cell; `scrub` takes the candidates' keys out of its error
    (`StoreSink.scrub`: a provider may quote the key it refused; a cell read back from
    the store was scrubbed when written)."""
    return CellBrief(
        candidate=cell.candidate,
        status=cell.status,
        retry_count=cell.retry_count,
        recovered=cell.recovered,
        ttft_ms=[t.ttft_ms for t in cell.turns if t.ttft_ms is not None],
        tps=[t.tps for t in cell.turns if t.tps is not None],
        error_kind=cell.error_kind,
        error=scrub(cell.error) if scrub else cell.error,
    )


def failure_notes(config: ReplayConfig, briefs: Iterable[CellBrief]) -> list[str]:
    """A line per candidate with failed cells: how many, and the most common error (a dead
    endpoint fails every cell the same way: this says which, and where it was sent)."""
    notes = []
    for cand in config.candidates:
        own = [b for b in briefs if b.candidate == cand.name]
        failed = [b for b in own if b.status == "failed"]
        if not failed:
            continue
        kinds = Counter(b.error_kind or "unknown" for b in failed)
        kind, _ = kinds.most_common(1)[0]
        example = next((b.error for b in failed if (b.error_kind or "unknown") == kind), None)
        why = f"{kind}: {example}" if example else kind
        hint = f"; is {cand.base_url} up?" if kind in ("connection", "timeout") else ""
        notes.append(f"{cand.name}: {len(failed)} of {len(own)} cells failed, mostly {why}{hint}")
    return notes


def candidate_rows(
    config: ReplayConfig,
    items: int,
    briefs: Iterable[CellBrief],
    pass_rates: dict[str, float | None],
) -> list[dict[str, Any]]:
    """One summary row per candidate of `config` (`items`: how many items were planned;
    `pass_rates`: per candidate name, None when nothing was graded)."""
    by_name: dict[str, list[CellBrief]] = {c.name: [] for c in config.candidates}
    for b in briefs:
        by_name.setdefault(b.candidate, []).append(b)
    rows = []
    for cand in config.candidates:
        own = by_name[cand.name]
        needed = [b.recovered for b in own if b.recovered is not None]
        rows.append(
            {
                "candidate": cand.name,
                "model": cand.model,
                "cells": f"{len(own)}/{items * config.repeats}",
                "completed": sum(b.status == "completed" for b in own),
                "diverged": sum(b.status == "diverged" for b in own),
                "failed": sum(b.status == "failed" for b in own),
                "retries": sum(b.retry_count for b in own),
                "recovered": f"{sum(needed)}/{len(needed)}" if needed else "",
                "pass_rate": pass_rates.get(cand.name),
                "ttft_ms": mean([v for b in own for v in b.ttft_ms]),
                "tps": mean([v for b in own for v in b.tps]),
            }
        )
    return rows


def pass_rate(rows: Sequence[GradeRow] | None) -> float | None:
    """passed / graded (None: nothing graded)."""
    graded = [r for r in rows or [] if not r.not_graded]
    return ratio(sum(r.passed for r in graded), len(graded))
