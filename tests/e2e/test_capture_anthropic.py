"""Real mitmdump + the real anthropic SDK (Messages, streamed and not)."""

from __future__ import annotations

import anthropic

from toolproxy.scripted import Reply, Script, ScriptedCall

from .conftest import wait_rows

TOOLS = [
    {
        "name": "get_weather",
        "description": "weather",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
REPLY = Reply(
    text="Let me check.",
    tool_calls=[
        ScriptedCall(name="get_weather", arguments={"city": "Zürich"}),
        ScriptedCall(name="get_weather", arguments={"city": "東京"}),
    ],
    args_chunk_size=4,
)


def client(base):
    return anthropic.Anthropic(base_url=base, api_key="sk-ant-test-key", max_retries=0)


def test_messages_non_streamed_byte_identical_and_recorded(upstream, proxy, capture):
    upstream.set_script(Script.of(REPLY, deterministic=True))
    args = dict(
        model="claude-x",
        max_tokens=100,
        tools=TOOLS,
        messages=[{"role": "user", "content": "weather?"}],
    )
    direct = client(upstream.url).messages.with_raw_response.create(**args).http_response.content
    upstream.reset()
    proxied = client(proxy.url).messages.with_raw_response.create(**args).http_response.content
    assert proxied == direct
    calls = wait_rows(
        capture, "SELECT name, arguments->>'city', call_id FROM tool_calls ORDER BY index", 2
    )
    assert [c[1] for c in calls] == ["Zürich", "東京"]
    ex = wait_rows(
        capture,
        "SELECT wire_format, finish_reason, assistant_text, "
        "coalesce(request_headers->>'x-api-key', request_headers->>'authorization') "
        "FROM exchanges",
        1,
    )
    assert ex == [("anthropic_messages", "tool_use", "Let me check.", "[REDACTED]")]


def test_messages_streamed_input_json_delta(upstream, proxy, capture):
    upstream.set_script(Script.of(REPLY, deterministic=True))
    with client(proxy.url).messages.stream(
        model="claude-x",
        max_tokens=100,
        tools=TOOLS,
        messages=[{"role": "user", "content": "weather?"}],
    ) as stream:
        final = stream.get_final_message()
    inputs = [b.input for b in final.content if b.type == "tool_use"]
    assert inputs == [{"city": "Zürich"}, {"city": "東京"}]
    calls = wait_rows(capture, "SELECT arguments_raw FROM tool_calls ORDER BY index", 2)
    assert [c[0] for c in calls] == ['{"city":"Zürich"}', '{"city":"東京"}']
    ex = wait_rows(capture, "SELECT streamed, parse_status, output_tokens > 0 FROM exchanges", 1)
    assert ex == [(True, "ok", True)]
