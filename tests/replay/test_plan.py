"""Planning replays from real captures: traffic recorded through real mitmdump with the
scripted upstream and the real openai / anthropic SDKs, then planned and checked."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import anthropic
import httpx
import openai
import pytest

from toolproxy import store
from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port
from toolproxy.errors import UserError
from toolproxy.grade.model import Case
from toolproxy.grade.rows import GradeRow
from toolproxy.replay.plan import (
    CONVERSATION_NOTE,
    STATEFUL_NOTE,
    PlanFilters,
    plan_from_capture,
    plan_from_cases,
)
from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream
from toolproxy.store.segments import SegmentWriter

pytestmark = pytest.mark.e2e

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
FORECAST = {
    "type": "function",
    "function": {"name": "get_forecast", "parameters": {"type": "object", "properties": {}}},
}
CHAT_TOOLS = [WEATHER, FORECAST]
RESP_TOOLS = [{"type": "function", **t["function"]} for t in CHAT_TOOLS]
ANTH_TOOLS = [
    {
        "name": "get_weather",
        "description": "weather",
        "input_schema": WEATHER["function"]["parameters"],
    }
]


def _call(name, args, id):
    return Reply(tool_calls=[ScriptedCall(name=name, arguments=args, id=id)])


SCRIPT = Script(
    deterministic=True,
    replies={
        "chat-loop": [
            _call("get_weather", {"city": "Paris"}, "call_w1"),
            Reply(text="18C in Paris"),
            _call("get_forecast", {}, "call_f1"),
            Reply(text="Rain tomorrow"),
        ],
        "rewrite": [Reply(text="one"), Reply(text="two"), Reply(text="three")],
        "claude-x": [
            Reply(
                text="Let me check.",
                tool_calls=[
                    ScriptedCall(name="get_weather", arguments={"city": "Zürich"}, id="tu_1")
                ],
            ),
            Reply(text="Sunny"),
        ],
        "resp-m": [_call("get_weather", {"city": "Oslo"}, "call_r1"), Reply(text="Cold")],
        "resp-chain": [_call("get_weather", {"city": "Rome"}, "call_c1"), Reply(text="Warm")],
        "resp-conv": [_call("get_weather", {"city": "Lima"}, "call_v1"), Reply(text="Mild")],
        "boom": [Reply(status=500)],
    },
)


def _wait(capture, n, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if store.query(capture, "SELECT count(*) FROM exchanges")[1][0][0] >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} exchanges recorded")


def _chat_loop(client):
    """A user turn, a tool call, its result, an answer, a follow-up, another call, an answer."""
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    for stream in (False, True, False, False):
        if stream:
            chunks = list(
                client.chat.completions.create(
                    model="chat-loop", messages=messages, tools=CHAT_TOOLS, stream=True
                )
            )
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            msg = {"role": "assistant", "content": text}
        else:
            reply = client.chat.completions.create(
                model="chat-loop", messages=messages, tools=CHAT_TOOLS, temperature=0.1
            )
            msg = reply.choices[0].message.model_dump(exclude_none=True)
        messages.append(msg)
        if msg.get("tool_calls"):
            call = msg["tool_calls"][0]
            content = "18C" if call["function"]["name"] == "get_weather" else "rain"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
        elif msg["content"] == "18C in Paris":
            messages.append({"role": "user", "content": "And tomorrow?"})


def _rewrite(client):
    """Same session (header), but the later requests do not extend the previous one:
    another conversation, then the previous one without its reply."""
    header = {"x-toolproxy-session": "rewrite-1"}
    first = [{"role": "user", "content": [{"type": "text", "text": "a"}]}]
    for messages in (first, [{"role": "user", "content": "b"}]):
        client.chat.completions.create(model="rewrite", messages=messages, extra_headers=header)
    client.chat.completions.create(
        model="rewrite",
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "b"}]},  # same turn as parts
            {"role": "user", "content": "more"},
        ],
        extra_headers=header,
    )


def _not_json(base):
    """A model endpoint request whose body does not parse."""
    httpx.post(f"{base}/v1/chat/completions", content=b"{not json", timeout=10)


def _anthropic(base):
    client = anthropic.Anthropic(base_url=base, api_key="sk-ant-test", max_retries=0)
    messages = [{"role": "user", "content": "Weather in Zürich?"}]
    args = dict(model="claude-x", max_tokens=500, system="Be brief.", tools=ANTH_TOOLS)
    first = client.messages.create(messages=messages, metadata={"user_id": "u1"}, **args)
    messages.append({"role": "assistant", "content": [b.model_dump() for b in first.content]})
    use = next(b for b in first.content if b.type == "tool_use")
    messages.append(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sun"}],
        }
    )
    with client.messages.stream(messages=messages, **args) as s:
        s.get_final_message()


def _responses(client):
    items = [{"role": "user", "content": "Weather in Oslo?"}]
    first = client.responses.create(
        model="resp-m", input=items, tools=RESP_TOOLS, instructions="Hi"
    )
    items += [o.model_dump(exclude_none=True) for o in first.output]
    call = next(o for o in first.output if o.type == "function_call")
    items.append({"type": "function_call_output", "call_id": call.call_id, "output": "-5C"})
    client.responses.create(model="resp-m", input=items, tools=RESP_TOOLS, instructions="Hi")
    # stateful chaining: only the new items, previous_response_id names the reply
    chained = client.responses.create(
        model="resp-chain", input="Weather in Rome?", tools=RESP_TOOLS, store=True
    )
    call = next(o for o in chained.output if o.type == "function_call")
    client.responses.create(
        model="resp-chain",
        previous_response_id=chained.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "25C"}],
        tools=RESP_TOOLS,
    )
    # a stored conversation: each request sends its new items and names the conversation
    opened = client.responses.create(
        model="resp-conv", input="Weather in Lima?", tools=RESP_TOOLS, conversation="conv_9"
    )
    call = next(o for o in opened.output if o.type == "function_call")
    client.responses.create(
        model="resp-conv",
        conversation={"id": "conv_9"},
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "19C"}],
        tools=RESP_TOOLS,
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One capture holding every scenario (recorded once; the tests only read it)."""
    capture = tmp_path_factory.mktemp("plan") / "capture"
    with ScriptedUpstream(SCRIPT) as upstream:
        spec = ProxySpec(
            capture=capture, upstream=upstream.url, port=free_port(), flush_interval=0.05
        )
        proxy = RunningProxy(spec).start()
        try:
            client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="sk-test", max_retries=0)
            _chat_loop(client)
            _rewrite(client)
            _anthropic(proxy.url)
            _responses(client)
            with pytest.raises(openai.InternalServerError):
                client.chat.completions.create(
                    model="boom", messages=[{"role": "user", "content": "x"}]
                )
            client.models.list()
            _not_json(proxy.url)
            _wait(capture, 4 + 3 + 2 + 6 + 3)
        finally:
            proxy.stop()
    return capture


