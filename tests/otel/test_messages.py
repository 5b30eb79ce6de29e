"""Conversations and replies as span attributes, in each wire format."""

from __future__ import annotations

import json

from toolproxy.otel.messages import (
    TEXT_LIMIT,
    clip,
    input_messages,
    output_messages,
    put,
    turns_of,
)
from toolproxy.store.rows import CallRow

ANTHROPIC = [
    {"role": "user", "content": "weather in Oslo?"},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "tu1", "name": "get_weather", "input": {"city": "Oslo"}}
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "snow"}],
    },
]


def test_an_anthropic_conversation_with_its_system_prompt():
    turns = turns_of("anthropic_messages", "be brief", ANTHROPIC)
    attrs = input_messages(turns, "be brief", "anthropic_messages")
    assert attrs["llm.input_messages.0.message.role"] == "system"
    assert attrs["llm.input_messages.0.message.content"] == "be brief"
    assert attrs["llm.input_messages.1.message.content"] == "weather in Oslo?"
    call = "llm.input_messages.2.message.tool_calls.0.tool_call"
    assert attrs[f"{call}.function.name"] == "get_weather"
    assert attrs[f"{call}.id"] == "tu1"
    assert json.loads(str(attrs[f"{call}.function.arguments"])) == {"city": "Oslo"}
    assert attrs["llm.input_messages.3.message.role"] == "tool"
    assert attrs["llm.input_messages.3.message.tool_call_id"] == "tu1"
    semconv = json.loads(str(attrs["gen_ai.input.messages"]))
    assert semconv[0] == {"role": "system", "parts": [{"type": "text", "content": "be brief"}]}
    assert semconv[2]["parts"][0]["type"] == "tool_call"
    assert semconv[3] == {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "tu1", "response": "snow"}],
    }
    assert json.loads(str(attrs["gen_ai.system_instructions"])) == [
        {"type": "text", "content": "be brief"}
    ]
    assert attrs["input.value"] == "weather in Oslo?"


def test_a_bedrock_converse_conversation_reads_like_anthropics():
    use = {"toolUseId": "tu1", "name": "get_weather", "input": {"city": "Oslo"}}
    converse = [
        {"role": "user", "content": [{"text": "weather in Oslo?"}]},
        {"role": "assistant", "content": [{"toolUse": use}]},
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "tu1", "content": [{"text": "7C"}]}}],
        },
    ]
    attrs = input_messages(turns_of("bedrock_converse", "be brief", converse), "be brief", "x")
    assert attrs["llm.input_messages.1.message.content"] == "weather in Oslo?"
    call = "llm.input_messages.2.message.tool_calls.0.tool_call"
    assert (attrs[f"{call}.id"], attrs[f"{call}.function.name"]) == ("tu1", "get_weather")
    assert attrs["llm.input_messages.3.message.role"] == "tool"
    assert attrs["llm.input_messages.3.message.content"] == "7C"


def test_chat_keeps_its_system_message_in_the_messages_once():
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
    attrs = input_messages(turns_of("openai_chat", None, messages), None, "openai_chat")
    assert attrs["llm.input_messages.0.message.role"] == "system"
    assert attrs["llm.input_messages.1.message.content"] == "hi"
    assert "llm.input_messages.2.message.role" not in attrs


def test_responses_input_as_a_plain_string():
    turns = turns_of("openai_responses", "instructions", "what time is it?")
    attrs = input_messages(turns, "instructions", "openai_responses")
    assert attrs["input.value"] == "what time is it?"
    assert attrs["llm.input_messages.0.message.role"] == "system"


def test_an_unknown_format_has_no_turns():
    assert turns_of("mcp", None, [{"role": "user", "content": "x"}]) == []
    assert input_messages([], None, "mcp") == {}


def test_a_reply_with_text_and_calls():
    calls = [CallRow("x", "s", 0, "c1", "get_time", '{"tz":"UTC"}', {"tz": "UTC"}, None)]
    attrs = output_messages("checking", calls, "tool_calls")
    assert attrs["llm.output_messages.0.message.role"] == "assistant"
    assert attrs["llm.output_messages.0.message.content"] == "checking"
    assert attrs["llm.output_messages.0.message.tool_calls.0.tool_call.id"] == "c1"
    (message,) = json.loads(str(attrs["gen_ai.output.messages"]))
    assert message["finish_reason"] == "tool_calls"
    assert [p["type"] for p in message["parts"]] == ["text", "tool_call"]
    assert output_messages(None, [], None) == {}
    only_calls = output_messages(None, calls, None)
    assert only_calls["output.value"] == 'get_time({"tz":"UTC"})'


def test_long_text_is_clipped_and_empty_values_left_out():
    assert clip("x" * (TEXT_LIMIT + 5)) == "x" * (TEXT_LIMIT - 1) + "…"
    assert clip("short") == "short" and clip(None) is None
    attrs: dict = {}
    put(attrs, "a", None)
    put(attrs, "b", "")
    put(attrs, "c", 3)
    put(attrs, "d", {"k": 1})
    assert attrs == {"c": 3, "d": "{'k': 1}"}
