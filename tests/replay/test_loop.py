"""One replay cell against the scripted upstream playing model personalities."""

from __future__ import annotations

import sys

import pytest

from tests.paths import MCP_SERVERS
from toolproxy.mcp.config import ServerSpec
from toolproxy.records import ToolCall
from toolproxy.replay.engine import MemorySink
from toolproxy.replay.feedback import NOT_RUN
from toolproxy.replay.livetools import McpLiveTools
from toolproxy.replay.loop import (
    Backoff,
    Pace,
    TokenBucket,
    added_messages,
    recorded_answers,
    run_cell,
    wants_stream,
)
from toolproxy.replay.model import Candidate, RecordedResult, ReplayItem, Step
from toolproxy.scripted import Reply, Script, ScriptedCall

WEATHER_SERVER = str(MCP_SERVERS / "weather.py")
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
    "required": ["city"],
}
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": SCHEMA}}
    for n in ("get_weather", "get_time", "delete_note")
]
ASK = [{"role": "user", "content": "Weather in Paris?"}]


def rc(name: str, call_id: str | None = None, **args) -> ToolCall:
    import json

    return ToolCall(call_id=call_id, name=name, arguments_raw=json.dumps(args), arguments=args)


def session(stream: bool = False) -> ReplayItem:
    """Two steps: a get_weather call answered '18 C', then the final answer."""
    first = Step(
        messages=ASK,
        tools=TOOLS,
        params={"tool_choice": "auto", "temperature": 0},
        stream=stream,
        recorded_calls=[rc("get_weather", "call_rec", city="Paris")],
        recorded_results=[RecordedResult(call_id="call_rec", content="18 C")],
    )
    second = Step(
        messages=[
            {"role": "tool", "tool_call_id": "call_rec", "content": "18 C"},
            {"role": "user", "content": "thanks"},
        ],
        tools=TOOLS,
        stream=stream,
        recorded_text="It is 18 C.",
    )
    return ReplayItem(item_id="s1", kind="session", steps=[first, second])


def call(name: str = "get_weather", **args) -> ScriptedCall:
    return ScriptedCall(name=name, arguments=args or {"city": "Paris"})


RIGHT = Reply(tool_calls=[call()])
DONE = Reply(text="It is 18 C.")


def candidate(upstream, **fields) -> Candidate:
    fields = {"name": "cand", "model": "m1", "timeout_s": 5.0, "retries": 2, **fields}
    return Candidate(base_url=upstream.url + "/v1", **fields)


