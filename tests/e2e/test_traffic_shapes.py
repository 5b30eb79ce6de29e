"""Shapes of real agent traffic through real mitmdump, recorded by the real `openai` SDK:
identical openings, retries after a 429 and a cut stream, call ids reused in a session."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port
from toolproxy.cli.main import main
from toolproxy.replay.plan import PlanFilters, plan_from_capture
from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream

from .conftest import assert_clean, rows, wait_rows

pytestmark = pytest.mark.e2e

SYSTEM = {"role": "system", "content": "You are a helpful agent."}
HI = {"role": "user", "content": "Hi, what is the weather in Paris?"}
CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
TZ = {"type": "object", "properties": {"tz": {"type": "string"}}}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": CITY}},
    {"type": "function", "function": {"name": "get_time", "parameters": TZ}},
]


def call(name: str, id: str, **arguments: Any) -> Reply:
    return Reply(tool_calls=[ScriptedCall(name=name, arguments=arguments, id=id)])


@contextmanager
def proxied(upstream_url: str, capture: Path, *extra: str) -> Iterator[RunningProxy]:
    """mitmdump with the addon for the block, its output checked clean when it stops."""
    spec = ProxySpec(
        capture=capture,
        upstream=upstream_url,
        port=free_port(),
        flush_interval=0.05,
        extra=list(extra),
    )
    proxy = RunningProxy(spec).start()
    try:
        yield proxy
    finally:
        assert_clean(proxy.stop())


def client(proxy: RunningProxy, key: str, retries: int = 0) -> openai.OpenAI:
    """An agent's own client: its own connections, its own script key upstream."""
    return openai.OpenAI(
        base_url=f"{proxy.url}/v1",
        api_key="sk-agent",
        max_retries=retries,
        default_headers={"x-scripted-key": key},
    )


def run_agent(agent: openai.OpenAI, start: threading.Barrier | None = None) -> None:
    """Three turns: a tool call, its result and the answer, then a follow-up."""
    messages: list[dict[str, Any]] = [SYSTEM, HI]
    if start is not None:
        start.wait()
    reply = agent.chat.completions.create(model="m", messages=messages, tools=TOOLS)
    message = reply.choices[0].message.model_dump(exclude_none=True)
    messages.append(message)
    for tc in message["tool_calls"]:
        messages.append({"role": "tool", "tool_call_id": tc["id"], "content": "18C"})
    reply = agent.chat.completions.create(model="m", messages=messages, tools=TOOLS)
    messages.append(reply.choices[0].message.model_dump(exclude_none=True))
    messages.append({"role": "user", "content": "Thanks!"})
    agent.chat.completions.create(model="m", messages=messages, tools=TOOLS)


AGENT_REPLIES = [
    call("get_weather", "call_1", city="Paris"),
    Reply(text="It is 18C in Paris."),
    Reply(text="You're welcome."),
]


