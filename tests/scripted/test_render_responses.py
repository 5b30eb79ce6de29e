"""Responses API replies: wire shape, and the real openai SDK parsing them."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream
from toolproxy.scripted.context import Context
from toolproxy.scripted.render_responses import render_body, render_events

SEARCH = ScriptedCall(name="search", arguments={"q": "Café ☕ ünïcode"})
OPEN = ScriptedCall(name="open", arguments={"path": "/tmp/x"}, id="call_mine")
BOTH = Reply(text="Looking.", tool_calls=[SEARCH, OPEN], args_chunk_size=6, text_chunk_size=3)


def events(reply: Reply, ctx: Context) -> list[dict[str, Any]]:
    parsed = []
    for raw in render_events(reply, ctx):
        head, data = raw.decode().removesuffix("\n\n").split("\n")
        payload = json.loads(data.removeprefix("data: "))
        assert head == f"event: {payload['type']}"
        parsed.append(payload)
    return parsed


def test_body_shape_and_echoed_request_fields() -> None:
    request = {"instructions": "be brief", "previous_response_id": "resp_0", "tools": [{"x": 1}]}
    body = json.loads(render_body(BOTH, Context("responses", model="m", request=request)))
    assert body["object"] == "response" and body["status"] == "completed"
    assert (body["instructions"], body["previous_response_id"], body["tools"]) == (
        "be brief",
        "resp_0",
        [{"x": 1}],
    )
    message, search, opened = body["output"]
    assert message["content"][0]["text"] == "Looking."
    assert search["arguments"] == '{"q":"Café ☕ ünïcode"}'
    assert (search["call_id"], opened["call_id"]) == ("call_default_0001_0", "call_mine")
    assert body["usage"]["total_tokens"] > 0


def test_length_finish_makes_an_incomplete_response() -> None:
    body = json.loads(render_body(Reply(text="cut", finish_reason="length"), Context("responses")))
    assert body["status"] == "incomplete"
    assert body["incomplete_details"] == {"reason": "max_output_tokens"}
    final = events(Reply(text="cut", finish_reason="length"), Context("responses"))[-1]
    assert final["type"] == "response.incomplete"


def test_event_order_and_sequence_numbers() -> None:
    parsed = events(BOTH, Context("responses"))
    assert [e["sequence_number"] for e in parsed] == list(range(len(parsed)))
    kinds = [e["type"] for e in parsed]
    assert kinds[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert kinds[-1] == "response.completed"
    assert kinds.count("response.output_item.done") == 3
    assert (
        parsed[0]["response"]["status"] == "in_progress" and parsed[0]["response"]["output"] == []
    )
    text = "".join(e["delta"] for e in parsed if e["type"] == "response.output_text.delta")
    assert text == "Looking."
    for index, call in enumerate([SEARCH, OPEN], start=1):
        pieces = [
            e["delta"]
            for e in parsed
            if e["type"] == "response.function_call_arguments.delta" and e["output_index"] == index
        ]
        assert json.loads("".join(pieces)) == call.arguments
    assert (
        parsed[-1]["response"]["output"]
        == json.loads(render_body(BOTH, Context("responses")))["output"]
    )


@pytest.fixture
def client(scripted_upstream: ScriptedUpstream) -> openai.OpenAI:
    return openai.OpenAI(base_url=scripted_upstream.url + "/v1", api_key="k", max_retries=0)


def test_sdk_parses_text_and_calls(
    client: openai.OpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(BOTH))
    response = client.responses.create(model="gpt-r", input="hi")
    assert response.output_text == "Looking."
    assert response.model == "gpt-r"
    calls = [item for item in response.output if item.type == "function_call"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("search", SEARCH.arguments),
        ("open", OPEN.arguments),
    ]


def test_sdk_stream_helper_builds_the_final_response(
    client: openai.OpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(BOTH))
    with client.responses.stream(model="m", input="hi") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == "Looking."
    assert final.output_text == "Looking."
    assert [item.type for item in final.output] == ["message", "function_call", "function_call"]
    assert final.usage is not None and final.usage.output_tokens > 0


def test_sdk_sees_malformed_arguments_verbatim(
    client: openai.OpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    broken = '{"q": "unterminated'
    scripted_upstream.set_script(
        Script.of(Reply(tool_calls=[ScriptedCall(name="s", arguments=broken)]))
    )
    item = client.responses.create(model="m", input="hi").output[0]
    assert item.type == "function_call" and item.arguments == broken
    done = [
        e.arguments
        for e in client.responses.create(model="m", input="hi", stream=True)
        if e.type == "response.function_call_arguments.done"
    ]
    assert done == [broken]


async def test_async_sdk_streamed_and_not(scripted_upstream: ScriptedUpstream) -> None:
    client = openai.AsyncOpenAI(base_url=scripted_upstream.url + "/v1", api_key="k", max_retries=0)
    scripted_upstream.set_script(Script.of(Reply(text="ásync", tool_calls=[SEARCH])))
    response = await client.responses.create(model="m", input="hi")
    assert response.output_text == "ásync"
    stream = await client.responses.create(model="m", input="hi", stream=True)
    kinds = [event.type async for event in stream]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