def _ids(capture, model):
    sql = (
        "SELECT exchange_id, session_id FROM exchanges WHERE model_requested = $m "
        "ORDER BY started_at"
    )
    return store.query(capture, sql, {"m": model})[1]


def _by_model(plan, model):
    return [i for i in plan if i.model == model]


def test_chat_session_steps_carry_only_what_the_agent_added(recorded):
    plan = plan_from_capture(recorded, PlanFilters(models=["chat-loop"]))
    ids = _ids(recorded, "chat-loop")
    assert [i.item_id for i in plan] == [ids[0][1]]
    (item,) = plan
    assert item.kind == "session" and item.wire_format == "openai_chat"
    assert [s.exchange_id for s in item.steps] == [e for e, _ in ids]
    first, second, third, fourth = item.steps
    assert first.messages == [{"role": "user", "content": "Weather in Paris?"}]
    assert [c.name for c in first.recorded_calls] == ["get_weather"]
    assert first.recorded_calls[0].arguments == {"city": "Paris"}
    assert first.recorded_results[0].model_dump() == {
        "call_id": first.recorded_calls[0].call_id,
        "content": "18C",
        "is_error": None,
    }
    assert first.params == {"temperature": 0.1} and not first.stream
    assert [t["function"]["name"] for t in first.tools] == ["get_weather", "get_forecast"]
    # step 2: only the tool result; streamed as recorded
    assert second.messages == [
        {"role": "tool", "tool_call_id": first.recorded_calls[0].call_id, "content": "18C"}
    ]
    assert second.stream and second.recorded_text == "18C in Paris" and not second.recorded_calls
    assert third.messages == [{"role": "user", "content": "And tomorrow?"}]
    assert [c.name for c in third.recorded_calls] == ["get_forecast"]
    assert [r.content for r in third.recorded_results] == ["rain"]
    assert fourth.recorded_text == "Rain tomorrow" and fourth.recorded_results == []


