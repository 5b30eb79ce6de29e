"""toolproxy.capture.link: MCP tools/call linked to model tool calls; MCP sessions."""

from __future__ import annotations

import itertools

from toolproxy.capture.link import Linker, ModelCall
from toolproxy.records import McpMessage, ToolCall


def calls(*specs: tuple[str, object, str]) -> list[ToolCall]:
    """ToolCalls from (name, arguments, call_id)."""
    return [
        ToolCall(index=i, call_id=cid, name=name, arguments=args, arguments_raw="")
        for i, (name, args, cid) in enumerate(specs)
    ]


def counter() -> Linker:
    ids = itertools.count(1)
    return Linker(new_id=lambda: f"s{next(ids)}")


def mcp_call(name: str, arguments: object, session: str | None = "m1") -> McpMessage:
    return McpMessage(
        position=0,
        direction="client",
        mcp_session_id=session,
        rpc_id="1",
        method="tools/call",
        tool_name=name,
        arguments=arguments,
    )


def test_links_prefixed_model_names_to_the_server_tool() -> None:
    linker = Linker(servers=["weather"])
    linker.remember("ex1", "A", calls(("weather__get_weather", {"city": "Paris"}, "c1")))
    assert linker.link("get_weather", {"city": "Paris"}) == ModelCall(
        "ex1", "c1", "A", "weather__get_weather", '{"city":"Paris"}'
    )
    assert len(linker) == 0
    assert linker.link("get_weather", {"city": "Paris"}) is None  # linked at most once


def test_canonical_arguments_key_order_does_not_matter() -> None:
    linker = Linker()
    linker.remember("ex1", "A", calls(("mcp__w__f", {"a": 1, "b": [1, 2]}, "c1")))
    assert linker.link("f", {"b": [1, 2], "a": 1}) is not None


def test_same_arguments_twice_links_first_in_first_out() -> None:
    linker = Linker()
    linker.remember("ex1", "A", calls(("get_weather", {"city": "Oslo"}, "c1")))
    linker.remember("ex2", "B", calls(("get_weather", {"city": "Oslo"}, "c2")))
    first = linker.link("get_weather", {"city": "Oslo"})
    second = linker.link("get_weather", {"city": "Oslo"})
    assert (first and first.call_id, second and second.call_id) == ("c1", "c2")


def test_different_arguments_or_names_do_not_link() -> None:
    linker = Linker()
    linker.remember("ex1", "A", calls(("get_weather", {"city": "Oslo"}, "c1")))
    assert linker.link("get_weather", {"city": "Paris"}) is None
    assert linker.link("get_time", {"city": "Oslo"}) is None
    assert linker.link("eather", {"city": "Oslo"}) is None  # not a separator-bounded suffix
    assert len(linker) == 1


def test_a_name_match_skips_older_calls_of_other_tools_with_equal_arguments() -> None:
    linker = Linker(servers=["srv"])
    linker.remember("ex1", "A", calls(("search", {}, "c1"), ("srv__ping", {}, "c2")))
    found = linker.link("ping", None)  # absent MCP arguments are {}
    assert found is not None and found.call_id == "c2"
    assert len(linker) == 1


def test_explicit_session_restricts_candidates() -> None:
    linker = Linker()
    linker.remember("ex1", "A", calls(("get_weather", {"city": "Oslo"}, "c1")))
    linker.remember("ex2", "B", calls(("get_weather", {"city": "Oslo"}, "c2")))
    found = linker.link("get_weather", {"city": "Oslo"}, session_id="B")
    assert found is not None and found.call_id == "c2"
    assert linker.link("get_weather", {"city": "Oslo"}, session_id="B") is None
    assert linker.link("get_weather", {"city": "Oslo"}, session_id="C") is None


def test_calls_without_name_or_with_unparsed_arguments_are_not_remembered() -> None:
    linker = Linker()
    bad = ToolCall(index=0, name="f", arguments_raw="{", parse_error="cut")
    nameless = ToolCall(index=1, name=None, arguments={}, arguments_raw="{}")
    linker.remember("ex1", "A", [bad, nameless])
    assert len(linker) == 0


