"""toolproxy.store.queries.mcp: what drift, budget, `mcp check` and pulls read."""

from __future__ import annotations

import pytest

from tests.builders import chat_exchange
from tests.seeded import WEATHER, CaptureRows, at, weather_tool
from toolproxy import store
from toolproxy.records import ToolCall
from toolproxy.store.queries import mcp


def test_the_servers_latest_tools(seeded_capture):
    with store.reading(seeded_capture) as r:
        assert mcp.server_tools(r) == [("weather", "get_weather", WEATHER)]
        assert mcp.definition_hashes(r) == [("weather", "get_weather", "def-1")]
        ((server, name, notes),) = mcp.tool_annotations(r)
        assert (server, name, "readOnlyHint" in notes) == ("weather", "get_weather", True)
        ((_, _, description, _, _),) = mcp.latest_tools(r, ["weather"])
        assert description == "Weather for a city"
        assert mcp.latest_tools(r, ["another"]) == []


def test_offered_versions_and_call_counts(seeded_capture):
    with store.reading(seeded_capture) as r:
        versions = mcp.offered_versions(r)
        counts = mcp.call_counts(r)
    weather = [v for v in versions if v[0] == "get_weather"]
    assert [(v[4], v[5], v[6]) for v in weather] == [(4, at(0), at(5))]
    assert [(n, k) for n, k, _, _ in counts] == [("get_weather", 2), ("search", 1)]


def test_calls_with_their_model_and_offered_tools(seeded_capture):
    with store.reading(seeded_capture) as r:
        calls, offered = mcp.calls_with_model(r, "s-b")
    ((call, model),) = calls
    assert (call.exchange_id, call.name, model) == ("b-0", "search", "claude-x")
    assert [(o.exchange_id, o.name) for o in offered] == [("b-0", "search")]


def test_model_requests_skip_other_traffic(seeded_capture):
    with store.reading(seeded_capture) as r:
        requests, offered = mcp.model_requests(r, None)
        only_a, _ = mcp.model_requests(r, "s-a")
    assert [x[0] for x in requests] == ["a-0", "a-1", "a-2", "b-0", "b-1", "c-0", "r-0"]
    assert [x[0] for x in only_a] == ["a-0", "a-1", "a-2"]
    assert len(offered) == 6


@pytest.fixture
def replayed_too(tmp_path):
    """A captured turn and two replayed ones (a candidate, k=2), each offering get_weather
    and calling it; and one captured reply whose text holds a lost call."""
    rows = CaptureRows()
    for eid, session, proxy in (
        ("x-0", "s-x", "p"),
        ("y-0", "replay:r:cand:s-x:0", "replay:r"),
        ("y-1", "replay:r:cand:s-x:1", "replay:r"),
    ):
        call = ToolCall(index=0, name="get_weather", arguments_raw='{"city": "Oslo"}')
        ex = chat_exchange(eid, session, at(len(eid)), proxy_id=proxy, model_requested="m")
        rows.turn(ex, calls=[call], offered=[weather_tool()])
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
    lost = chat_exchange("z-0", "replay:r:cand:s-z:0", at(9), proxy_id="replay:r")
    rows.turn(lost.model_copy(update={"assistant_text": text}), offered=[weather_tool()])
    return rows.write(tmp_path / "cap")


@pytest.mark.parametrize(
    ("origin", "exchanges"),
    [
        ("captured", ["x-0"]),
        ("replayed", ["y-0", "y-1", "z-0"]),
        ("any", ["x-0", "y-0", "y-1", "z-0"]),
    ],
)
def test_the_mcp_reads_keep_the_exchanges_of_an_origin(replayed_too, origin, exchanges):
    with store.reading(replayed_too) as r:
        requests, offered = mcp.model_requests(r, None, origin)
        assert [x[0] for x in requests] == exchanges
        assert sorted({o.exchange_id for o in offered}) == exchanges
        ((_, _, _, _, seen, _, _),) = mcp.offered_versions(r, origin)
        assert seen == len(exchanges)
        callers = [x for x in exchanges if x != "z-0"]
        assert [(n, k) for n, k, _, _ in mcp.call_counts(r, origin)] == [
            ("get_weather", len(callers))
        ]
        calls, tools = mcp.calls_with_model(r, None, origin)
        assert [c.exchange_id for c, _ in calls] == callers
        assert sorted({t.exchange_id for t in tools}) == callers
        texts, _ = mcp.texts_without_calls(r, None, origin)
        assert [t[0] for t in texts] == [x for x in exchanges if x == "z-0"]
