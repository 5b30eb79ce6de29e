"""Bedrock Converse replies: wire shape, and the real boto3 client reading them (the
ConverseStream's AWS event stream, whose every message's CRC it checks, a whole answer,
and Bedrock's throttling error); and Anthropic's events in InvokeModel's chunks, read by
the anthropic SDK's AnthropicBedrock."""

from __future__ import annotations

import json

import boto3
import pytest
from anthropic import AnthropicBedrock
from botocore.config import Config

from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream
from toolproxy.scripted.context import Context
from toolproxy.scripted.render_bedrock import render_body, render_events
from toolproxy.wire.bedrock import parse_response, parse_stream
from toolproxy.wire.eventstream import aws_stream

WEATHER = ScriptedCall(name="get_weather", arguments={"city": "Zürich"})
BOTH = Reply(text="Checking the weather.", tool_calls=[WEATHER], text_chunk_size=8)
MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


def test_body_and_stream_read_back_the_same():
    body = json.loads(render_body(BOTH, Context("converse", model=MODEL)))
    assert body["stopReason"] == "tool_use"
    assert body["output"]["message"]["content"][1] == {
        "toolUse": {
            "toolUseId": "tooluse_default_0001_0",
            "name": "get_weather",
            "input": {"city": "Zürich"},
        }
    }
    plain = parse_response(body)
    events = render_events(BOTH, Context("converse", stream=True, bedrock=True))
    streamed, notes = parse_stream(aws_stream(b"".join(events), True))
    assert notes == [] and streamed.complete and streamed.text == "Checking the weather."
    assert streamed.tool_calls == plain.tool_calls and streamed.usage == plain.usage


def _client(url: str):
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=url,
        aws_access_key_id="AKIATEST",
        aws_secret_access_key="test-secret",
        config=Config(retries={"max_attempts": 1}),
    )


def test_the_real_client_streams_reads_whole_answers_and_errors():
    script = Script.of(BOTH, Reply(text="Sunny."), Reply(status=429))
    with ScriptedUpstream(script) as upstream:
        client = _client(upstream.url)
        asked = [{"role": "user", "content": [{"text": "Weather?"}]}]
        events = list(client.converse_stream(modelId=MODEL, messages=asked)["stream"])
        text = "".join(
            e["contentBlockDelta"]["delta"].get("text", "")
            for e in events
            if "contentBlockDelta" in e
        )
        assert text == BOTH.text
        (start,) = [
            e["contentBlockStart"]["start"]["toolUse"] for e in events if "contentBlockStart" in e
        ]
        assert start["name"] == "get_weather"
        assert events[-1]["metadata"]["usage"]["outputTokens"] > 0
        whole = client.converse(modelId=MODEL, messages=asked)
        assert whole["output"]["message"]["content"] == [{"text": "Sunny."}]
        with pytest.raises(client.exceptions.ThrottlingException):
            client.converse(modelId=MODEL, messages=asked)
        assert upstream.requests[0].path == (
            "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream"
        )


def test_anthropic_events_in_invoke_models_chunks_reach_the_sdk():
    with ScriptedUpstream(Script.of(BOTH)) as upstream:
        client = AnthropicBedrock(
            aws_access_key="AKIATEST",
            aws_secret_key="test-secret",
            aws_region="us-east-1",
            base_url=upstream.url,
            max_retries=0,
        )
        with client.messages.stream(
            model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "Weather?"}]
        ) as stream:
            message = stream.get_final_message()
        assert [b.type for b in message.content] == ["text", "tool_use"]
        assert message.content[1].input == {"city": "Zürich"}
        assert upstream.requests[0].path.endswith("/invoke-with-response-stream")
