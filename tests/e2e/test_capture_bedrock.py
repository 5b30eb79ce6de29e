"""Agents on Amazon Bedrock through real mitmdump: boto3's own `bedrock-runtime` client
(Converse and ConverseStream, whose answers are AWS event streams) and the anthropic SDK's
`AnthropicBedrock` (InvokeModel with a Messages body, its stream in event-stream chunks).
What the agent receives is what the upstream sent (boto3 checks every message's CRC), the
calls and the results linked by `toolUseId` are recorded, the session continues, the
model comes from the path, the SigV4 credential and the session token never reach disk,
a throttling exception mid-stream is the exchange's error, and a call the schema refuses
is graded so."""

from __future__ import annotations

import base64
import json

import boto3
import pytest
from anthropic import AnthropicBedrock
from botocore.config import Config
from botocore.exceptions import EventStreamError

from toolproxy.cli.main import main
from toolproxy.scripted import Reply, Script, ScriptedCall
from toolproxy.wire.eventstream import encode

from .conftest import rows, wait_rows

ACCESS_KEY = "AKIAEXAMPLEBEDROCK01"
SECRET_KEY = "bedrock-secret-key-never-sent-0123456789"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEBedrockSessionToken0123456789"
MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "inputSchema": {
                    "json": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                        "required": ["city"],
                    }
                },
            }
        },
        {"cachePoint": {"type": "default"}},
    ]
}


def _client(url: str):
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=url,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        aws_session_token=SESSION_TOKEN,
        config=Config(retries={"max_attempts": 1}),
    )


def _on_disk(capture, *secrets: str) -> list[str]:
    return [
        str(p)
        for p in capture.rglob("*")
        if p.is_file() and any(s.encode() in p.read_bytes() for s in secrets)
    ]


def test_a_converse_agent_is_recorded_linked_and_graded(upstream, proxy, capture, tmp_path, capsys):
    calls = [
        ScriptedCall(name="get_weather", arguments={"city": "Paris"}),
        ScriptedCall(name="get_weather", arguments={"city": "Lyon", "days": "3"}),  # "3" for 3
    ]
    upstream.set_script(
        Script.of(
            Reply(text="Checking both.", tool_calls=calls, text_chunk_size=5, args_chunk_size=4),
            Reply(text="Paris 18°C, Lyon 20°C."),
            deterministic=True,
        )
    )
    client = _client(proxy.url)
    messages: list = [{"role": "user", "content": [{"text": "Paris and Lyon?"}]}]
    system = [{"text": "Answer briefly."}]
    streamed = client.converse_stream(
        modelId=MODEL, messages=messages, system=system, toolConfig=TOOLS
    )
    events = list(streamed["stream"])
    starts = [
        e["contentBlockStart"]["start"]["toolUse"] for e in events if "contentBlockStart" in e
    ]
    inputs: dict[int, str] = {}
    for e in events:
        delta = e.get("contentBlockDelta", {})
        if "toolUse" in delta.get("delta", {}):
            index = delta["contentBlockIndex"]
            inputs[index] = inputs.get(index, "") + delta["delta"]["toolUse"]["input"]
    made = [{**s, "input": json.loads(i)} for s, i in zip(starts, inputs.values(), strict=True)]
    assert [(m["name"], m["input"]) for m in made] == [(c.name, c.arguments) for c in calls]
    assert events[-2] == {"messageStop": {"stopReason": "tool_use"}}
    messages += [
        {
            "role": "assistant",
            "content": [{"text": "Checking both."}] + [{"toolUse": m} for m in made],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": m["toolUseId"], "content": [{"json": {"temp": t}}]}}
                for m, t in zip(made, (18, 20), strict=True)
            ],
        },
    ]
    final = client.converse(modelId=MODEL, messages=messages, system=system, toolConfig=TOOLS)
    assert final["output"]["message"]["content"] == [{"text": "Paris 18°C, Lyon 20°C."}]
    ex = wait_rows(
        capture,
        "SELECT exchange_id, session_id, session_source, wire_format, parse_status, streamed,"
        " model_requested, output_tokens FROM exchanges ORDER BY started_at",
        2,
    )
    assert [x[2:7] for x in ex] == [
        ("new", "bedrock_converse", "ok", True, MODEL),
        ("continued", "bedrock_converse", "ok", False, MODEL),
    ]
    assert ex[1][1] == ex[0][1] and ex[0][7] > 0
    recorded = rows(
        capture,
        "SELECT exchange_id, index, call_id, name, arguments_raw FROM tool_calls ORDER BY index",
    )
    assert recorded == [
        (ex[0][0], 0, made[0]["toolUseId"], "get_weather", '{"city":"Paris"}'),
        (ex[0][0], 1, made[1]["toolUseId"], "get_weather", '{"city":"Lyon","days":"3"}'),
    ]
    (tool,) = rows(capture, "SELECT DISTINCT name, parameters FROM tools_offered")
    assert tool[0] == "get_weather"
    assert json.loads(tool[1])["properties"]["days"] == {"type": "integer"}
    linked = rows(
        capture,
        "SELECT exchange_id, call_id, content, call_exchange_id, call_index FROM tool_results"
        " ORDER BY call_index",
    )
    assert linked == [
        (ex[1][0], made[0]["toolUseId"], '{"temp":18}', ex[0][0], 0),
        (ex[1][0], made[1]["toolUseId"], '{"temp":20}', ex[0][0], 1),
    ]
    assert _on_disk(capture, ACCESS_KEY, SESSION_TOKEN, SECRET_KEY) == []
    cases = tmp_path / "cases.yaml"
    assert main(["label", "-c", str(capture), "--out", str(cases)]) == 0
    capsys.readouterr()
    assert main(["grade", str(cases), "-c", str(capture), "--run", "bedrock", "--json"]) == 0
    graded = json.loads(capsys.readouterr().out)["summary"]
    assert graded["by_label"] == {"type_coercion": 1}  # "3" where the schema says integer

    # each turn replayed to a Chat Completions candidate: the second one's Converse
    # history (toolUse and toolResult blocks) sent as tool calls and the tool messages
    # answering them, the recorded ids kept
    upstream.set_script(Script.of(Reply(text="Done."), deterministic=True))
    upstream.clear_requests()
    config = tmp_path / "candidates.yaml"
    candidate = {"name": "chat", "base_url": f"{upstream.url}/v1", "model": "m"}
    config.write_text(json.dumps({"candidates": [{**candidate, "api_key_env": None}]}))
    argv = ["replay", str(config), "-c", str(capture), "--run", "re", "--per", "exchange"]
    assert main([*argv, "--json"]) == 0
    capsys.readouterr()
    sent = [r.body for r in upstream.requests if r.path.endswith("/chat/completions")]
    assert {len(b["messages"]) for b in sent} == {2, 5}
    (later,) = [b["messages"] for b in sent if len(b["messages"]) == 5]
    assert later[:2] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Paris and Lyon?"},
    ]
    assert [c["id"] for c in later[2]["tool_calls"]] == [m["toolUseId"] for m in made]
    assert later[2]["tool_calls"][1]["function"]["arguments"] == '{"city":"Lyon","days":"3"}'
    assert [(m["role"], m["tool_call_id"], m["content"]) for m in later[3:]] == [
        ("tool", made[0]["toolUseId"], '{"temp":18}'),
        ("tool", made[1]["toolUseId"], '{"temp":20}'),
    ]
    assert [t["function"]["name"] for t in sent[0]["tools"]] == ["get_weather"]


