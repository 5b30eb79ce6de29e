"""Recorded requests of all three wire formats as Chat Completions requests."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import paths
from toolproxy.replay.convert import to_chat
from toolproxy.wire import anthropic, openai_chat, openai_responses

WIRE = paths.FIXTURES / "wire"
PARSERS = {
    "openai_chat": openai_chat.parse_request,
    "openai_responses": openai_responses.parse_request,
    "anthropic_messages": anthropic.parse_request,
}
FIXTURES = {
    "openai_chat": "chat_request.json",
    "openai_responses": "responses_request.json",
    "anthropic_messages": "anthropic_request.json",
}
FN = [{"position": 0, "name": "f", "kind": "function", "description": None, "parameters": None}]


def stored(fmt: str, body: dict | None = None):
    """What the store holds for a request: parsed by the capture's own parser."""
    body = body if body is not None else json.loads((WIRE / FIXTURES[fmt]).read_text())
    parsed = PARSERS[fmt](body)
    rows = [t.model_dump() for t in parsed.tools]
    return parsed, to_chat(fmt, parsed.messages, parsed.system, rows, parsed.params)


@pytest.mark.parametrize("fmt", list(FIXTURES))
def test_round_trip_keeps_every_turn(fmt):
    """The converted request, read back as Chat, is the same conversation turn by turn
    (role, text, calls with canonical arguments and ids, tool results by call id)."""
    parsed, chat = stored(fmt)
    assert openai_chat.build_turns(chat.messages) == parsed.turns
    assert len(parsed.turns) >= 5  # the fixtures are real multi-turn tool conversations


def test_chat_messages_as_sent():
    body = json.loads((WIRE / "chat_request.json").read_text())
    parsed, chat = stored("openai_chat", body)
    assert chat.messages == body["messages"]
    chat.messages[0]["content"] = "changed"
    assert parsed.messages[0]["content"] != "changed"  # a copy
    assert chat.tools == [
        {"type": "function", "function": {k: v for k, v in t["function"].items() if k != "strict"}}
        for t in body["tools"]
    ]
    assert chat.params == {
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "temperature": 0.2,
        "max_completion_tokens": 1024,
    }
    assert chat.notes == ["params: dropped stream_options (no Chat equivalent or provider-only)"]


def test_responses_input():
    _, chat = stored("openai_responses")
    system, user, assistant, *results = chat.messages
    assert system == {"role": "system", "content": "You are a coding agent. Be brief."}
    assert user == {"role": "user", "content": "Weather in Montréal? And find the café guide."}
    assert assistant["content"] == "I'll check the weather and the café guide."
    assert [(c["id"], c["function"]["name"]) for c in assistant["tool_calls"]] == [
        ("call_K2pQ7vX1mN4rT8wY3zB6cD9f", "get_weather"),
        ("call_R5sU0wZ3oP6tV9xA2cE5gH8j", "search_docs"),
    ]
    assert results == [
        {
            "role": "tool",
            "tool_call_id": "call_K2pQ7vX1mN4rT8wY3zB6cD9f",
            "content": '{"temp_c":-3,"sky":"snow"}',
        },
        {
            "role": "tool",
            "tool_call_id": "call_R5sU0wZ3oP6tV9xA2cE5gH8j",
            "content": "No guide found.",
        },
    ]
    assert [t["function"]["name"] for t in chat.tools] == ["get_weather", "search_docs"]
    assert chat.params == {"tool_choice": "auto", "parallel_tool_calls": True}
    assert chat.notes == [
        "tools: dropped 'web_search' (web_search: not a function)",
        "tools: dropped 'apply_patch' (custom: not a function)",
        "params: dropped include, reasoning, store (no Chat equivalent or provider-only)",
    ]


