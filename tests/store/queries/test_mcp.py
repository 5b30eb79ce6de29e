"""toolproxy.store.queries.mcp: what drift, budget, `mcp check` and pulls read."""

from __future__ import annotations

from tests.seeded import WEATHER, at
from toolproxy import store
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