def sessions_of(capture: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for session, source in rows(
        capture, "SELECT session_id, session_source FROM exchanges ORDER BY started_at"
    ):
        found.setdefault(session, []).append(source)
    return found


def test_identical_agents_at_once_are_separate_sessions(tmp_path):
    agents = 4
    replies = {f"agent{i}": AGENT_REPLIES for i in range(agents)}
    capture = tmp_path / "capture"
    with ScriptedUpstream(Script(replies=replies, deterministic=True)) as upstream:
        with proxied(upstream.url, capture) as proxy:
            start = threading.Barrier(agents)
            threads = [
                threading.Thread(target=run_agent, args=(client(proxy, f"agent{i}"), start))
                for i in range(agents)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            wait_rows(capture, "SELECT 1 FROM exchanges", 3 * agents)
    # every request of every agent was byte-identical to the others' at that turn
    bodies = {json.dumps(r.body, sort_keys=True) for r in upstream.requests}
    assert len(bodies) == 3
    got = sessions_of(capture)
    assert len(got) == agents
    assert sorted(got.values()) == [["new", "continued", "continued"]] * agents


def test_identical_openings_apart_in_time_are_separate_sessions(tmp_path):
    capture = tmp_path / "capture"
    script = Script(replies={"default": [Reply(text="Hello!")]}, deterministic=True)
    with ScriptedUpstream(script) as upstream:
        # a short retry window stands in for minutes between the trials
        with proxied(upstream.url, capture, "--set", "toolproxy_retry_window=0.3") as proxy:
            for _ in range(3):  # single-turn trials of one fixed prompt
                client(proxy, "default").chat.completions.create(model="m", messages=[SYSTEM, HI])
                time.sleep(0.6)
            # multi-turn agents one after another: each continued its opening, so no retry
            script_keys = {f"agent{i}": AGENT_REPLIES for i in range(3)}
            upstream.set_script(Script(replies=script_keys, deterministic=True))
            for i in range(3):
                run_agent(client(proxy, f"agent{i}"))
            wait_rows(capture, "SELECT 1 FROM exchanges", 12)
    got = sorted(sessions_of(capture).values())
    assert got == [["new"]] * 3 + [["new", "continued", "continued"]] * 3


def test_a_retry_after_a_429_and_after_a_cut_stream_joins_its_session(tmp_path):
    capture = tmp_path / "capture"
    limited = [Reply(status=429, retry_after=0), *AGENT_REPLIES]
    cut = Reply(text="It is 18C in Paris, and tomorrow", cut_after_events=2, stream=True)
    streamed = [cut, Reply(text="It is 18C in Paris.", stream=True)]
    script = Script(replies={"limited": limited, "cut": streamed}, deterministic=True)
    with ScriptedUpstream(script) as upstream:
        with proxied(upstream.url, capture) as proxy:
            run_agent(client(proxy, "limited", retries=2))  # the SDK re-sends after the 429
            agent = client(proxy, "cut")
            for attempt in range(2):  # the agent re-sends after the stream broke
                try:
                    chunks = agent.chat.completions.create(
                        model="m", messages=[SYSTEM, HI], stream=True
                    )
                    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
                    break
                except (openai.APIError, httpx.HTTPError):
                    assert attempt == 0
            assert text == "It is 18C in Paris."
            wait_rows(capture, "SELECT 1 FROM exchanges", 6)
    got = rows(
        capture,
        "SELECT session_id, session_source, status_code, error_kind FROM exchanges "
        "ORDER BY started_at",
    )
    assert [(s, code, kind) for _, s, code, kind in got] == [
        ("new", 429, "http_4xx"),
        ("retry", 200, None),
        ("continued", 200, None),
        ("continued", 200, None),
        ("new", 200, "connection_reset"),  # the upstream closed mid-stream
        ("retry", 200, None),
    ]
    assert len({s for s, *_ in got[:4]}) == 1 and len({s for s, *_ in got[4:]}) == 1
    assert got[0][0] != got[4][0]


def test_a_client_that_hangs_up_at_done_leaves_a_complete_exchange(tmp_path):
    """The openai SDK stops reading at `data: [DONE]` and closes the response: when the
    upstream's end of body comes after that, the proxy sees the client go first. The stream
    had its terminator, so the exchange is whole, and the next turn continues the session
    (a failed exchange would make it a retry)."""
    capture = tmp_path / "capture"
    late = dict(stream=True, end_delay_s=0.5)
    asked = call("get_weather", "call_1", city="Paris").model_copy(update=late)
    replies = [asked, Reply(text="It is 18C in Paris.", **late)]
    with ScriptedUpstream(Script(replies={"late": replies}, deterministic=True)) as upstream:
        with proxied(upstream.url, capture) as proxy:
            agent = client(proxy, "late")
            messages: list[dict[str, Any]] = [SYSTEM, HI]
            list(
                agent.chat.completions.create(
                    model="m", messages=messages, tools=TOOLS, stream=True
                )
            )
            function = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
            messages += [
                {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                                      "function": function}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
            ]  # fmt: skip
            chunks = agent.chat.completions.create(
                model="m", messages=messages, tools=TOOLS, stream=True
            )
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            assert text == "It is 18C in Paris."
            wait_rows(capture, "SELECT 1 FROM exchanges", 2)
    got = rows(
        capture,
        "SELECT session_source, error_kind, error_message, parse_status, finish_reason "
        "FROM exchanges ORDER BY started_at",
    )
    assert got == [
        ("new", None, None, "ok", "tool_calls"),
        ("continued", None, None, "ok", "stop"),
    ]
    assert rows(capture, "SELECT name, arguments_raw FROM tool_calls") == [
        ("get_weather", '{"city":"Paris"}')
    ]


# --- a call id reused later in the session ------------------------------------------------

REUSED = [
    call("get_weather", "call_1", city="Paris"),
    Reply(text="It is 18C in Paris."),
    Reply(text="Glad to help."),
    call("get_time", "call_1", tz="Europe/Paris"),  # three turns later: the same id
    Reply(text="It is noon in Paris."),
]
RESULTS = {"get_weather": "18C", "get_time": "12:00"}


def reusing_agent(agent: openai.OpenAI) -> list[list[dict[str, Any]]]:
    """Two questions, each needing a tool; the model reuses call_1. Returns every request."""
    sent: list[list[dict[str, Any]]] = []
    messages: list[dict[str, Any]] = [SYSTEM, HI]
    for follow_up, turns in (("Thanks!", 2), ("And the time there?", 1), (None, 2)):
        for _ in range(turns):
            sent.append(json.loads(json.dumps(messages)))
            reply = agent.chat.completions.create(model="m", messages=messages, tools=TOOLS)
            message = reply.choices[0].message.model_dump(exclude_none=True)
            messages.append(message)
            for tc in message.get("tool_calls", []):
                content = RESULTS[tc["function"]["name"]]
                messages.append({"role": "tool", "tool_call_id": tc["id"], "content": content})
        if follow_up:
            messages.append({"role": "user", "content": follow_up})
    return sent


@pytest.fixture
def reused(tmp_path):
    capture = tmp_path / "capture"
    with ScriptedUpstream(Script(replies={"default": REUSED}, deterministic=True)) as upstream:
        with proxied(upstream.url, capture) as proxy:
            sent = reusing_agent(client(proxy, "default"))
            wait_rows(capture, "SELECT 1 FROM exchanges", 5)
    return capture, sent


def test_each_result_is_linked_to_the_call_it_answers(reused):
    capture, _ = reused
    calls = rows(
        capture,
        'SELECT name, call_id, result FROM call_results ORDER BY started_at, "index"',
    )
    assert calls == [("get_weather", "call_1", "18C"), ("get_time", "call_1", "12:00")]
    # the last request carries both results: each names the exchange that made its call
    links = rows(
        capture,
        "SELECT r.content, c.name FROM tool_results r JOIN tool_calls c "
        'ON c.exchange_id = r.call_exchange_id AND c."index" = r.call_index '
        "ORDER BY r.started_at, r.message_index",
    )
    assert links == [("18C", "get_weather")] * 4 + [("12:00", "get_time")]


def test_replay_feeds_each_call_its_own_result(reused, tmp_path):
    capture, sent = reused
    [item] = plan_from_capture(capture, PlanFilters())
    results = [[(r.call_id, r.content) for r in s.recorded_results] for s in item.steps]
    assert results == [[("call_1", "18C")], [], [], [("call_1", "12:00")], []]
    # a candidate that makes the recorded calls is sent the recorded conversation exactly
    with ScriptedUpstream(Script(replies={"default": REUSED}, deterministic=True)) as cand:
        config = tmp_path / "cands.yaml"
        config.write_text(
            "repeats: 1\ncandidates:\n  - name: same\n    model: m\n"
            f"    base_url: {cand.url}/v1\n    api_key_env: null\n    concurrency: 1\n"
        )
        argv = ["replay", str(config), "-c", str(capture), "--run", "r", "--no-progress"]
        assert main([*argv, "--no-grade"]) == 0
        replayed = [r.body["messages"] for r in cand.requests]
    assert [[_core(m) for m in ms] for ms in replayed] == [[_core(m) for m in ms] for ms in sent]
    # replayed exchanges keep their bodies, as captured ones do
    bodies = rows(
        capture,
        "SELECT request_body, response_body, body_encoding FROM exchanges "
        "WHERE proxy_id LIKE 'replay:%' ORDER BY started_at",
    )
    assert len(bodies) == 5
    for (request, response, encoding), messages in zip(bodies, replayed, strict=True):
        assert encoding == "utf-8"
        assert json.loads(request)["messages"] == messages
        assert json.loads(response)["object"] == "chat.completion"


def _core(message: dict[str, Any]) -> tuple[Any, ...]:
    """What a conversation says, whatever the SDK's spelling (null content, extra keys)."""
    calls = [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message.get("tool_calls") or []
    ]
    return message["role"], message.get("content") or "", calls, message.get("tool_call_id")
