"""toolproxy.store.queries.exchanges: sessions and exchanges, filtered and keyset-paged, and
one exchange in full."""

from __future__ import annotations

import json

import pytest

from tests.seeded import at
from toolproxy import store
from toolproxy.store.filters import ExchangeFilter
from toolproxy.store.paging import Page, encode_cursor
from toolproxy.store.queries import exchanges


def walk(capture, fetch, limit):
    """Every row, one page of `limit` at a time, following the cursors."""
    seen, cursor, pages = [], None, 0
    while True:
        with store.reading(capture) as r:
            page = fetch(r, limit=limit, cursor=cursor)
        seen += page.items
        pages += 1
        if page.next_cursor is None:
            return seen, pages
        cursor = page.next_cursor


def test_sessions_come_most_recent_first_with_their_counts(seeded_capture):
    with store.reading(seeded_capture) as r:
        page = exchanges.sessions(r)
    assert [s.session_id for s in page.items] == ["s-m", "s-r", "s-c", "s-b", "s-a"]
    assert page.next_cursor is None
    a = page.items[-1]
    assert (a.exchanges, a.tool_calls, a.errors, a.input_tokens, a.output_tokens) == (
        3,
        2,
        0,
        30,
        15,
    )
    assert a.models == ["gpt-a-2026"]
    assert (a.first_seen, a.last_seen) == (at(0), at(2))
    b = next(s for s in page.items if s.session_id == "s-b")
    assert (b.errors, b.models) == (1, ["claude-x"])


def test_paging_sessions_one_at_a_time_visits_each_once_in_order(seeded_capture):
    rows, pages = walk(seeded_capture, exchanges.sessions, 1)
    assert [s.session_id for s in rows] == ["s-m", "s-r", "s-c", "s-b", "s-a"]
    assert pages == 5
    rows, pages = walk(seeded_capture, exchanges.sessions, 2)
    assert len(rows) == 5 and pages == 3


@pytest.mark.parametrize("order", sorted(exchanges.SESSION_ORDERS))
@pytest.mark.parametrize("descending", [True, False])
def test_sessions_sorted_by_any_column_page_like_one_sorted_list(seeded_capture, order, descending):
    _, key_of = exchanges.SESSION_ORDERS[order]
    with store.reading(seeded_capture) as r:
        every = exchanges.sessions(r, limit=100).items
    want = sorted(every, key=lambda s: (key_of(s), s.session_id), reverse=descending)

    def fetch(r, limit, cursor):
        return exchanges.sessions(r, limit=limit, cursor=cursor, order=order, descending=descending)

    for limit in (1, 2):
        rows, pages = walk(seeded_capture, fetch, limit)
        assert [s.session_id for s in rows] == [s.session_id for s in want]
        assert rows == want  # the same counts as the default order's aggregate


@pytest.mark.parametrize("order", ["last_seen", "exchanges"])
@pytest.mark.parametrize(
    "where", [ExchangeFilter(), ExchangeFilter(models=["claude-x"]), ExchangeFilter(text="nope")]
)
def test_a_counted_page_is_the_page_and_the_count_in_one_scan(seeded_capture, order, where):
    with store.reading(seeded_capture) as r:
        total = exchanges.count_sessions(r, where)
        cursor = None
        while True:
            page = exchanges.sessions(r, where, 2, cursor, order)
            counted, n = exchanges.sessions_counted(r, where, 2, cursor, order)
            assert (counted, n) == (page, total)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        if total:  # a cursor past the last session: no rows, the count still right
            last = exchanges.sessions(r, where, 100, None, order).items[-1]
            key_of = exchanges.SESSION_ORDERS[order][1]
            beyond = encode_cursor([key_of(last), last.session_id])
            assert exchanges.sessions_counted(r, where, 2, beyond, order) == (Page([], None), total)


def test_an_unknown_order_says_which_exist(seeded_capture):
    with store.reading(seeded_capture) as r, pytest.raises(ValueError, match="by: session_id"):
        exchanges.sessions(r, order="colour")


def test_counts_follow_the_filter(seeded_capture):
    weather = ExchangeFilter(tools=["get_weather"])
    with store.reading(seeded_capture) as r:
        assert exchanges.count_sessions(r) == 5
        assert exchanges.count_sessions(r, weather) == 1
        assert exchanges.count_exchanges(r) == 8
        assert exchanges.count_exchanges(r, weather) == 2
        (only,) = exchanges.sessions(r, weather).items
    assert (only.session_id, only.exchanges, only.tool_calls) == ("s-a", 2, 2)


def test_paging_exchanges_in_time_order(seeded_capture):
    rows, pages = walk(
        seeded_capture,
        lambda r, **kw: exchanges.exchanges(r, ExchangeFilter(origin="captured"), **kw),
        3,
    )
    assert [x.exchange_id for x in rows] == ["a-0", "a-1", "a-2", "b-0", "b-1", "c-0", "m-0"]
    assert pages == 3
    first = rows[0]
    assert (first.model, first.tool_calls, first.ttfb_ms, first.wire_format) == (
        "gpt-a-2026",
        1,
        100.0,
        "openai_chat",
    )


