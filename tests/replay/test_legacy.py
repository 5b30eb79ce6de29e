"""The legacy functions API as tools: toolproxy.replay.legacy, through to_chat as replay
uses it, on requests read by the capture's own parser."""

from __future__ import annotations

import json

from tests import paths
from toolproxy.replay import legacy
from toolproxy.replay.convert import to_chat
from toolproxy.wire import openai_chat

WIRE = paths.FIXTURES / "wire"
ASKED = {"role": "user", "content": "Weather in Boston, then the time?"}
FUNCTIONS = [
    {"name": "get_current_weather", "parameters": {"type": "object", "properties": {}}},
    {"name": "get_time", "description": "Now."},
]


def conversation() -> list[dict]:
    """An agent of the legacy API: the model's function_call sent back, then its result."""
    reply = json.loads((WIRE / "chat_response_function_call.json").read_text())
    called = reply["choices"][0]["message"]
    answered = {"role": "function", "name": "get_current_weather", "content": '{"temp": 72}'}
    again = {"role": "assistant", "content": None, "function_call": {"name": "get_time"}}
    return [ASKED, called, answered, again]


def converted(messages: list[dict], params: dict | None = None):
    body = {"model": "m", "messages": messages, "functions": FUNCTIONS, **(params or {})}
    parsed = openai_chat.parse_request(body)
    rows = [t.model_dump() for t in parsed.tools]
    return parsed, to_chat("openai_chat", parsed.messages, None, rows, parsed.params)


def test_calls_and_results_become_tool_calls_and_tool_messages():
    parsed, chat = converted(conversation())
    called, answered, again = chat.messages[1:]
    assert "function_call" not in called and called["tool_calls"] == [
        {
            "id": "call_legacy_1",
            "type": "function",
            "function": conversation()[1]["function_call"],
        }
    ]
    assert answered == {"role": "tool", "tool_call_id": "call_legacy_1", "content": '{"temp": 72}'}
    assert again["tool_calls"][0]["id"] == "call_legacy_3"
    assert chat.messages[0] is not ASKED and chat.messages[0] == ASKED  # copied, unchanged
    assert chat.notes == [
        "messages: 3 legacy function_call / function message(s) sent as tool calls and "
        "results (ids call_legacy_<n>, n the call's message)"
    ]
    assert [t["function"]["name"] for t in chat.tools] == ["get_current_weather", "get_time"]


def test_the_converted_conversation_is_the_recorded_one_but_for_the_made_up_ids():
    parsed, chat = converted(conversation())
    back = openai_chat.build_turns(chat.messages)
    assert [(t.role, t.text, [c[1:] for c in t.calls]) for t in back] == [
        (t.role, t.text, [c[1:] for c in t.calls]) for t in parsed.turns
    ]
    assert [t.call_id for t in back if t.role == "tool"] == ["call_legacy_1"]


def test_a_result_with_no_call_to_answer_stays_as_it_was():
    stray = {"role": "function", "name": "f", "content": "x"}
    twice = [*conversation()[:3], dict(conversation()[2])]
    notes: list[str] = []
    out = legacy.modern_messages([ASKED, stray, *twice[1:]], notes)
    assert out[1] is stray
    assert out[3]["role"] == "tool" and out[4] == twice[3]  # one call: one answer


def test_function_call_param_is_the_tool_choice():
    for given, wanted in (
        ("auto", "auto"),
        ("none", "none"),
        ({"name": "get_time"}, {"type": "function", "function": {"name": "get_time"}}),
    ):
        _, chat = converted([ASKED], {"function_call": given})
        assert chat.params == {"tool_choice": wanted}
        assert chat.notes == []
    _, chat = converted([ASKED], {"function_call": "auto", "tool_choice": "required"})
    assert chat.params == {"tool_choice": "required"}
    assert chat.notes == ["params: dropped function_call (the request has a tool_choice)"]
    _, chat = converted([ASKED], {"function_call": 7})
    assert chat.params == {}
    assert chat.notes == ["params: dropped function_call 7 (not auto, none or a name)"]
