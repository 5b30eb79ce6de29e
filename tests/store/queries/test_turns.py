"""toolproxy.store.queries.turns: the model turns labeling and replay planning read."""

from __future__ import annotations

from toolproxy import store
from toolproxy.store.filters import ExchangeFilter
from toolproxy.store.queries.turns import model_turns


def turns(capture, where, whole_sessions=False):
    with store.reading(capture) as r:
        return [(t.exchange_id, t.usable, t.matched) for t in model_turns(r, where, whole_sessions)]


def test_matching_turns_are_marked_usable_or_not(seeded_capture):
    where = ExchangeFilter(models=["claude-x"], origin="captured")
    assert turns(seeded_capture, where) == [("b-0", True, True), ("b-1", False, True)]


def test_whole_sessions_bring_the_rest_of_a_session_with_a_matched_usable_turn(seeded_capture):
    where = ExchangeFilter(exchanges=["a-1"], origin="captured")
    assert turns(seeded_capture, where) == [("a-1", True, True)]
    assert turns(seeded_capture, where, whole_sessions=True) == [
        ("a-0", True, False),
        ("a-1", True, True),
        ("a-2", True, False),
    ]
    failed_only = ExchangeFilter(exchanges=["b-1"], origin="captured")
    assert turns(seeded_capture, failed_only, whole_sessions=True) == [("b-1", False, True)]


def test_origin_bounds_the_sessions_too(seeded_capture):
    assert turns(seeded_capture, ExchangeFilter(origin="captured", sessions=["s-r"])) == []
    assert turns(seeded_capture, ExchangeFilter(origin="replayed")) == [("r-0", True, True)]


def test_model_turns_only(seeded_capture):
    where = ExchangeFilter(origin="captured", model_turns=True)
    assert [t for t, _, _ in turns(seeded_capture, where)] == ["a-0", "a-1", "a-2", "b-0", "c-0"]


def test_a_turn_carries_what_planning_converts(seeded_capture):
    with store.reading(seeded_capture) as r:
        (turn,) = model_turns(r, ExchangeFilter(exchanges=["a-0"]))
    assert (turn.model, turn.wire_format, turn.session_id) == ("gpt-a-2026", "openai_chat", "s-a")
    assert "Paris" in turn.messages
