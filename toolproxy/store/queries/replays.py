"""What replay reads back: the cells a run finished, its per-call diffs, and the recorded
model's numbers for the comparison table."""

from __future__ import annotations

from typing import Any

from toolproxy.store.filters import in_ids
from toolproxy.store.reader import Reader


def done_cells(r: Reader, run: str) -> set[tuple[str, str, int]]:
    """(candidate, item id, repeat) of every cell of `run` already in the store."""
    return {
        (c, i, int(n))
        for c, i, n in r.rows(
            "SELECT DISTINCT candidate, item_id, repeat FROM replay_cells WHERE run = ?", [run]
        )
    }


def played_targets(r: Reader, run: str) -> dict[str, set[tuple[str, str, int, str, str]]]:
    """Per candidate of `run`, where its played cells went: (scheme, host, port, path,
    model requested) of each cell's first exchange."""
    found: dict[str, set[tuple[str, str, int, str, str]]] = {}
    for candidate, *target in r.rows(
        "SELECT DISTINCT c.candidate, e.scheme, e.host, e.port, e.path, e.model_requested "
        "FROM replay_cells c JOIN exchanges e ON e.exchange_id = c.first_exchange_id "
        "WHERE c.run = ?",
        [run],
    ):
        scheme, host, port, path, model = target
        found.setdefault(candidate, set()).add((scheme, host, int(port), path, model or ""))
    return found


def cell_count(r: Reader, run: str) -> int:
    return int(r.scalar("SELECT count(*) FROM replay_cells WHERE run = ?", [run]) or 0)


def cells(r: Reader, run: str) -> list[dict[str, Any]]:
    """The run's cell rows (every `replay_cells` column, JSON as stored), oldest first."""
    names, rows = r.named("SELECT * FROM replay_cells WHERE run = ? ORDER BY finished_at", [run])
    return [dict(zip(names, row, strict=True)) for row in rows]


def diffs(r: Reader, run: str, candidates: list[str], changed_only: bool) -> list[dict[str, Any]]:
    """The run's per-call diffs (only `candidates` when given; only calls that changed
    tool or arguments or earned a label with `changed_only`), in replay order."""
    where = ["run = $run"]
    params: dict[str, Any] = {"run": run}
    if candidates:
        where.append("list_contains($candidates, candidate)")
        params["candidates"] = candidates
    if changed_only:
        where.append("(NOT same_tool OR NOT same_arguments OR label IS NOT NULL)")
    names, rows = r.named(
        f"SELECT * FROM replay_diffs WHERE {' AND '.join(where)} "
        'ORDER BY candidate, item_id, repeat, step, "index"',
        params,
    )
    return [dict(zip(names, row, strict=True)) for row in rows]


def recorded_speed(r: Reader, exchange_ids: list[str]) -> list[tuple[str | None, Any, Any]]:
    """(model, ttfb_ms, decode_tps) of the recorded exchanges a replay re-sent."""
    return r.rows(
        "SELECT coalesce(model_returned, model_requested), ttfb_ms, decode_tps FROM exchanges "
        f"WHERE {in_ids('exchange_id', 'ids')}",
        {"ids": exchange_ids},
    )


def runs(r: Reader) -> list[tuple[str, int, int, int, int, str, str]]:
    """Every replay run, oldest first: (run, candidates, cells, completed, failed, first
    finished, last finished), one row per cell (its latest)."""
    return r.rows(
        "SELECT run, count(DISTINCT candidate), count(*), "
        "count(*) FILTER (WHERE status = 'completed'), count(*) FILTER (WHERE status = 'failed'), "
        "min(finished_at), max(finished_at) FROM (SELECT * FROM replay_cells QUALIFY "
        "row_number() OVER (PARTITION BY run, candidate, item_id, repeat "
        "ORDER BY finished_at DESC) = 1) GROUP BY run ORDER BY min(finished_at), run"
    )
