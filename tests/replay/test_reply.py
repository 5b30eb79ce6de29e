"""toolproxy.replay.reply: the request body and the reply model (pure)."""

from __future__ import annotations

from toolproxy.records import ToolCall
from toolproxy.replay.model import Candidate
from toolproxy.replay.reply import CandidateReply, build_body

HELLO = [{"role": "user", "content": "hello"}]
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def test_build_body_merges_params_and_keeps_its_own_keys():
    c = Candidate(name="c", base_url="http://x/v1", model="m", params={"temperature": 1})
    body = build_body(
        c,
        HELLO,
        [],
        {"temperature": 0, "tool_choice": "auto", "model": "old", "stream": True, "seed": 3},
        False,
    )
    assert body == {"model": "m", "messages": HELLO, "temperature": 1, "seed": 3}
    with_tools = build_body(c, HELLO, TOOLS, {"tool_choice": "required"}, True)
    assert with_tools["tool_choice"] == "required" and with_tools["tools"] == TOOLS


def test_reply_turn_and_assistant_message():
    reply = CandidateReply(
        text="hi",
        calls=[ToolCall(call_id="c1", name="f", arguments_raw="{}", arguments={})],
        finish_reason="tool_calls",
        ttft_ms=5.0,
    )
    turn = reply.turn(2, 1, "ex1")
    assert (turn.step, turn.attempt, turn.exchange_id, turn.ttft_ms) == (2, 1, "ex1", 5.0)
    assert reply.assistant_message() == {
        "role": "assistant",
        "content": "hi",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    assert CandidateReply(text="x").assistant_message() == {"role": "assistant", "content": "x"}
