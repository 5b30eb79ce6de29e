"""A hosted MCP server's calls in a replayed Chat request: toolproxy.replay.hosted, and
through `convert.to_chat` as a replay builds its requests from what the capture stored."""

from __future__ import annotations

import json

from tests import paths
from toolproxy.replay import hosted
from toolproxy.replay.convert import to_chat
from toolproxy.wire import anthropic, openai_responses

WIRE = paths.FIXTURES / "wire"
ANSWER = json.loads((WIRE / "responses_response_mcp.json").read_text())
CALL_ID = ANSWER["output"][1]["id"]
RESULT = ANSWER["output"][1]["output"]


def test_a_sent_back_hosted_call_is_a_tool_call_answered_by_what_the_provider_got():
    # the agent appends the answer ([listing, mcp_call, message]) and asks again
    body = {
        "model": "gpt-4.1",
        "tools": ANSWER["tools"],
        "input": [
            {"role": "user", "content": "Which transports?"},
            *ANSWER["output"],
            {"role": "user", "content": "And in 2024?"},
        ],
    }
    parsed = openai_responses.parse_request(body)
    rows = [t.model_dump() for t in parsed.tools]
    chat = to_chat("openai_responses", parsed.messages, None, rows, parsed.params)
    args = ANSWER["output"][1]["arguments"]
    assert chat.messages == [
        {"role": "user", "content": "Which transports?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": CALL_ID,
                    "type": "function",
                    "function": {"name": "ask_question", "arguments": args},
                }
            ],
        },
        {"role": "tool", "tool_call_id": CALL_ID, "content": RESULT},
        {"role": "assistant", "content": "It supports two transports: stdio and Streamable HTTP."},
        {"role": "user", "content": "And in 2024?"},
    ]
    # the candidate is offered the server's tools, as the provider listed them
    assert [t["function"]["name"] for t in chat.tools] == ["read_wiki_structure", "ask_question"]
    listed = ANSWER["output"][0]["tools"][1]
    assert chat.tools[1]["function"]["parameters"] == listed["input_schema"]
    assert chat.notes == [
        "input: 1 hosted MCP call(s) sent as tool calls, each answered by the result the"
        " provider got",
        "tools: dropped 'deepwiki' (mcp: not a function)",
        "tools: 2 tool(s) a hosted MCP server listed offered as functions (the candidate's"
        " calls are compared with the recorded ones, not run)",
    ]


def test_approvals_errors_and_denials():
    held = {"id": "mcpr_1", "type": "mcp_approval_request", "name": "t", "arguments": "{}",
            "server_label": "s"}  # fmt: skip
    approved = {"type": "mcp_approval_response", "approve": True, "approval_request_id": "mcpr_1"}
    failure = {"code": -32000, "message": "boom"}
    run = {"id": "mcp_9", "type": "mcp_call", "approval_request_id": "mcpr_1", "name": "t",
           "arguments": "{}", "output": None, "error": failure}  # fmt: skip
    denied_held = held | {"id": "mcpr_2"}
    denied = {"type": "mcp_approval_response", "approve": False, "approval_request_id": "mcpr_2"}
    lost = {"id": "mcp_3", "type": "mcp_call", "name": "t", "arguments": "{}", "server_label": "s"}
    items = [held, approved, run, denied_held, denied, lost]
    assert hosted.responses_results(items) == {
        "mcpr_1": 'error: {"code": -32000, "message": "boom"}',
        "mcpr_2": hosted.DENIED,
        "mcp_3": hosted.NO_RESULT,
    }
    chat = to_chat("openai_responses", items, None, [], {})
    answers = [(m["tool_call_id"], m["content"]) for m in chat.messages if m["role"] == "tool"]
    assert answers == [
        ("mcpr_1", 'error: {"code": -32000, "message": "boom"}'),
        ("mcpr_2", hosted.DENIED),
        ("mcp_3", hosted.NO_RESULT),
    ]
    calls = [c["id"] for m in chat.messages for c in m.get("tool_calls") or []]
    assert calls == ["mcpr_1", "mcpr_2", "mcp_3"]  # the approved run is not a second call
    assert not any("dropped" in note for note in chat.notes)


def test_an_anthropic_connector_message_in_block_order():
    answer = json.loads((WIRE / "anthropic_response_mcp.json").read_text())
    body = {
        "model": "claude",
        "max_tokens": 100,
        "mcp_servers": [
            {"type": "url", "url": "https://mcp.example.com/sse", "name": "example-mcp"}
        ],
        "messages": [
            {"role": "user", "content": "echo it"},
            {"role": "assistant", "content": answer["content"]},
            {"role": "user", "content": "thanks"},
        ],
    }
    parsed = anthropic.parse_request(body)
    rows = [t.model_dump() for t in parsed.tools]
    chat = to_chat("anthropic_messages", parsed.messages, None, rows, parsed.params)
    args = '{"param1":"value1","param2":"value2"}'
    call = {"id": "mcptoolu_014Q35RayjACSWkSj4X2yov1", "type": "function",
            "function": {"name": "echo", "arguments": args}}  # fmt: skip
    assert chat.messages == [
        {"role": "user", "content": "echo it"},
        {"role": "assistant", "content": "I'll echo that for you.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "Hello"},
        {"role": "assistant", "content": "The server said: Hello"},
        {"role": "user", "content": "thanks"},
    ]
    assert chat.notes[0].startswith("messages: 1 assistant message(s) with MCP connector calls")


def test_a_connector_call_without_its_result_is_still_answered():
    blocks = [
        {"type": "thinking", "thinking": "…"},
        {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "a", "input": {}},
        {"type": "mcp_tool_use", "id": "mcptoolu_2", "name": "b", "input": {"x": 1}},
        {
            "type": "mcp_tool_result",
            "tool_use_id": "mcptoolu_2",
            "is_error": True,
            "content": [{"type": "text", "text": "no such x"}],
        },  # fmt: skip
        {"type": "image", "source": {}},
    ]
    notes: list[str] = []
    out = hosted.anthropic_assistant(blocks, notes, "messages[1]")
    assert [m["role"] for m in out] == ["assistant", "tool", "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in out[1:]] == [
        ("mcptoolu_2", "error: no such x"),
        ("mcptoolu_1", hosted.NO_RESULT),
    ]
    assert notes == ["messages[1]: dropped a image block"]


def test_a_message_is_the_connector_s_when_it_holds_its_blocks():
    assert hosted.is_connector([{"type": "text"}, {"type": "mcp_tool_result"}])
    assert not hosted.is_connector([{"type": "tool_use"}, "odd"])
