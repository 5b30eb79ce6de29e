"""Chat Completions replies: wire shape, and the real openai SDK parsing them."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream
from toolproxy.scripted.context import Context
from toolproxy.scripted.render_chat import DONE, render_body, render_events

MESSAGES: Any = [{"role": "user", "content": "hi"}]
WEATHER = ScriptedCall(name="get_weather", arguments={"city": "Zürich", "note": "☀️ 東京"})
CLOCK = ScriptedCall(name="get_time", arguments={"tz": "Europe/Zurich"}, id="call_fixed")
PARALLEL = Reply(text="Checking.", tool_calls=[WEATHER, CLOCK], args_chunk_size=5)


def chunks(events: list[bytes]) -> list[dict[str, Any]]:
    assert events[-1] == DONE
    return [json.loads(e.removeprefix(b"data: ")) for e in events[:-1]]


def test_body_shape() -> None:
    body = json.loads(render_body(PARALLEL, Context("chat", model="m")))
    assert body["object"] == "chat.completion"
    assert body["model"] == "m"
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "Checking."
    calls = choice["message"]["tool_calls"]
    assert [c["id"] for c in calls] == ["call_default_0001_0", "call_fixed"]
    assert calls[0]["function"]["arguments"] == '{"city":"Zürich","note":"☀️ 東京"}'
    assert body["usage"]["total_tokens"] == (
        body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
    )


def test_finish_reason_default_and_override() -> None:
    stop = json.loads(render_body(Reply(text="x"), Context("chat")))
    assert stop["choices"][0]["finish_reason"] == "stop"
    assert "tool_calls" not in stop["choices"][0]["message"]
    length = json.loads(render_body(Reply(text="x", finish_reason="length"), Context("chat")))
    assert length["choices"][0]["finish_reason"] == "length"


def test_stream_starts_with_role_and_interleaves_parallel_calls() -> None:
    parsed = chunks(render_events(PARALLEL, Context("chat", stream=True)))
    deltas = [c["choices"][0]["delta"] for c in parsed]
    assert deltas[0] == {"role": "assistant", "content": "", "refusal": None}
    assert all(c["object"] == "chat.completion.chunk" for c in parsed)
    assert all(c["choices"][0]["finish_reason"] is None for c in parsed[:-1])
    assert parsed[-1]["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "tool_calls",
    }
    call_parts = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    # Both headers first, then argument pieces alternating between the two calls.
    assert call_parts[0]["function"] == {"name": "get_weather", "arguments": ""}
    assert call_parts[1]["id"] == "call_fixed"
    assert [p["index"] for p in call_parts[2:6]] == [0, 1, 0, 1]
    for index, call in enumerate([WEATHER, CLOCK]):
        pieces = [p["function"]["arguments"] for p in call_parts if p["index"] == index]
        assert json.loads("".join(pieces)) == call.arguments
    assert "usage" not in parsed[0]


def test_stream_usage_chunk_only_when_asked() -> None:
    parsed = chunks(render_events(Reply(text="x"), Context("chat", include_usage=True)))
    assert all(c["usage"] is None for c in parsed[:-1])
    assert parsed[-1]["choices"] == []
    assert parsed[-1]["usage"]["completion_tokens"] == 1


@pytest.fixture
def client(scripted_upstream: ScriptedUpstream) -> openai.OpenAI:
    return openai.OpenAI(base_url=scripted_upstream.url + "/v1", api_key="k", max_retries=0)


@pytest.fixture
def aclient(scripted_upstream: ScriptedUpstream) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=scripted_upstream.url + "/v1", api_key="k", max_retries=0)


def test_sdk_parses_text(client: openai.OpenAI, scripted_upstream: ScriptedUpstream) -> None:
    scripted_upstream.set_script(Script.of(Reply(text="Grüezi 👋")))
    completion = client.chat.completions.create(model="gpt-x", messages=MESSAGES)
    assert completion.choices[0].message.content == "Grüezi 👋"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "gpt-x"
    assert completion.usage is not None and completion.usage.prompt_tokens > 0


def test_sdk_parses_parallel_calls(
    client: openai.OpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(PARALLEL))
    message = client.chat.completions.create(model="m", messages=MESSAGES).choices[0].message
    calls = message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [  # type: ignore[union-attr]
        ("get_weather", WEATHER.arguments),
        ("get_time", CLOCK.arguments),
    ]


def test_sdk_stream_helper_accumulates_interleaved_calls(
    client: openai.OpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(PARALLEL))
    with client.chat.completions.stream(
        model="m", messages=MESSAGES, stream_options={"include_usage": True}
    ) as stream:
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.content == "Checking."
    assert [json.loads(c.function.arguments) for c in message.tool_calls or []] == [
        WEATHER.arguments,
        CLOCK.arguments,
    ]
    assert [c.id for c in message.tool_calls or []] == ["call_default_0001_0", "call_fixed"]
    assert final.usage is not None and final.usage.completion_tokens > 0


def test_sdk_raw_stream_chunks(client: openai.OpenAI, scripted_upstream: ScriptedUpstream) -> None:
    scripted_upstream.set_script(Script.of(Reply(text="abcdefghij", text_chunk_size=3)))
    stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    pieces = [c.choices[0].delta.content for c in stream]
    assert pieces == ["", "abc", "def", "ghi", "j", None]


def test_sdk_sees_malformed_arguments_verbatim(
    client: openai.OpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    broken = '{"city": "Zürich",, '
    scripted_upstream.set_script(
        Script.of(Reply(tool_calls=[ScriptedCall(name="f", arguments=broken)], args_chunk_size=4))
    )
    message = client.chat.completions.create(model="m", messages=MESSAGES).choices[0].message
    assert message.tool_calls[0].function.arguments == broken  # type: ignore[index,union-attr]
    stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    pieces = [
        call.function.arguments or ""
        for chunk in stream
        for call in chunk.choices[0].delta.tool_calls or []
        if call.function is not None
    ]
    assert "".join(pieces) == broken


async def test_async_sdk_streamed_and_not(
    aclient: openai.AsyncOpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(Reply(text="async", tool_calls=[WEATHER])))
    completion = await aclient.chat.completions.create(model="m", messages=MESSAGES)
    assert completion.choices[0].message.content == "async"
    stream = await aclient.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    text, args = "", ""
    async for chunk in stream:
        text += chunk.choices[0].delta.content or ""
        for call in chunk.choices[0].delta.tool_calls or []:
            args += call.function.arguments or "" if call.function else ""
    assert text == "async"
    assert json.loads(args) == WEATHER.arguments
