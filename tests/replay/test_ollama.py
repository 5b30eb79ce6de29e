"""Ollama's /api/chat requests as Chat Completions: toolproxy.replay.ollama, through
`convert.to_chat` on what the capture's own parser stored."""

from __future__ import annotations

import json

from tests import paths
from toolproxy.replay.convert import to_chat
from toolproxy.wire.ollama import parse_request

WIRE = paths.FIXTURES / "wire"


def converted(body: dict):
    parsed = parse_request(body)
    rows = [t.model_dump() for t in parsed.tools]
    return to_chat("ollama_chat", parsed.messages, parsed.system, rows, parsed.params)


def test_calls_get_text_arguments_and_ids_their_results_answer_by_place():
    body = json.loads((WIRE / "ollama_request.json").read_text())
    calls = [
        {
            "function": {
                "name": "get_current_weather",
                "arguments": {"location": city, "format": "celsius"},
            }
        }
        for city in ("Paris, FR", "Lyon, FR")
    ]
    body["messages"] += [
        {"role": "assistant", "content": "", "tool_calls": calls},
        {"role": "tool", "content": "11", "tool_name": "get_current_weather"},
        {"role": "tool", "content": "13", "tool_name": "get_current_weather"},
        {"role": "tool", "content": "stray"},
        {"role": "user", "content": "thanks", "images": ["aGk="]},
    ]
    chat = converted(body)
    assert chat.messages[:2] == body["messages"][:2]
    assistant, first, second, thanks = chat.messages[2:]
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_ollama_2_0", "call_ollama_2_1"]
    assert assistant["tool_calls"][0]["function"] == {
        "name": "get_current_weather",
        "arguments": '{"location":"Paris, FR","format":"celsius"}',
    }
    assert assistant["content"] is None
    assert (first, second) == (
        {"role": "tool", "tool_call_id": "call_ollama_2_0", "content": "11"},
        {"role": "tool", "tool_call_id": "call_ollama_2_1", "content": "13"},
    )
    assert thanks == {"role": "user", "content": "thanks"}
    assert chat.tools[0]["function"]["name"] == "get_current_weather"
    assert chat.params == {"temperature": 0.2}
    assert chat.notes == [
        "messages[5]: dropped a tool message with no call to answer",
        "messages[6]: dropped its images (no text)",
        "messages: 2 call(s) without an id given one (call_ollama_<message>_<k>)",
        "params: dropped options num_ctx (Ollama's own)",
        "params: dropped keep_alive (no Chat equivalent or provider-only)",
    ]


def test_own_ids_structured_output_and_options():
    body = {
        "model": "qwen3",
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "ok", "tool_calls": [
                {"id": "call_x", "function": {"name": "f", "arguments": '{"a": 1}'}}]},
            {"role": "tool", "content": "done", "tool_call_id": "call_x"},
        ],
        "format": {"type": "object", "properties": {"a": {"type": "integer"}}},
        "options": {"num_predict": 64, "seed": 7, "stop": ["\n\n"], "top_p": 0.9},
        "think": False,
    }  # fmt: skip
    chat = converted(body)
    assert chat.messages[1]["tool_calls"][0] == {
        "id": "call_x",
        "type": "function",
        "function": {"name": "f", "arguments": '{"a": 1}'},
    }
    assert chat.messages[2] == {"role": "tool", "tool_call_id": "call_x", "content": "done"}
    assert chat.params == {
        "top_p": 0.9,
        "seed": 7,
        "stop": ["\n\n"],
        "max_tokens": 64,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": body["format"]},
        },
    }
    assert chat.notes == ["params: dropped think (no Chat equivalent or provider-only)"]
    assert converted({"messages": [], "format": "json"}).params == {
        "response_format": {"type": "json_object"}
    }