def test_replaying_steps_rebuilds_the_recorded_conversation(recorded):
    """Appending the recorded reply, then the next step's messages, gives each request."""
    (item,) = plan_from_capture(recorded, PlanFilters(models=["chat-loop"]))
    sql = "SELECT messages FROM exchanges WHERE exchange_id = $id"
    conversation: list = []
    for step in item.steps:
        conversation += step.messages
        sent = json.loads(store.query(recorded, sql, {"id": step.exchange_id})[1][0][0])
        assert [(m["role"], m.get("content") or None) for m in conversation] == [
            (m["role"], m.get("content") or None) for m in sent
        ]
        calls = [
            {
                "id": c.call_id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_raw},
            }
            for c in step.recorded_calls
        ]
        conversation.append(
            {"role": "assistant", "content": step.recorded_text, "tool_calls": calls}
        )


def test_rewritten_history_starts_a_new_item(recorded):
    plan = plan_from_capture(recorded, PlanFilters(sessions=["rewrite-1"]))
    ids = [e for e, _ in _ids(recorded, "rewrite")]
    assert [i.item_id for i in plan] == ["rewrite-1", f"rewrite-1@{ids[1]}", f"rewrite-1@{ids[2]}"]
    assert [len(i.steps) for i in plan] == [1, 1, 1]
    assert plan[1].steps[0].messages == [{"role": "user", "content": "b"}]
    assert plan[2].steps[0].messages[-1] == {"role": "user", "content": "more"}


def test_anthropic_session(recorded):
    (item,) = plan_from_capture(recorded, PlanFilters(models=["claude-x"]))
    assert item.wire_format == "anthropic_messages"
    first, second = item.steps
    assert first.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Zürich?"},
    ]
    assert first.params == {"max_tokens": 500}
    assert first.tools[0]["function"]["name"] == "get_weather"
    assert [(c.call_id, c.arguments) for c in first.recorded_calls] == [
        ("tu_1", {"city": "Zürich"})
    ]
    assert first.recorded_text == "Let me check."
    assert [r.content for r in first.recorded_results] == ["sun"]
    assert second.messages == [{"role": "tool", "tool_call_id": "tu_1", "content": "sun"}]
    assert second.stream and not first.stream
    assert "params: dropped metadata (no Chat equivalent or provider-only) (1 turn(s))" in (
        plan_from_capture(recorded, PlanFilters(models=["claude-x"])).describe()
    )


def test_responses_sessions_full_input_and_previous_response_id(recorded):
    (item,) = plan_from_capture(recorded, PlanFilters(models=["resp-m"]))
    first, second = item.steps
    assert first.messages == [
        {"role": "system", "content": "Hi"},
        {"role": "user", "content": "Weather in Oslo?"},
    ]
    assert second.messages == [{"role": "tool", "tool_call_id": "call_r1", "content": "-5C"}]
    assert [r.content for r in first.recorded_results] == ["-5C"]
    (chained,) = plan_from_capture(recorded, PlanFilters(models=["resp-chain"]))
    assert [s.messages for s in chained.steps] == [
        [{"role": "user", "content": "Weather in Rome?"}],
        [{"role": "tool", "tool_call_id": "call_c1", "content": "25C"}],
    ]
    # a stored conversation: one session, each step its new items
    (stored,) = plan_from_capture(recorded, PlanFilters(models=["resp-conv"]))
    assert [s.messages for s in stored.steps] == [
        [{"role": "user", "content": "Weather in Lima?"}],
        [{"role": "tool", "tool_call_id": "call_v1", "content": "19C"}],
    ]
    assert [r.content for r in stored.steps[0].recorded_results] == ["19C"]