def test_anthropic_messages():
    _, chat = stored("anthropic_messages")
    assert chat.messages[0] == {
        "role": "system",
        "content": "You are a travel agent assistant.\nToday is 2025-10-02. Working directory: "
        "/home/me/trip",
    }
    calls = chat.messages[2]["tool_calls"]
    assert calls[1]["function"]["arguments"] == (
        '{"query":"café guide \\"best of\\"\\nMontréal 🌧️","path":"C:\\\\docs\\\\東京"}'
    )
    assert calls[2]["function"]["arguments"] == "{}"
    # tool results first, then the user's text of the same message
    assert [m["role"] for m in chat.messages[3:]] == ["tool", "tool", "tool", "user"]
    assert chat.messages[5]["content"] == "notes.md\nplan.txt"
    assert chat.messages[6] == {"role": "user", "content": "Keep it short."}
    assert chat.params == {"tool_choice": "auto", "max_tokens": 32000, "temperature": 0.3}
    assert "params: dropped metadata (no Chat equivalent or provider-only)" in chat.notes
    assert "tools: dropped 'bash' (bash_20250124: not a function)" in chat.notes


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ({"type": "auto"}, {"tool_choice": "auto"}),
        ({"type": "any"}, {"tool_choice": "required"}),
        ({"type": "none"}, {"tool_choice": "none"}),
        (
            {"type": "tool", "name": "f", "disable_parallel_tool_use": True},
            {
                "tool_choice": {"type": "function", "function": {"name": "f"}},
                "parallel_tool_calls": False,
            },
        ),
        ({"type": "auto", "disable_parallel_tool_use": False}, {"tool_choice": "auto"}),
    ],
)
def test_anthropic_tool_choice(choice, expected):
    chat = to_chat("anthropic_messages", [], None, FN, {"tool_choice": choice})
    assert chat.params == expected


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("required", "required"),
        ({"type": "function", "name": "f"}, {"type": "function", "function": {"name": "f"}}),
        (
            {
                "type": "allowed_tools",
                "mode": "required",
                "tools": [{"type": "function", "name": "f"}],
            },
            {
                "type": "allowed_tools",
                "allowed_tools": {
                    "mode": "required",
                    "tools": [{"type": "function", "function": {"name": "f"}}],
                },
            },
        ),
    ],
)
def test_responses_tool_choice(choice, expected):
    chat = to_chat("openai_responses", "hi", None, FN, {"tool_choice": choice})
    assert chat.params == {"tool_choice": expected}


def test_hosted_tool_choice_and_unknown_anthropic_choice_are_dropped_with_a_note():
    chat = to_chat("openai_responses", "hi", None, FN, {"tool_choice": {"type": "web_search"}})
    assert chat.params == {} and chat.notes == [
        "params: dropped tool_choice (no Chat equivalent or provider-only)"
    ]
    chat = to_chat("anthropic_messages", [], None, FN, {"tool_choice": {"type": "weird"}})
    assert chat.params == {} and "tool_choice" in chat.notes[0]


def test_param_mapping():
    params = {
        "max_output_tokens": 100,
        "top_p": 0.5,
        "text": {"format": {"type": "json_schema", "name": "x", "schema": {"type": "object"}}},
        "previous_response_id": "resp_1",
        "store": True,
    }
    chat = to_chat("openai_responses", "hi", None, [], params)
    assert chat.params == {
        "max_tokens": 100,
        "top_p": 0.5,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "x", "schema": {"type": "object"}},
        },
    }
    assert chat.notes == [
        "params: dropped previous_response_id, store (no Chat equivalent or provider-only)"
    ]
    chat = to_chat(
        "anthropic_messages", [], None, [], {"stop_sequences": ["END"], "top_k": 5, "thinking": {}}
    )
    assert chat.params == {"stop": ["END"]}
    assert chat.notes == ["params: dropped thinking, top_k (no Chat equivalent or provider-only)"]
    chat = to_chat(
        "openai_chat",
        [],
        None,
        [],
        {"seed": 1, "logit_bias": {"1": 2}, "n": 2, "user": "u", "stream": True},
    )
    assert chat.params == {"seed": 1}
    assert chat.notes == [
        "params: dropped logit_bias, n, user (no Chat equivalent or provider-only)"
    ]


def test_tool_choice_without_tools_is_dropped():
    chat = to_chat(
        "openai_chat", [], None, [], {"tool_choice": "auto", "parallel_tool_calls": False}
    )
    assert chat.params == {}
    assert chat.notes == [
        "params: dropped tool_choice, parallel_tool_calls (no tools left to choose from)"
    ]


def test_responses_items_without_chat_equivalent():
    items = [
        {"type": "message", "role": "developer", "content": "rules"},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "look"},
                {"type": "input_image", "image_url": "https://x/y.png"},
            ],
        },
        {"type": "reasoning", "summary": []},
        {"type": "custom_tool_call", "call_id": "c1", "name": "patch", "input": "diff"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "ok"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"},
        {
            "type": "function_call_output",
            "call_id": "c2",
            "output": [{"type": "input_text", "text": "r"}],
        },
    ]
    chat = to_chat("openai_responses", items, None, FN, {})
    assert chat.messages == [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "look"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "r"},
    ]
    assert chat.notes == [
        "input[1]: dropped a input_image part (no text)",
        "input[3]: dropped a custom_tool_call item (no Chat Completions equivalent)",
        "input[4]: dropped a custom-tool output (custom tools are dropped)",
        "input[5]: dropped a web_search_call item (no Chat Completions equivalent)",
    ]