def test_one_exchange_in_full(seeded_capture):
    with store.reading(seeded_capture) as r:
        detail = exchanges.exchange_detail(r, "a-0")
        assert exchanges.exchange_detail(r, "nope") is None
    assert detail is not None
    assert detail.exchange.exchange_id == "a-0"
    assert detail.request["messages"]  # every column, bodies and headers included
    assert [(o.position, o.name) for o in detail.offered] == [(0, "get_weather"), (1, "search")]
    assert detail.offered[0].parameters["required"] == ["city"]  # decoded
    (call,) = detail.calls
    assert (call.call_id, call.arguments) == ("c1", {"city": "Paris"})
    (result,) = detail.results  # the result that answered this very call, not a-1's
    assert (result.result, result.result_exchange_id) == ("18C", "a-1")
    (mcp,) = detail.mcp
    assert (mcp.mcp_exchange_id, mcp.tool_name, mcp.linked_call_id) == ("m-0", "get_weather", "c1")
    assert mcp.arguments == {"city": "Paris"}


def test_a_reused_call_id_finds_its_own_result(seeded_capture):
    with store.reading(seeded_capture) as r:
        results = exchanges.call_results(r, ["a-0", "a-1"])
    assert [(x.exchange_id, x.result) for x in results] == [("a-0", "18C"), ("a-1", "sunny")]


def test_the_cli_listings(seeded_capture):
    with store.reading(seeded_capture) as r:
        names, rows = exchanges.session_or_exchange(r, "s-b")
        assert [row[names.index("exchange_id")] for row in rows] == ["b-0", "b-1"]
        # why an exchange failed is shown with it (a 4xx/5xx, a reset, a body not parsed)
        assert [row[names.index("error")] for row in rows] == [None, "upstream"]
        names, rows = exchanges.session_or_exchange(r, "c-0")
        assert [row[names.index("error")] for row in rows] == ["parse partial"]
        names, rows = exchanges.call_listing(r)
        assert [row[names.index("name")] for row in rows] == [
            "get_weather",
            "get_weather",
            "search",
        ]
        names, rows = exchanges.recent_sessions(r, 2)
        assert [row[names.index("session_id")] for row in rows] == ["s-m", "s-r"]


def test_details_of_a_session_in_one_batch(seeded_capture):
    with store.reading(seeded_capture) as r:
        found = exchanges.details(r, ["a-2", "a-0", "a-1", "nope"])
        assert exchanges.details(r, []) == []
    assert [d.exchange.exchange_id for d in found] == ["a-0", "a-1", "a-2"]  # time order
    assert [len(d.calls) for d in found] == [1, 1, 0]
    assert [m.exchange_id for m in found[0].mcp] == ["a-0"]
    assert found[2].request["assistant_text"] == "It is sunny in Rome"


def test_a_sessions_mean_latency_and_parse_failures(tmp_path):
    from tests.builders import chat_exchange
    from tests.seeded import CaptureRows

    rows = CaptureRows()
    rows.turn(chat_exchange("l-0", "s-l", at(0), latency_ms=100.0))
    rows.turn(chat_exchange("l-1", "s-l", at(1), latency_ms=300.0, parse_status="error"))
    rows.turn(chat_exchange("l-2", "s-l", at(2)))  # no latency recorded: not averaged
    capture = rows.write(tmp_path / "cap")
    with store.reading(capture) as r:
        (s,) = exchanges.sessions(r).items
    assert (s.mean_latency_ms, s.parse_failures, s.exchanges) == (200.0, 1, 3)


def test_known_ids_are_those_the_capture_holds(seeded_capture):
    with store.reading(seeded_capture) as r:
        some = [row[0] for row in r.rows("SELECT exchange_id FROM exchanges LIMIT 2")]
        assert exchanges.known_ids(r, [*some, "nosuch"]) == set(some)
        assert exchanges.known_ids(r, []) == set()


def test_offered_tools_decode_each_schema_once_and_share_it(seeded_capture):
    with store.reading(seeded_capture) as r:
        ids = [eid for (eid,) in r.rows("SELECT exchange_id FROM exchanges")]
        stored = r.rows(
            "SELECT exchange_id, position, parameters FROM tools_offered "
            "ORDER BY exchange_id, position"
        )
        rows = exchanges.offered_tools(r, ids)
    assert [(o.exchange_id, o.position) for o in rows] == [(e, p) for e, p, _ in stored]
    assert [o.parameters for o in rows] == [json.loads(t) for _, _, t in stored]
    by_text: dict[str, set[int]] = {}
    for o, (_, _, text) in zip(rows, stored, strict=True):
        by_text.setdefault(text, set()).add(id(o.parameters))
    assert any(len([1 for _, _, t in stored if t == text]) > 1 for text in by_text)  # shapes
    assert all(len(objects) == 1 for objects in by_text.values())
