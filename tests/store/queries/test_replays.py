"""toolproxy.store.queries.replays: what a replay run reads back."""

from __future__ import annotations

from toolproxy import store
from toolproxy.store.queries import replays


def test_done_cells_and_their_rows(seeded_capture):
    with store.reading(seeded_capture) as r:
        assert replays.done_cells(r, "rp") == {("cand", "s-a", 0), ("cand", "s-b", 0)}
        assert replays.cell_count(r, "rp") == 2
        assert replays.cell_count(r, "other") == 0
        rows = replays.cells(r, "rp")
    assert [(c["item_id"], c["status"]) for c in rows] == [("s-a", "completed"), ("s-b", "failed")]


def test_played_targets_are_where_each_candidate_s_cells_went(seeded_capture):
    # the failed cell has no exchange: it says nothing of where the candidate was
    with store.reading(seeded_capture) as r:
        assert replays.played_targets(r, "rp") == {
            "cand": {("http", "h", 80, "/v1/chat/completions", "cand-m")}
        }
        assert replays.played_targets(r, "other") == {}


def test_diffs_filtered_by_candidate_and_change(seeded_capture):
    with store.reading(seeded_capture) as r:
        every = replays.diffs(r, "rp", [], False)
        changed = replays.diffs(r, "rp", [], True)
        nobody = replays.diffs(r, "rp", ["someone-else"], False)
    assert [d["step"] for d in every] == [1, 2]
    assert [(d["step"], d["replayed_tool"], d["label"]) for d in changed] == [
        (2, "search", "wrong_tool")
    ]
    assert nobody == []


def test_recorded_speed_of_the_re_sent_exchanges(seeded_capture):
    with store.reading(seeded_capture) as r:
        assert replays.recorded_speed(r, ["a-0"]) == [("gpt-a-2026", 100.0, 50.0)]


def test_replay_runs_with_their_cell_counts(seeded_capture):
    with store.reading(seeded_capture) as r:
        ((run, candidates, cells, completed, failed, first, last),) = replays.runs(r)
    assert (run, candidates, cells, completed, failed) == ("rp", 1, 2, 1, 1)
    assert first < last
