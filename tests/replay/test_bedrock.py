"""Bedrock Converse requests as Chat Completions: toolproxy.replay.bedrock, through
`convert.to_chat` on what the capture's own parser stored."""

from __future__ import annotations

import json

from tests import paths
from toolproxy.replay.convert import to_chat
from toolproxy.wire.bedrock import parse_request

BODY = json.loads((paths.FIXTURES / "wire" / "bedrock_request.json").read_text())
SCHEMA = BODY["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]


def converted(body: dict):
    parsed = parse_request(body)
    rows = [t.model_dump() for t in parsed.tools]
    return to_chat("bedrock_converse", parsed.messages, parsed.system, rows, parsed.params)


def test_a_session_with_calls_and_their_results_by_id():
    chat = converted(BODY)
    system, user, assistant, weather, time, thanks = chat.messages
    assert system == {"role": "system", "content": "Be brief."}
    assert user == {"role": "user", "content": "Paris?"}
    assert assistant["content"] == "Checking."
    assert [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in assistant["tool_calls"]
    ] == [("tu_1", "get_weather", '{"city":"Paris"}'), ("tu_2", "get_time", "{}")]
    assert weather == {"role": "tool", "tool_call_id": "tu_1", "content": '{"temp":18}'}
    assert time == {"role": "tool", "tool_call_id": "tu_2", "content": "Error: no clock"}
    assert thanks == {"role": "user", "content": "Thanks."}
    assert [t["function"]["name"] for t in chat.tools] == ["get_weather", "get_time"]
    assert chat.tools[0]["function"]["parameters"] == SCHEMA
    assert chat.notes == [
        "messages[0]: dropped a block (image: no text)",
        "tools: dropped 'nova_grounding' (system_tool: not a function)",
        "params: dropped additionalModelRequestFields (no Chat equivalent or provider-only)",
    ]


def test_params_map_to_chats_names():
    assert converted(BODY).params == {
        "max_tokens": 256,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop": ["X"],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
    }
    for choice, chat in (({"any": {}}, "required"), ({"auto": {}}, "auto")):
        body = {**BODY, "toolConfig": {**BODY["toolConfig"], "toolChoice": choice}}
        assert converted(body).params["tool_choice"] == chat
    odd = {**BODY, "inferenceConfig": {"maxTokens": 5, "performanceLatency": "optimized"}}
    assert "params: dropped inferenceConfig performanceLatency (Bedrock's own)" in (
        converted(odd).notes
    )


def test_a_non_object_message_is_dropped_with_a_note():
    chat = converted({"messages": ["x", {"role": "user", "content": [{"text": "hi"}]}]})
    assert chat.messages == [{"role": "user", "content": "hi"}]
    assert chat.notes == ["messages[0]: dropped a non-object message"]
