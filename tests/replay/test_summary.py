"""toolproxy.replay.summary: the per-candidate summary rows from cell briefs (pure)."""

from __future__ import annotations

from toolproxy.replay.model import Candidate, CellResult, ReplayConfig, TurnRecord
from toolproxy.replay.summary import CellBrief, brief, candidate_rows, failure_notes, mean


def cand(name: str) -> Candidate:
    return Candidate(name=name, base_url="http://x/v1", model=f"{name}-model")


def test_brief_keeps_what_the_summary_needs():
    turns = [
        TurnRecord(step=0, attempt=0, exchange_id="e1", ttft_ms=10.0, tps=50.0),
        TurnRecord(step=0, attempt=1, exchange_id="e2"),
    ]
    cell = CellResult(
        run="r",
        candidate="a",
        item_id="i",
        repeat=0,
        finished_at="2026-11-22T00:00:00+00:00",
        status="completed",
        retry_count=1,
        recovered=True,
        turns=turns,
    )
    assert brief(cell) == CellBrief(
        candidate="a", status="completed", retry_count=1, recovered=True, ttft_ms=[10.0], tps=[50.0]
    )


def test_candidate_rows_count_per_candidate_in_config_order():
    config = ReplayConfig(candidates=[cand("b"), cand("a")], repeats=2)
    briefs = [
        CellBrief(candidate="a", status="completed", ttft_ms=[10.0, 30.0], tps=[5.0]),
        CellBrief(candidate="a", status="diverged", retry_count=2, recovered=False),
        CellBrief(candidate="a", status="failed", retry_count=1, recovered=True),
        CellBrief(candidate="gone", status="completed"),  # not in the config: no row
    ]
    rows = candidate_rows(config, 3, briefs, {"a": 0.5})
    assert [r["candidate"] for r in rows] == ["b", "a"]
    b, a = rows
    assert b == {
        "candidate": "b",
        "model": "b-model",
        "cells": "0/6",
        "completed": 0,
        "diverged": 0,
        "failed": 0,
        "retries": 0,
        "recovered": "",
        "pass_rate": None,
        "ttft_ms": None,
        "tps": None,
    }
    assert (a["cells"], a["completed"], a["diverged"], a["failed"]) == ("3/6", 1, 1, 1)
    assert (a["retries"], a["recovered"], a["pass_rate"]) == (3, "1/2", 0.5)
    assert (a["ttft_ms"], a["tps"]) == (20.0, 5.0)


def test_mean_ignores_unknown_values():
    assert mean([None, 1.0, 3.0]) == 2.0
    assert mean([None]) is None and mean([]) is None


def test_failure_notes_name_the_commonest_error_and_where_it_was_sent():
    config = ReplayConfig(candidates=[cand("down"), cand("flaky"), cand("fine")])
    refused = "connection lost: ConnectionRefusedError: [Errno 111]"
    briefs = [
        *[CellBrief(candidate="down", status="failed", error_kind="connection", error=refused)] * 3,
        CellBrief(candidate="flaky", status="failed", error_kind="server_error", error="HTTP 500"),
        CellBrief(candidate="flaky", status="failed", error_kind="server_error", error="HTTP 502"),
        CellBrief(candidate="flaky", status="failed", error_kind="timeout"),
        CellBrief(candidate="flaky", status="completed"),
        CellBrief(candidate="fine", status="diverged"),
    ]
    assert failure_notes(config, briefs) == [
        f"down: 3 of 3 cells failed, mostly connection: {refused}; is http://x/v1 up?",
        "flaky: 3 of 4 cells failed, mostly server_error: HTTP 500",
    ]
