"""Gemini generateContent requests as Chat Completions: toolproxy.replay.gemini, through
`convert.to_chat` on what the capture's own parser stored."""

from __future__ import annotations

import json

from tests import paths
from toolproxy.replay.convert import to_chat
from toolproxy.wire.gemini import parse_request

WIRE = paths.FIXTURES / "wire"


def converted(body: dict):
    parsed = parse_request(body)
    rows = [t.model_dump() for t in parsed.tools]
    return to_chat("gemini", parsed.messages, parsed.system, rows, parsed.params)


def test_a_session_with_calls_and_their_results_by_place():
    body = json.loads((WIRE / "gemini_request.json").read_text())
    answer = json.loads((WIRE / "gemini_response_function_call.json").read_text())
    body["contents"] += [
        answer["candidates"][0]["content"],
        {"role": "user", "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"temp": 18}}},
            {"functionResponse": {"name": "get_time", "response": {"time": "09:00"}}},
            {"functionResponse": {"name": "extra", "response": {}}},
            {"text": "Thanks!"},
            {"inlineData": {"mimeType": "image/png", "data": "aGk="}}]},
    ]  # fmt: skip
    chat = converted(body)
    system, user, assistant, weather, time, thanks = chat.messages
    assert system == {"role": "system", "content": "Be brief."}
    assert user == {"role": "user", "content": "What's the weather in Paris, and the time there?"}
    assert assistant["content"] == "Let me look that up."
    assert [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in assistant["tool_calls"]
    ] == [
        ("call_gemini_1_0", "get_weather", '{"city":"Paris","unit":"celsius"}'),
        ("call_gemini_1_1", "get_time", '{"timezone":"Europe/Paris"}'),
    ]
    assert (weather["tool_call_id"], weather["content"]) == ("call_gemini_1_0", '{"temp":18}')
    assert (time["tool_call_id"], time["content"]) == ("call_gemini_1_1", '{"time":"09:00"}')
    assert thanks == {"role": "user", "content": "Thanks!"}
    # the API's schema went out as the JSON Schema it means; the built-in search did not
    assert [t["function"]["name"] for t in chat.tools] == ["get_weather", "get_time"]
    assert chat.tools[0]["function"]["parameters"]["properties"]["city"] == {"type": "string"}
    assert chat.params == {"temperature": 0.2, "max_tokens": 256, "tool_choice": "auto"}
    assert chat.notes == [
        "contents[2]: dropped a function response with no call",
        "contents[2]: dropped a part (inlineData: no text)",
        "contents: 2 call(s) without an id given one (call_gemini_<content>_<k>)",
        "tools: dropped 'googleSearch' (googleSearch: not a function)",
        "params: dropped generationConfig thinkingConfig (Gemini's own)",
    ]


def test_own_ids_forced_function_and_json_output():
    call = {"id": "fc_1", "name": "f", "args": {"a": 1}}
    reply = {"id": "fc_1", "name": "f", "response": "done"}
    calling = {"mode": "ANY", "allowed_function_names": ["f"]}
    config = {"responseMimeType": "application/json", "responseSchema": {"type": "OBJECT"}}
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [{"text": "hm", "thought": True}, {"functionCall": call}]},
            {"role": "user", "parts": [{"functionResponse": reply}]},
        ],
        "tool_config": {"function_calling_config": calling},
        "generationConfig": config | {"top_p": 0.5, "stopSequences": ["END"]},
        "safetySettings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}],
    }
    chat = converted(body)
    assert chat.messages[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "fc_1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
        ],
    }
    assert chat.messages[2] == {"role": "tool", "tool_call_id": "fc_1", "content": "done"}
    assert chat.params == {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": {"type": "object"}},
        },
        "stop": ["END"],
        "top_p": 0.5,
    }
    assert chat.notes == [
        "params: dropped safetySettings (no Chat equivalent or provider-only)",
        "params: dropped tool_choice (no tools left to choose from)",
    ]
