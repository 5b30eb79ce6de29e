"""The spans of the shared seeded capture's sessions: one trace per session, a span per
model call and per tool execution, grades as events, ids stable across exports."""

from __future__ import annotations

import pytest

from toolproxy import store
from toolproxy.otel.spans import TraceSpec, session_trace, span_id_of, trace_id_of
from toolproxy.store.queries.exchanges import details
from toolproxy.store.queries.grades import exchange_grades
from toolproxy.store.rows import ExchangeGradeRow

SESSIONS = {"s-a": ["a-0", "a-1", "a-2"], "s-b": ["b-0", "b-1"], "s-m": ["m-0"]}


@pytest.fixture(scope="module")
def traces(seeded_capture) -> dict[str, TraceSpec]:
    out = {}
    with store.reading(seeded_capture) as r:
        for sid, ids in SESSIONS.items():
            out[sid] = session_trace(sid, details(r, ids), exchange_grades(r, ids))
    return out


def by_name(trace: TraceSpec, name: str):
    return [s for s in trace.spans if s.name == name]


def test_a_session_is_a_trace_with_a_root_span_covering_it(traces):
    t = traces["s-a"]
    root = t.spans[0]
    assert root.parent_id is None and root.name == "invoke_agent"
    assert t.trace_id == trace_id_of("s-a")
    assert all(s.parent_id == root.span_id for s in t.spans[1:])
    assert root.start_ns == min(s.start_ns for s in t.spans)
    assert root.end_ns == max(s.end_ns for s in t.spans)
    assert root.attributes["openinference.span.kind"] == "AGENT"
    assert root.attributes["session.id"] == "s-a"
    assert root.attributes["toolproxy.exchanges"] == 3
    assert root.attributes["input.value"] == "weather in Paris?"
    assert root.attributes["output.value"] == "It is sunny in Rome"


def test_one_span_per_model_call_with_gen_ai_and_openinference_attributes(traces):
    calls = by_name(traces["s-a"], "chat gpt-a-2026")
    assert [s.attributes["toolproxy.exchange_id"] for s in calls] == ["a-0", "a-1", "a-2"]
    a0 = calls[0].attributes
    assert a0["gen_ai.operation.name"] == "chat"
    assert a0["gen_ai.provider.name"] == "openai"
    assert a0["gen_ai.request.model"] == "gpt-a"
    assert a0["gen_ai.response.model"] == "gpt-a-2026"
    assert a0["gen_ai.usage.input_tokens"] == 10 and a0["gen_ai.usage.output_tokens"] == 5
    assert a0["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert a0["openinference.span.kind"] == "LLM"
    assert a0["llm.model_name"] == "gpt-a-2026"
    assert a0["llm.token_count.prompt"] == 10
    assert a0["llm.input_messages.0.message.role"] == "user"
    assert a0["llm.input_messages.0.message.content"] == "weather in Paris?"
    assert a0["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] == (
        "get_weather"
    )
    assert '"city":"Paris"' in str(
        a0["llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments"]
    )
    assert "get_weather" in str(a0["llm.tools.0.tool.json_schema"])
    assert "search" in str(a0["llm.tools.1.tool.json_schema"])
    assert calls[0].kind == "client"
    first_byte = [e for e in calls[0].events if e.name == "toolproxy.first_byte"]
    assert first_byte[0].time_ns == calls[0].start_ns + 100_000_000  # ttfb 100 ms


def test_each_answered_call_is_a_tool_execution_with_its_own_result(traces):
    """Call id c1 is reused: each execution carries the result that answered it."""
    t = traces["s-a"]
    tools = by_name(t, "execute_tool get_weather")
    pairs = [(s.attributes["gen_ai.tool.call.arguments"], s.attributes["output.value"])
             for s in tools]  # fmt: skip
    assert pairs == [('{"city":"Paris"}', "18C"), ('{"city":"Rome"}', "sunny")]
    calls = {s.attributes["toolproxy.exchange_id"]: s for s in by_name(t, "chat gpt-a-2026")}
    paris = tools[0]
    assert paris.attributes["openinference.span.kind"] == "TOOL"
    assert paris.attributes["gen_ai.tool.call.id"] == "c1"
    assert paris.start_ns == calls["a-0"].end_ns  # from the turn that made the call
    assert paris.end_ns == calls["a-1"].start_ns  # to the request that sent the result
    assert paris.error is None
    assert paris.attributes["toolproxy.mcp_exchange_id"] == "m-0"  # the MCP call that ran it
    assert "toolproxy.mcp_exchange_id" not in tools[1].attributes


def test_grades_attach_to_the_span_of_the_exchange_they_graded(traces):
    calls = {
        s.attributes["toolproxy.exchange_id"]: s
        for s in traces["s-a"].spans + traces["s-b"].spans
        if "toolproxy.exchange_id" in s.attributes and s.name.startswith("chat")
    }
    graded = {
        x: [(e.attributes["toolproxy.grade.run"], e.attributes["toolproxy.grade.passed"])
            for e in s.events if e.name == "toolproxy.grade"]
        for x, s in calls.items()
    }  # fmt: skip
    # b-0 was graded twice in g1: the latest (passed) counts
    assert graded == {
        "a-0": [("g1", True)], "a-1": [("g2", False)], "a-2": [], "b-0": [("g1", True)],
        "b-1": [],
    }  # fmt: skip
    a1 = calls["a-1"]
    event = next(e for e in a1.events if e.name == "toolproxy.grade")
    assert event.attributes["toolproxy.grade.label"] == "no_call"
    assert event.time_ns == a1.end_ns
    assert a1.attributes["toolproxy.grades.failed"] == 1
    assert a1.attributes["toolproxy.grades.labels"] == ["no_call"]


def test_a_failed_upstream_call_is_an_error_span(traces):
    failed = by_name(traces["s-b"], "chat claude-x")[1]
    assert failed.error == "upstream"
    assert failed.attributes["error.type"] == "upstream"
    assert failed.attributes["gen_ai.provider.name"] == "anthropic"
    assert by_name(traces["s-b"], "chat claude-x")[0].error is None


def test_a_request_that_is_no_model_call_is_a_plain_http_span(traces):
    (mcp,) = traces["s-m"].spans[1:]
    assert mcp.name == "POST /mcp"
    assert "openinference.span.kind" not in mcp.attributes
    assert mcp.attributes["toolproxy.wire_format"] == "mcp"


def test_ids_are_the_same_on_every_export(seeded_capture, traces):
    with store.reading(seeded_capture) as r:
        again = session_trace("s-a", details(r, SESSIONS["s-a"]))
    assert again.trace_id == traces["s-a"].trace_id
    assert [s.span_id for s in again.spans] == [s.span_id for s in traces["s-a"].spans]
    assert span_id_of("exchange", "a-0") != span_id_of("exchange", "a-1")
    assert trace_id_of("s-a") != trace_id_of("s-b")
    assert trace_id_of("s-a") < 2**128 and span_id_of("x") < 2**64


def test_a_grade_of_an_exchange_without_tools_lists_nothing_extra():
    from toolproxy.otel.spans import grade_event

    g = ExchangeGradeRow("x", "r", "c", None, None, True, "no turn", None, '["a"]', None)
    e = grade_event(g, 5)
    assert e.attributes["toolproxy.grade.passed"] is False
    assert e.attributes["toolproxy.grade.not_graded"] is True
    assert e.attributes["toolproxy.grade.called_tools"] == ["a"]
    assert "toolproxy.grade.expected_tools" not in e.attributes
