"""Observations from store rows: pure building, and reading a real capture (DuckDB, temp dir)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.builders import chat_exchange
from tests.seeded import CaptureRows
from toolproxy import store
from toolproxy.grade.model import Case, Observation
from toolproxy.grade.observe import (
    Ungradable,
    build_observation,
    check_exchange,
    load_observations,
    observe_case,
)
from toolproxy.records import ToolCall, ToolOffered, schema_hash

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TIME = {"type": "object", "properties": {"tz": {"type": "string"}}}


def seed_exchange(
    capture: Any,
    exchange_id: str,
    calls: list[ToolCall] = (),  # type: ignore[assignment]
    offered: list[tuple[str, Any]] = (("get_weather", WEATHER),),  # type: ignore[assignment]
    **fields: Any,
) -> None:
    """Write one exchange with its calls and offered tools into a capture, as a proxy would."""
    values: dict[str, Any] = {
        "session_id": f"s-{exchange_id}",
        "started_at": T0 + timedelta(seconds=len(exchange_id)),
        "proxy_id": "p1",
        "host": "127.0.0.1",
        "status_code": 200,
        "model_requested": "gpt-req",
        "finish_reason": "tool_calls" if calls else "stop",
    }
    ex = chat_exchange(**(values | fields | {"exchange_id": exchange_id}))
    tools = [
        ToolOffered(position=i, name=n, parameters=p, schema_hash=schema_hash(p))
        for i, (n, p) in enumerate(offered)
    ]
    rows = CaptureRows()
    rows.turn(ex, calls=calls, offered=tools)
    rows.write(capture)


@pytest.fixture
def capture(tmp_path):
    return store.init_capture(tmp_path / "capture")


def test_build_observation_orders_calls_and_tools_and_decodes_json():
    exchange = {
        "exchange_id": "e1",
        "session_id": "s1",
        "model": "gpt-x",
        "finish_reason": "tool_calls",
        "parse_status": "ok",
    }
    calls = [
        {"index": 1, "call_id": "b", "name": "t2", "arguments_raw": "{}", "arguments": "{}"},
        {"index": 0, "call_id": "a", "name": "t1", "arguments_raw": '{"x', "parse_error": "cut"},
    ]
    offered = [
        {"position": 1, "name": "t2", "parameters": '{"type": "object"}'},
        {"position": 0, "name": "t1", "parameters": {"type": "object"}},
    ]
    obs = build_observation(exchange, calls, offered)
    assert obs == Observation(
        exchange_id="e1",
        session_id="s1",
        model="gpt-x",
        finish_reason="tool_calls",
        complete=True,
        calls=[
            ToolCall(index=0, call_id="a", name="t1", arguments_raw='{"x', parse_error="cut"),
            ToolCall(index=1, call_id="b", name="t2", arguments_raw="{}", arguments={}),
        ],
        offered=[
            {"name": "t1", "parameters": {"type": "object"}},
            {"name": "t2", "parameters": {"type": "object"}},
        ],
    )


def test_partial_parse_is_an_incomplete_observation_and_null_text_is_empty():
    exchange = {"exchange_id": "e", "parse_status": "partial"}
    obs = build_observation(exchange, [{"index": None, "arguments_raw": None}], [])
    assert obs.complete is False
    assert obs.calls[0].arguments_raw == "" and obs.calls[0].index == 0


@pytest.mark.parametrize(
    ("fields", "kind"),
    [
        ({"error_kind": "http_5xx", "status_code": 500}, "upstream_failed"),
        ({"error_kind": "timeout", "status_code": None}, "upstream_failed"),
        ({"error_kind": "connect_failed", "status_code": None}, "upstream_failed"),
        ({"status_code": 429}, "upstream_failed"),
        ({"error_kind": "connection_reset", "parse_status": "partial"}, "upstream_failed"),
        ({"error_kind": "stream_cut", "parse_status": "partial"}, "upstream_failed"),
        ({"parse_status": "error", "parse_error": "bad SSE"}, "not_parsed"),
        ({"parse_status": "unparsed", "wire_format": "unknown"}, "not_parsed"),
    ],
)
def test_exchanges_without_a_model_turn_are_ungradable(fields, kind):
    exchange = {"exchange_id": "e9", "status_code": 200, "parse_status": "ok"} | fields
    problem = check_exchange(exchange)
    assert problem is not None and problem.kind == kind and "e9" in problem.reason


@pytest.mark.parametrize(
    ("fields", "calls"),
    [
        ({"parse_status": "ok"}, 0),  # answered in text, or nothing: the checker's no_call
        ({"parse_status": "partial", "error_kind": "stream_cut"}, 1),  # truncation
        ({"parse_status": "partial", "error_kind": "connection_reset"}, 1),
        ({"parse_status": "partial", "error_kind": "timeout", "assistant_text": "It is"}, 0),
    ],
)
def test_exchanges_with_a_model_turn_are_gradable(fields, calls):
    assert check_exchange({"exchange_id": "e", "status_code": 200} | fields, calls) is None


def test_observe_case_says_why_there_is_nothing_to_grade():
    obs = Observation(exchange_id="e1")
    found = {"e1": obs}
    assert observe_case(Case(id="a", exchange_id="e1"), found) is obs
    replay = observe_case(Case(id="b", messages=[{"role": "user"}], tools=[]), found)
    assert isinstance(replay, Ungradable) and replay.kind == "needs_replay"
    assert "replay" in replay.reason
    missing = observe_case(Case(id="c", exchange_id="nope"), found)
    assert isinstance(missing, Ungradable) and missing.kind == "no_exchange"
    assert "nope" in missing.reason


def test_load_observations_reads_the_capture(capture):
    seed_exchange(
        capture,
        "ex-call",
        calls=[
            ToolCall(
                index=1,
                call_id="c2",
                name="get_time",
                arguments_raw='{"tz": "UTC"}',
                arguments={"tz": "UTC"},
            ),
            ToolCall(
                index=0,
                call_id="c1",
                name="get_weather",
                arguments_raw='{"city": "Pa',
                parse_error="unterminated string",
            ),
        ],
        offered=[("get_weather", WEATHER), ("get_time", TIME)],
        model_returned="gpt-ret",
        parse_status="partial",
        error_kind="stream_cut",
    )
    seed_exchange(capture, "ex-text", assistant_text="Sunny.")
    seed_exchange(capture, "ex-500", status_code=500, error_kind="http_5xx", parse_status="ok")
    seed_exchange(capture, "ex-other")
    got = load_observations(capture, ["ex-call", "ex-text", "ex-500", "ex-call", "absent"])
    assert set(got) == {"ex-call", "ex-text", "ex-500"}
    call = got["ex-call"]
    assert isinstance(call, Observation)
    assert call.model == "gpt-ret" and call.complete is False
    assert call.session_id == "s-ex-call" and call.finish_reason == "tool_calls"
    assert [(c.index, c.name, c.call_id) for c in call.calls] == [
        (0, "get_weather", "c1"),
        (1, "get_time", "c2"),
    ]
    assert call.calls[0].parse_error == "unterminated string" and call.calls[0].arguments is None
    assert call.calls[1].arguments == {"tz": "UTC"}
    assert call.offered == [
        {"name": "get_weather", "parameters": WEATHER},
        {"name": "get_time", "parameters": TIME},
    ]
    text = got["ex-text"]
    assert isinstance(text, Observation)
    assert text.calls == [] and text.model == "gpt-req" and text.complete is True
    failed = got["ex-500"]
    assert isinstance(failed, Ungradable) and failed.kind == "upstream_failed"


def test_load_observations_of_nothing_reads_nothing(tmp_path):
    assert load_observations(tmp_path / "not-even-a-capture", []) == {}