def test_anthropic_images_and_thinking():
    messages = [
        {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "AA"},
                },
                {"type": "text", "text": "what is this?"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "s"},
                {"type": "text", "text": "a cat"},
            ],
        },
    ]
    chat = to_chat("anthropic_messages", messages, None, [], {"max_tokens": 10})
    assert chat.messages == [
        {"role": "user", "content": "what is this?"},
        {"role": "assistant", "content": "a cat"},
    ]
    assert chat.notes == ["messages[0]: dropped a image block"]


def test_tools_from_rows_in_position_order():
    rows = [
        {
            "position": 1,
            "name": "b",
            "kind": "function",
            "description": "B",
            "parameters": {"type": "object"},
        },
        {"position": 0, "name": "a", "kind": "function", "description": None, "parameters": None},
    ]
    chat = to_chat("openai_chat", [], None, rows, {})
    assert chat.tools == [
        {
            "type": "function",
            "function": {"name": "a", "parameters": {"type": "object", "properties": {}}},
        },
        {
            "type": "function",
            "function": {"name": "b", "description": "B", "parameters": {"type": "object"}},
        },
    ]


def test_unknown_wire_format():
    with pytest.raises(ValueError, match="mcp"):
        to_chat("mcp", [], None, [], {})


def test_odd_shapes_never_crash():
    chat = to_chat(
        "openai_responses",
        [
            "not an object",
            {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]},
            {"role": "user", "content": None},
            {"role": "user", "content": ["plain", {"type": "input_text", "text": "part"}]},
            {"type": "function_call_output", "call_id": "c9", "output": "late"},
        ],
        None,
        [],
        None,
    )
    assert chat.messages == [
        {"role": "assistant", "content": "no"},
        {"role": "user", "content": ""},
        {"role": "user", "content": "plain\npart"},
        {"role": "tool", "tool_call_id": "c9", "content": "late"},
    ]
    assert chat.notes == ["input[0]: dropped a non-object item"]
    chat = to_chat("anthropic_messages", ["x", {"role": "user", "content": []}], None, [], {})
    assert chat.messages == [{"role": "user", "content": ""}]
    assert chat.notes == ["messages[0]: dropped a non-object message"]
    assert to_chat("openai_chat", None, None, [], None).messages == []
    # an agent's Chat request holding a non-object message (a lenient server answered it)
    chat = to_chat("openai_chat", [{"role": "user", "content": "hi"}, "junk", 3], None, [], {})
    assert chat.messages == [{"role": "user", "content": "hi"}]
    assert chat.notes == [
        "messages[1]: dropped a non-object message",
        "messages[2]: dropped a non-object message",
    ]


def test_chat_messages_are_copied_unless_the_caller_hands_them_over():
    calls = [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]
    messages = [{"role": "assistant", "content": None, "tool_calls": calls}]
    copied = to_chat("openai_chat", messages, None, [], None)
    copied.messages[0]["tool_calls"][0]["function"]["arguments"] = '{"a": 1}'
    assert calls[0]["function"]["arguments"] == "{}"
    handed = to_chat("openai_chat", messages, None, [], None, owned=True)
    assert handed.messages[0]["tool_calls"] is calls  # not copied again


_JSON = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=4),
        st.sampled_from(["user", "assistant", "tool", "system", "developer", "message",
                         "function_call", "function_call_output", "text", "input_text",
                         "tool_use", "tool_result", "thinking", "image", "reasoning"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(["role", "content", "type", "text", "tool_calls", "function",
                             "name", "arguments", "id", "call_id", "output", "input",
                             "tool_use_id", "is_error", "tool_call_id", "refusal"]),
            inner,
            max_size=5,
        ),
    ),
    max_leaves=25,
)  # fmt: skip
_ROWS = st.lists(  # tools_offered rows, typed as the store gives them
    st.fixed_dictionaries(
        {"position": st.integers(0, 5), "name": st.one_of(st.none(), st.text(max_size=4)),
         "kind": st.sampled_from([None, "function", "web_search"]),
         "description": st.one_of(st.none(), st.text(max_size=4)), "parameters": _JSON}
    ),
    max_size=3,
)  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(["openai_chat", "openai_responses", "anthropic_messages", "ollama_chat"]),
    _JSON,
    st.one_of(st.none(), st.text(max_size=4)),
    _ROWS,
    st.one_of(st.none(), st.dictionaries(st.sampled_from(
        ["tool_choice", "max_tokens", "temperature", "stop", "parallel_tool_calls",
         "response_format", "text", "thinking", "max_output_tokens", "stream"]), _JSON,
        max_size=4)),
)  # fmt: skip
def test_any_recorded_request_converts_without_raising(fmt, messages, system, rows, params):
    # what an agent sent is anything JSON (found: a non-object Chat message raised)
    chat = to_chat(fmt, messages, system, rows, params)
    assert all(isinstance(m, dict) for m in chat.messages)