class Waits:
    """A sleep that records the wait chosen and returns at once (no wall time in tests)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


async def play(upstream, *replies, item=None, feedback_retries=2, pace=None, **options):
    upstream.set_script(Script.of(*replies))
    sink = MemorySink()
    live = options.pop("live_tools", None)
    mode = options.pop("tools_mode", "live" if live else "recorded")
    result = await run_cell(
        candidate(upstream, **options.pop("cand", {})),
        item or session(),
        0,
        None,
        None,
        mode,
        live,
        feedback_retries,
        sink,
        run="r1",
        pace=pace or Pace(backoff=Backoff(sleep=Waits())),
        **options,
    )
    assert sink.cells == [result]
    return result, sink


def sent(upstream, i: int) -> list[dict]:
    return upstream.requests[i].body["messages"]


async def test_correct_candidate_completes_and_gets_the_recorded_result(scripted_upstream):
    result, sink = await play(scripted_upstream, RIGHT, DONE)
    assert (result.status, result.steps_done, result.steps_total) == ("completed", 2, 2)
    assert result.retry_count == 0 and result.recovered is None and result.divergence is None
    assert len(result.exchange_ids) == 2 == len(set(result.exchange_ids))
    assert result.first_exchange_id == result.exchange_ids[0]
    assert [t[4] for t in sink.turns] == [0, 1] and sink.turns[0][5].calls[0].name == "get_weather"
    first = scripted_upstream.requests[0].body
    assert first["messages"] == ASK and first["tools"] == TOOLS
    assert first["tool_choice"] == "auto" and first["model"] == "m1" and "stream" not in first
    own_id = sink.turns[0][5].calls[0].call_id
    assert sent(scripted_upstream, 1) == [
        *ASK,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": own_id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": own_id, "content": "18 C"},
        {"role": "user", "content": "thanks"},
    ]
    assert sink.turns[1][6] == sent(scripted_upstream, 1)  # the sink sees what was sent
    assert sink.bodies[0] == first


async def test_candidate_params_override_the_recorded_ones(scripted_upstream):
    await play(scripted_upstream, RIGHT, DONE, cand={"params": {"temperature": 0.7}})
    assert scripted_upstream.requests[0].body["temperature"] == 0.7


@pytest.mark.parametrize(
    ("reply", "divergence"),
    [
        (Reply(tool_calls=[call("get_time")]), "called get_time instead of get_weather"),
        (Reply(tool_calls=[call(city="Lyon")]), "arguments differ: city 'Lyon' vs 'Paris'"),
        (
            Reply(tool_calls=[call(city="Paris", unit="celsius")]),
            "arguments differ: extra unit 'celsius'",
        ),
        (Reply(text="Sunny, I think."), "answered in text instead of calling get_weather"),
        (
            Reply(tool_calls=[call(), call("get_time")]),
            "made 2 calls (get_weather, get_time) instead of 1 (get_weather)",
        ),
    ],
    ids=["wrong-tool", "hallucinated-value", "extra-argument", "text", "two-calls"],
)
async def test_divergence_stops_the_cell_and_says_how(scripted_upstream, reply, divergence):
    result, sink = await play(scripted_upstream, reply, DONE)
    assert result.status == "diverged" and result.diverged_at == 0
    assert result.divergence == divergence
    assert result.steps_done == 1 and len(scripted_upstream.requests) == 1


async def test_invalid_call_gets_feedback_and_recovers(scripted_upstream):
    bad = Reply(tool_calls=[call(unit="kelvin", city=5)])
    result, sink = await play(scripted_upstream, bad, RIGHT, DONE)
    assert result.status == "completed" and result.retry_count == 1 and result.recovered is True
    assert [(t.step, t.attempt) for t in result.turns] == [(0, 0), (0, 1), (1, 0)]
    retry = sent(scripted_upstream, 1)
    bad_id = sink.turns[0][5].calls[0].call_id
    assert retry[-1] == {
        "role": "tool",
        "tool_call_id": bad_id,
        "content": "Invalid arguments for get_weather. Badly formatted fields: city "
        "(expected string). Wrong values: unit ('kelvin' is not one of ['celsius', "
        "'fahrenheit']). Fix the call and send it again.",
    }
    # the correction stays in the conversation that continues
    assert sent(scripted_upstream, 2)[: len(retry)] == retry


async def test_never_recovers_after_the_allowed_corrections(scripted_upstream):
    bad = Reply(tool_calls=[ScriptedCall(name="get_weather", arguments='{"town": "Paris"')])
    result, _ = await play(scripted_upstream, bad, feedback_retries=2)
    assert len(scripted_upstream.requests) == 3
    assert result.retry_count == 2 and result.recovered is False
    assert result.status == "diverged" and result.divergence.startswith(
        "arguments differ: not valid JSON"
    )
    assert "They are not valid JSON" in sent(scripted_upstream, 2)[-1]["content"]


async def test_a_valid_sibling_of_an_invalid_call_is_not_run(scripted_upstream):
    both = Reply(tool_calls=[call(), ScriptedCall(name="get_time", arguments={})])
    result, _ = await play(scripted_upstream, both, feedback_retries=1)
    answers = sent(scripted_upstream, 1)[-2:]
    assert answers[0]["content"] == NOT_RUN
    assert answers[1]["content"].startswith("Invalid arguments for get_time. Missing")
    assert result.recovered is False


async def test_no_feedback_when_retries_are_zero(scripted_upstream):
    result, _ = await play(scripted_upstream, Reply(tool_calls=[call(city=5)]), feedback_retries=0)
    assert len(scripted_upstream.requests) == 1
    assert result.retry_count == 0 and result.recovered is None and result.status == "diverged"


async def test_429_is_retried_after_the_retry_after_it_asked_for(scripted_upstream):
    waits = Waits()
    pace = Pace(backoff=Backoff(sleep=waits, rng=lambda: 0.0))
    result, _ = await play(
        scripted_upstream, Reply(status=429, retry_after=7), RIGHT, DONE, pace=pace
    )
    assert result.status == "completed"
    assert waits.waits == [7.0] and len(scripted_upstream.requests) == 3
    assert [t.attempt for t in result.turns] == [0, 0]  # backoff retries are not turns


async def test_server_errors_back_off_exponentially_then_fail(scripted_upstream):
    waits = Waits()
    pace = Pace(backoff=Backoff(sleep=waits, rng=lambda: 1.0))
    result, sink = await play(scripted_upstream, Reply(status=500), pace=pace, cand={"retries": 3})
    assert len(scripted_upstream.requests) == 4 and waits.waits == [0.5, 1.0, 2.0]
    assert (result.status, result.error_kind, result.steps_done) == ("failed", "server_error", 0)
    assert "HTTP 500" in result.error and len(sink.turns) == 1


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (Reply(raw_body="<html>oops</html>", content_type="text/html"), "bad_response"),
        (Reply(status=400), "client_error"),
    ],
)
async def test_garbage_and_client_errors_are_not_retried(scripted_upstream, reply, kind):
    result, _ = await play(scripted_upstream, reply)
    assert (result.status, result.error_kind) == ("failed", kind)
    assert len(scripted_upstream.requests) == 1


async def test_a_cut_stream_is_retried(scripted_upstream):
    cut = Reply(tool_calls=[call()], cut_after_events=1)
    result, _ = await play(scripted_upstream, cut, RIGHT, DONE, item=session(stream=True))
    assert result.status == "completed" and len(scripted_upstream.requests) == 3
    assert scripted_upstream.requests[0].body["stream_options"] == {"include_usage": True}
    turn = result.turns[0]
    assert turn.ttft_ms is not None and turn.ttft_ms > 0 and turn.output_tokens


async def test_a_hang_times_out_and_a_failure_later_keeps_the_steps_done(scripted_upstream):
    result, sink = await play(
        scripted_upstream, RIGHT, Reply(hang_s=5), cand={"timeout_s": 0.3, "retries": 0}
    )
    assert (result.status, result.error_kind, result.steps_done) == ("failed", "timeout", 1)
    assert len(result.turns) == 2 and result.turns[0].error_kind is None


async def test_parallel_calls_match_in_any_order_and_get_their_own_results(scripted_upstream):
    step = Step(
        messages=ASK,
        tools=TOOLS,
        recorded_calls=[rc("get_weather", "r1", city="Paris"), rc("get_time", "r2", city="Paris")],
        recorded_results=[
            RecordedResult(call_id="r2", content="noon"),
            RecordedResult(call_id="r1", content="18 C"),
        ],
    )
    item = ReplayItem(item_id="p", kind="session", steps=[step, session().steps[1]])
    swapped = Reply(tool_calls=[call("get_time"), call("get_weather")])
    result, sink = await play(scripted_upstream, swapped, DONE, item=item)
    assert result.status == "completed"
    time_id, weather_id = (c.call_id for c in sink.turns[0][5].calls)
    tools = [m for m in sent(scripted_upstream, 1) if m["role"] == "tool"]
    assert tools == [
        {"role": "tool", "tool_call_id": time_id, "content": "noon"},
        {"role": "tool", "tool_call_id": weather_id, "content": "18 C"},
    ]


def weather_server() -> ServerSpec:
    return ServerSpec("weather", "stdio", "test", command=sys.executable, args=(WEATHER_SERVER,))


async def test_live_tools_run_a_differing_call_and_the_replay_goes_on(scripted_upstream):
    async with McpLiveTools([weather_server()]) as live:
        lyon = Reply(tool_calls=[call(city="Lyon")])
        result, _ = await play(scripted_upstream, lyon, DONE, live_tools=live)
    assert result.status == "completed" and result.diverged_at == 0
    assert result.divergence == "arguments differ: city 'Lyon' vs 'Paris' (went on with live tools)"
    tool = [m for m in sent(scripted_upstream, 1) if m["role"] == "tool"]
    assert len(tool) == 1 and '"city":"Lyon"' in tool[0]["content"].replace(" ", "")


async def test_live_tools_refuse_side_effects_and_the_replay_stops(scripted_upstream):
    async with McpLiveTools([weather_server()]) as live:
        delete = Reply(tool_calls=[ScriptedCall(name="delete_note", arguments={"city": "n1"})])
        result, _ = await play(scripted_upstream, delete, DONE, live_tools=live)
    assert result.status == "diverged" and len(scripted_upstream.requests) == 1
    assert result.divergence == (
        "called delete_note instead of get_weather; "
        "delete_note not run live: unknown tool, or not read-only/idempotent"
    )


async def test_text_only_steps_go_on(scripted_upstream):
    step = Step(messages=ASK, recorded_text="Hello")
    item = ReplayItem(item_id="t", kind="exchange", steps=[step])
    result, _ = await play(scripted_upstream, Reply(text="Hi"), item=item)
    assert result.status == "completed" and "tools" not in scripted_upstream.requests[0].body
    wrong, _ = await play(scripted_upstream, RIGHT, item=item)
    assert wrong.divergence == "called get_weather instead of answering in text"


async def test_a_case_has_no_recorded_reply_to_diverge_from(scripted_upstream):
    # a case with its own messages: whatever the candidate does, the grade judges it
    step = Step(messages=ASK, tools=TOOLS)
    item = ReplayItem(item_id="case-1", kind="case", case_id="case-1", steps=[step])
    for reply in (RIGHT, Reply(text="I cannot say.")):
        result, _ = await play(scripted_upstream, reply, item=item)
        assert (result.status, result.diverged_at, result.divergence) == ("completed", None, None)
    failed, _ = await play(scripted_upstream, Reply(status=400), item=item)
    assert failed.status == "failed"


# --- pure parts ------------------------------------------------------------------------


def test_added_messages_and_recorded_answers_from_the_next_step():
    first = Step(messages=ASK, recorded_calls=[rc("f", "c1")])
    second = Step(
        messages=[
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": "more"},
        ]
    )
    assert added_messages(second, first) == [{"role": "user", "content": "more"}]
    assert added_messages(first, None) == ASK
    (answer,) = recorded_answers(first, second)
    assert answer.content == "ok"
    assert recorded_answers(first, None)[0].content == ""


def test_wants_stream_follows_the_config():
    step = Step(messages=ASK, stream=True)
    assert wants_stream(step, "as_recorded") and wants_stream(step, "always")
    assert not wants_stream(step, "never")


def test_backoff_grows_caps_jitters_and_honours_retry_after():
    low, high = Backoff(rng=lambda: 0.0), Backoff(rng=lambda: 1.0)
    assert [high.delay(n, None) for n in range(8)] == [0.5, 1, 2, 4, 8, 16, 30, 30]
    assert low.delay(2, None) == 1.0  # half of 2 s at the lowest jitter
    assert low.delay(0, 3.0) == 3.0 and high.delay(5, 3.0) == 16
    assert low.delay(0, 10_000) == 120.0  # an absurd Retry-After is capped


async def test_token_bucket_spaces_requests_at_its_rate():
    now = [0.0]
    waits = Waits()

    async def sleep(seconds: float) -> None:
        await waits(seconds)
        now[0] += seconds

    bucket = TokenBucket(4.0, clock=lambda: now[0], sleep=sleep)
    got = [await bucket.acquire() for _ in range(3)]
    assert got == [0.0, 0.25, 0.25]
    now[0] += 10  # idle time refills, but only up to the burst
    assert [await bucket.acquire() for _ in range(2)] == [0.0, 0.25]


async def test_live_replay_that_stops_later_reports_where_it_stopped(scripted_upstream):
    first = session().steps[0]
    middle = first.model_copy(update={"messages": [{"role": "user", "content": "again"}]})
    item = ReplayItem(item_id="3", kind="session", steps=[first, middle, session().steps[1]])
    lyon = Reply(tool_calls=[call(city="Lyon")])
    delete = Reply(tool_calls=[ScriptedCall(name="delete_note", arguments={"city": "n1"})])
    async with McpLiveTools([weather_server()]) as live:
        result, _ = await play(scripted_upstream, lyon, delete, DONE, item=item, live_tools=live)
        again, _ = await play(scripted_upstream, lyon, lyon, DONE, item=item, live_tools=live)
    assert (result.status, result.diverged_at, result.steps_done) == ("diverged", 1, 2)
    assert result.divergence.startswith("called delete_note instead of get_weather; ")
    assert (again.status, again.diverged_at) == ("completed", 0)
    assert again.divergence == "arguments differ: city 'Lyon' vs 'Paris' (went on with live tools)"