def test_a_throttled_stream_is_the_exchanges_error_and_reaches_the_agent(upstream, proxy, capture):
    """Bedrock can end a stream with an exception message: the agent's client raises it,
    and the capture records the exchange's error and the text that came before it."""
    text = {":event-type": "contentBlockDelta", ":message-type": "event"}
    throttled = {
        ":exception-type": "throttlingException",
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    body = encode(text, b'{"contentBlockIndex":0,"delta":{"text":"Hal"}}') + encode(
        throttled, b'{"message":"Too many tokens, please wait."}'
    )
    upstream.set_script(
        Script.of(
            Reply(
                raw_body_b64=base64.b64encode(body).decode(),
                content_type="application/vnd.amazon.eventstream",
            ),
            deterministic=True,
        )
    )
    streamed = _client(proxy.url).converse_stream(
        modelId=MODEL, messages=[{"role": "user", "content": [{"text": "Hi"}]}]
    )
    with pytest.raises(EventStreamError, match="Too many tokens"):
        list(streamed["stream"])
    (ex,) = wait_rows(
        capture,
        "SELECT parse_status, error_message, assistant_text, parse_error FROM exchanges",
        1,
    )
    assert ex[:3] == ("partial", "throttlingException: Too many tokens, please wait.", "Hal")
    assert "messageStop" in ex[3]


def test_anthropic_on_bedrock_is_recorded_as_messages(upstream, proxy, capture):
    """InvokeModel with a Messages body, streamed as base64 chunks of Anthropic's events:
    the Messages format, the model and streaming from the path."""
    calls = [ScriptedCall(name="get_weather", arguments={"city": "Oslo"})]
    upstream.set_script(
        Script.of(Reply(text="Looking.", tool_calls=calls, text_chunk_size=3), deterministic=True)
    )
    client = AnthropicBedrock(
        aws_access_key=ACCESS_KEY,
        aws_secret_key=SECRET_KEY,
        aws_session_token=SESSION_TOKEN,
        aws_region="us-east-1",
        base_url=proxy.url,
        max_retries=0,
    )
    tool = {
        "name": "get_weather",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
    with client.messages.stream(
        model=MODEL, max_tokens=100, messages=[{"role": "user", "content": "Oslo?"}], tools=[tool]
    ) as stream:
        message = stream.get_final_message()
    assert [b.input for b in message.content if b.type == "tool_use"] == [{"city": "Oslo"}]
    (ex,) = wait_rows(
        capture,
        "SELECT wire_format, parse_status, streamed, model_requested, assistant_text"
        " FROM exchanges",
        1,
    )
    assert ex == ("anthropic_messages", "ok", True, MODEL, "Looking.")
    assert rows(capture, "SELECT name, arguments_raw FROM tool_calls") == [
        ("get_weather", '{"city":"Oslo"}')
    ]
    assert _on_disk(capture, ACCESS_KEY, SESSION_TOKEN, SECRET_KEY) == []
