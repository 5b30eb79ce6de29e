"""Anthropic Messages replies: wire shape, and the real anthropic SDK parsing them."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest

from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream
from toolproxy.scripted.context import Context
from toolproxy.scripted.render_anthropic import render_body, render_events

MESSAGES: Any = [{"role": "user", "content": "hi"}]
READ = ScriptedCall(name="read_file", arguments={"path": "/tmp/naïve ✓.txt"})
LIST = ScriptedCall(name="list_dir", arguments={"path": "/"}, id="toolu_mine")
BOTH = Reply(text="Reading.", tool_calls=[READ, LIST], args_chunk_size=4)


def events(reply: Reply) -> list[tuple[str, dict[str, Any]]]:
    parsed = []
    for raw in render_events(reply, Context("messages", stream=True)):
        head, data = raw.decode().removesuffix("\n\n").split("\n")
        parsed.append((head.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return parsed


def test_body_shape() -> None:
    body = json.loads(render_body(BOTH, Context("messages", model="claude-x")))
    assert (body["type"], body["role"], body["model"]) == ("message", "assistant", "claude-x")
    assert body["stop_reason"] == "tool_use"
    text, read, listing = body["content"]
    assert text == {"type": "text", "text": "Reading."}
    assert read["input"] == READ.arguments and read["id"] == "toolu_default_0001_0"
    assert listing["id"] == "toolu_mine"
    plain = json.loads(render_body(Reply(text="x"), Context("messages")))
    assert plain["stop_reason"] == "end_turn"
    capped = Reply(text="x", finish_reason="max_tokens")
    assert json.loads(render_body(capped, Context("messages")))["stop_reason"] == "max_tokens"


def test_raw_arguments_are_spliced_verbatim_into_the_body() -> None:
    reply = Reply(tool_calls=[ScriptedCall(name="f", arguments='{"a": 1,}')])
    assert b'"input":{"a": 1,}' in render_body(reply, Context("messages"))
    valid = Reply(tool_calls=[ScriptedCall(name="f", arguments='{"a":  [1]}')])
    assert json.loads(render_body(valid, Context("messages")))["content"][0]["input"] == {"a": [1]}


def test_event_sequence() -> None:
    parsed = events(BOTH)
    assert all(name == payload["type"] for name, payload in parsed)
    names = [name for name, _ in parsed]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 3
    start = parsed[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None
    delta = parsed[-2][1]
    assert delta["delta"]["stop_reason"] == "tool_use" and delta["usage"]["output_tokens"] > 1
    for index, call in enumerate([READ, LIST], start=1):
        pieces = [
            p["delta"]["partial_json"]
            for name, p in parsed
            if name == "content_block_delta" and p["index"] == index
        ]
        assert pieces[0] == ""
        assert json.loads("".join(pieces)) == call.arguments


def test_empty_reply_still_pings() -> None:
    names = [name for name, _ in events(Reply())]
    assert names == ["message_start", "ping", "message_delta", "message_stop"]


@pytest.fixture
def client(scripted_upstream: ScriptedUpstream) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=scripted_upstream.url, api_key="k", max_retries=0)


def test_sdk_parses_text_and_tool_use(
    client: anthropic.Anthropic, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(BOTH))
    message = client.messages.create(model="claude-x", max_tokens=50, messages=MESSAGES)
    assert message.model == "claude-x" and message.stop_reason == "tool_use"
    assert message.content[0].type == "text" and message.content[0].text == "Reading."
    uses = [b for b in message.content if b.type == "tool_use"]
    assert [(b.name, b.input) for b in uses] == [
        ("read_file", READ.arguments),
        ("list_dir", LIST.arguments),
    ]


def test_sdk_stream_helper_builds_the_final_message(
    client: anthropic.Anthropic, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(BOTH))
    with client.messages.stream(model="c", max_tokens=50, messages=MESSAGES) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Reading."
    assert [b.input for b in final.content if b.type == "tool_use"] == [
        READ.arguments,
        LIST.arguments,
    ]
    assert final.stop_reason == "tool_use" and final.usage.output_tokens > 1


def test_sdk_and_malformed_arguments(
    client: anthropic.Anthropic, scripted_upstream: ScriptedUpstream
) -> None:
    broken = '{"path": "/x",,'
    scripted_upstream.set_script(
        Script.of(Reply(tool_calls=[ScriptedCall(name="f", arguments=broken)], args_chunk_size=3))
    )
    # Raw events carry the text verbatim; the SDK's accumulating helper refuses it,
    # and the non-streamed body is no longer JSON at all.
    stream = client.messages.create(model="c", max_tokens=5, messages=MESSAGES, stream=True)
    pieces = [
        e.delta.partial_json
        for e in stream
        if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
    ]
    assert "".join(pieces) == broken
    with pytest.raises(ValueError, match="Unable to parse tool parameter JSON"):
        with client.messages.stream(model="c", max_tokens=5, messages=MESSAGES) as helper:
            helper.get_final_message()
    with pytest.raises(json.JSONDecodeError):
        client.messages.create(model="c", max_tokens=5, messages=MESSAGES)


async def test_async_sdk_streamed_and_not(scripted_upstream: ScriptedUpstream) -> None:
    client = anthropic.AsyncAnthropic(base_url=scripted_upstream.url, api_key="k", max_retries=0)
    scripted_upstream.set_script(Script.of(Reply(text="äsync", tool_calls=[READ])))
    message = await client.messages.create(model="c", max_tokens=5, messages=MESSAGES)
    assert message.content[1].type == "tool_use" and message.content[1].input == READ.arguments
    async with client.messages.stream(model="c", max_tokens=5, messages=MESSAGES) as stream:
        final = await stream.get_final_message()
    assert final.content[0].type == "text" and final.content[0].text == "äsync"