def test_memory_is_bounded_oldest_forgotten_first() -> None:
    linker = Linker(limit=3)
    for i in range(5):
        linker.remember(f"ex{i}", "A", calls(("f", {"i": i}, f"c{i}")))
    assert len(linker) == 3
    assert linker.link("f", {"i": 0}) is None
    assert linker.link("f", {"i": 1}) is None
    found = linker.link("f", {"i": 4})
    assert found is not None and found.exchange_id == "ex4"
    # the arguments index shrinks with the calls
    assert len(linker._by_arguments) == 2


def test_place_initialize_starts_a_session_the_mcp_session_keeps() -> None:
    linker = counter()
    init = McpMessage(position=0, direction="client", method="initialize", rpc_id="0")
    assert linker.place([init], "mcp-1", None) == ("s1", "new")
    assert linker.place([], "mcp-1", None) == ("s1", "mcp_session")
    assert linker.place([], "mcp-2", None) == ("s2", "new")
    assert linker.place([], None, None) == ("s3", "new")


def initialize(server: str) -> McpMessage:
    return McpMessage(
        position=0,
        direction="client",
        rpc_id="0",
        method="initialize",
        result={"serverInfo": {"name": server, "version": "1"}},
    )


def test_place_links_tools_call_into_the_model_session() -> None:
    linker = counter()
    assert linker.place([initialize("w")], "mcp-1", None) == ("s1", "new")
    linker.remember("model-ex", "model-session", calls(("w__get_weather", {"c": 1}, "call_7")))
    row = mcp_call("get_weather", {"c": 1})
    assert linker.place([row], "mcp-1", None) == ("model-session", "linked")
    assert (row.linked_exchange_id, row.linked_call_id) == ("model-ex", "call_7")
    # the MCP session keeps its own session for what is not linked
    again = mcp_call("get_weather", {"c": 1})
    assert linker.place([again], "mcp-1", None) == ("s1", "mcp_session")
    assert again.linked_exchange_id is None


def test_place_explicit_header_wins_and_restricts_linking() -> None:
    linker = counter()
    linker.remember("ex-a", "A", calls(("f", {}, "ca")))
    other = mcp_call("f", {})
    assert linker.place([other], "mcp-9", "B") == ("B", "header")
    assert other.linked_call_id is None
    # the MCP session first seen under the header stays in it
    assert linker.place([], "mcp-9", None) == ("B", "mcp_session")
    mine = mcp_call("f", {})
    assert linker.place([mine], "mcp-9", "A") == ("A", "header")
    assert mine.linked_call_id == "ca"


def test_place_ignores_server_rows_and_other_methods() -> None:
    linker = counter()
    linker.remember("ex", "A", calls(("f", {}, "c")))
    server = mcp_call("f", {})
    server.direction = "server"
    listing = McpMessage(position=1, direction="client", method="tools/list")
    assert linker.place([server, listing], None, None) == ("s1", "new")
    assert len(linker) == 1


def test_place_batch_links_each_call_and_takes_the_first_session() -> None:
    linker = counter()
    linker.remember("ex1", "A", calls(("f", {"n": 1}, "c1")))
    linker.remember("ex2", "B", calls(("f", {"n": 2}, "c2")))
    rows = [mcp_call("f", {"n": 2}), mcp_call("f", {"n": 1})]
    assert linker.place(rows, "m", None) == ("B", "linked")
    assert [r.linked_call_id for r in rows] == ["c2", "c1"]


def test_mcp_sessions_are_bounded() -> None:
    linker = Linker(sessions_limit=2, new_id=iter(["a", "b", "c", "d"]).__next__)
    for mcp_id in ("m1", "m2", "m3"):
        linker.place([], mcp_id, None)
    assert linker.place([], "m1", None) == ("d", "new")
    assert linker.place([], "m3", None) == ("c", "mcp_session")


def test_an_unknown_prefix_does_not_link() -> None:
    linker = Linker()
    linker.remember("ex1", "A", calls(("spotify_play", {}, "c1")))
    assert linker.link("play", {}) is None
    linker.place([initialize("spotify")], None, None)
    assert linker.link("play", {}) is not None