def test_per_exchange_items_and_skips(recorded):
    plan = plan_from_capture(recorded, PlanFilters(per="exchange"))
    usable = store.query(
        recorded,
        "SELECT exchange_id FROM exchanges WHERE error_kind IS NULL"
        " AND coalesce(status_code, 200) < 400 AND wire_format != 'unknown'"
        " ORDER BY started_at, exchange_id",
    )[1]
    assert [i.item_id for i in plan] == [e for (e,) in usable]
    assert all(i.kind == "exchange" and len(i.steps) == 1 for i in plan)
    # the chained Responses turn, alone, lacks the conversation stored at the provider
    assert plan.notes[STATEFUL_NOTE] == 1
    assert plan_from_capture(recorded, PlanFilters()).notes[STATEFUL_NOTE] == 0
    assert plan.notes[CONVERSATION_NOTE] == 2  # alone, each misses what came before it
    assert plan_from_capture(recorded, PlanFilters()).notes[CONVERSATION_NOTE] == 1
    assert dict(plan.skipped) == {"failed": 1, "not_model_turn": 1, "not_parsed": 1}
    (tool_turn,) = [i for i in plan if i.item_id == _ids(recorded, "chat-loop")[1][0]]
    assert tool_turn.steps[0].messages[-1]["role"] == "tool"  # the whole request


def test_filters(recorded):
    weather = plan_from_capture(recorded, PlanFilters(tools=["get_weather"], per="exchange"))
    assert {i.model for i in weather} == {
        "chat-loop",
        "claude-x",
        "resp-m",
        "resp-chain",
        "resp-conv",
    }
    assert all(i.steps[0].recorded_calls[0].name == "get_weather" for i in weather)
    # per session, a tool filter picks whole sessions
    forecast = plan_from_capture(recorded, PlanFilters(tools=["get_forecast"]))
    assert [len(i.steps) for i in forecast] == [4]
    ex = _ids(recorded, "claude-x")[0][0]
    assert [
        i.item_id for i in plan_from_capture(recorded, PlanFilters(exchanges=[ex], per="exchange"))
    ] == [ex]
    assert plan_from_capture(recorded, PlanFilters(until=datetime(2000, 1, 1, tzinfo=UTC))) == []
    later = datetime.now(UTC) + timedelta(days=1)
    assert plan_from_capture(recorded, PlanFilters(since=later)) == []
    assert (
        len(plan_from_capture(recorded, PlanFilters(since=datetime(2000, 1, 1, tzinfo=UTC)))) == 8
    )


def test_label_filter_reads_the_latest_grade_per_case(recorded):
    ex = _ids(recorded, "resp-m")[0][0]
    other = _ids(recorded, "claude-x")[0][0]

    def row(case, exchange, label, at):
        return GradeRow(
            run="lab",
            graded_at=at,
            case_id=case,
            exchange_id=exchange,
            passed=label is None,
            label=label,
        ).model_dump()

    SegmentWriter(recorded, "test-grades").write(
        {
            "grades": [
                row("c1", ex, "wrong_tool", "2025-01-01T00:00:00+00:00"),
                row("c2", other, "wrong_tool", "2025-01-01T00:00:00+00:00"),
                row("c2", other, None, "2025-01-02T00:00:00+00:00"),  # re-graded: passed now
            ]
        }
    )
    filters = PlanFilters(labels=["wrong_tool"], label_run="lab", per="exchange")
    assert [i.item_id for i in plan_from_capture(recorded, filters)] == [ex]
    assert [
        i.model
        for i in plan_from_capture(recorded, PlanFilters(labels=["wrong_tool"], label_run="lab"))
    ] == ["resp-m"]
    assert plan_from_capture(recorded, PlanFilters(labels=["no_call"], label_run="lab")) == []
    assert len(plan_from_capture(recorded, PlanFilters(label_run="lab", per="exchange"))) == 2
    with pytest.raises(ValueError, match="label_run"):
        PlanFilters(labels=["wrong_tool"])


def test_item_ids_are_stable(recorded):
    one = plan_from_capture(recorded, PlanFilters())
    two = plan_from_capture(recorded, PlanFilters())
    assert [i.model_dump() for i in one] == [i.model_dump() for i in two]
    assert len({i.item_id for i in one}) == len(one)


def test_cases(recorded):
    ex = _ids(recorded, "chat-loop")[0][0]
    cases = [
        Case(id="from-exchange", exchange_id=ex),
        Case(id="missing", exchange_id="no-such-exchange"),
        Case(
            id="own",
            messages=[{"role": "user", "content": "weather?"}],
            tools=CHAT_TOOLS,
        ),
        Case(
            id="own-anthropic",
            wire_format="anthropic_messages",
            messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            tools=ANTH_TOOLS,
        ),
    ]
    plan = plan_from_cases(cases, recorded)
    assert [i.item_id for i in plan] == ["from-exchange", "own", "own-anthropic"]
    assert all(i.kind == "case" and i.case_id == i.item_id for i in plan)
    assert plan.skipped["case_exchange_missing_or_unusable"] == 1
    assert plan[0].steps[0].exchange_id == ex
    assert [c.name for c in plan[0].steps[0].recorded_calls] == ["get_weather"]
    assert plan[1].steps[0].messages == [{"role": "user", "content": "weather?"}]
    assert [t["function"]["name"] for t in plan[1].steps[0].tools] == [
        "get_weather",
        "get_forecast",
    ]
    assert plan[2].steps[0].messages == [{"role": "user", "content": "hi"}]
    assert plan[2].steps[0].tools[0]["function"]["parameters"] == WEATHER["function"]["parameters"]
    assert plan_from_cases(cases[2:3], None)[0].item_id == "own"


def test_cases_that_replay_the_same_exchange_are_items_of_their_own(recorded):
    ex = _ids(recorded, "chat-loop")[0][0]
    cases = [Case(id="first", exchange_id=ex), Case(id="second", exchange_id=ex)]
    plan = plan_from_cases(cases, recorded)
    assert [(i.item_id, i.case_id, i.kind) for i in plan] == [
        ("first", "first", "case"),
        ("second", "second", "case"),
    ]
    assert plan[0] is not plan[1]
    assert plan[0].steps[0].exchange_id == plan[1].steps[0].exchange_id == ex


def test_cases_that_cannot_be_planned():
    with pytest.raises(UserError, match="need a capture"):
        plan_from_cases([Case(id="x", exchange_id="e")], None)
    with pytest.raises(UserError, match="cannot replay wire_format 'mcp'"):
        plan_from_cases([Case(id="x", wire_format="mcp", messages=[])], None)


def test_odd_chat_requests_are_planned_with_notes_not_a_crash(tmp_path):
    # requests a lenient server answered 200: a non-object message, then an assistant
    # message whose tool_calls is not a list, in a session that continues
    capture = tmp_path / "capture"
    script = Script(deterministic=True, replies={"odd": [Reply(text="a"), Reply(text="b")]})
    hi = {"role": "user", "content": "hi"}
    odd = {"role": "assistant", "content": None, "tool_calls": "nope"}
    bodies = [
        {"model": "odd", "messages": [hi, "junk"]},
        {"model": "odd", "messages": [hi, odd, [1, 2], {"role": "user", "content": "again"}]},
    ]
    with ScriptedUpstream(script) as upstream:
        spec = ProxySpec(
            capture=capture, upstream=upstream.url, port=free_port(), flush_interval=0.05
        )
        proxy = RunningProxy(spec).start()
        try:
            for body in bodies:
                reply = httpx.post(
                    f"{proxy.url}/v1/chat/completions",
                    json=body,
                    headers={"x-toolproxy-session": "odd-1"},
                    timeout=10,
                )
                assert reply.status_code == 200
            _wait(capture, 2)
        finally:
            proxy.stop()
    plan = plan_from_capture(capture, PlanFilters())
    # one session: the second request extends the first (its odd assistant message, with
    # no calls, is taken as the reply), so its step holds what the agent added
    assert [[step.messages for step in item.steps] for item in plan] == [
        [[hi], [{"role": "user", "content": "again"}]]
    ]
    assert "messages[1]: dropped a non-object message (1 turn(s))" in plan.describe()
    assert "messages[2]: dropped a non-object message (1 turn(s))" in plan.describe()
