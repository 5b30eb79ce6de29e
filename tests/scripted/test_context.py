"""Ids, token estimates and SSE framing shared by the renderers."""

from __future__ import annotations

import json

from toolproxy.scripted.context import (
    FIXED_CREATED,
    Context,
    Counts,
    arguments_text,
    count_tokens,
    dump_json,
    frame_sse,
    split_text,
)
from toolproxy.scripted.script import Reply, ScriptedCall, ScriptedUsage


def test_deterministic_ids_come_from_key_and_play_number() -> None:
    ctx = Context("chat", key="gpt-4o mini/x", play=7)
    assert ctx.created == FIXED_CREATED
    assert ctx.make_id("chatcmpl-") == "chatcmpl-gpt-4o_mini_x_0007"
    assert ctx.make_id("call_", 2) == "call_gpt-4o_mini_x_0007_2"
    assert Context("chat", key="gpt-4o mini/x", play=7).make_id("x") == ctx.make_id("x")


def test_random_ids_differ_per_context_but_agree_within_one() -> None:
    a, b = Context("chat", deterministic=False), Context("chat", deterministic=False)
    assert a.make_id("resp_") != b.make_id("resp_")
    assert a.make_id("resp_") == a.make_id("resp_")
    assert a.created > FIXED_CREATED


def test_call_id_prefers_the_scripted_one() -> None:
    ctx = Context("messages")
    assert ctx.call_id(ScriptedCall(name="f", id="mine"), 0, "toolu_") == "mine"
    assert ctx.call_id(ScriptedCall(name="f"), 3, "toolu_") == "toolu_default_0001_3"


def test_arguments_text_is_compact_for_dicts_and_verbatim_for_strings() -> None:
    call = ScriptedCall(name="f", arguments={"city": "Zürich", "n": [1, 2]})
    assert arguments_text(call) == '{"city":"Zürich","n":[1,2]}'
    assert arguments_text(ScriptedCall(name="f", arguments=' {"a": ')) == ' {"a": '


def test_token_estimate_and_override() -> None:
    ctx = Context("chat", request_bytes=400)
    reply = Reply(text="x" * 40, tool_calls=[ScriptedCall(name="f", arguments="y" * 40)])
    assert count_tokens(reply, ctx) == Counts(100, 20, 0, 0)
    assert count_tokens(Reply(), Context("chat")) == Counts(1, 1, 0, 0)
    usage = ScriptedUsage(output_tokens=5, cached_input_tokens=3, reasoning_tokens=2)
    counts = count_tokens(Reply(text="hello", usage=usage), ctx)
    assert counts == Counts(100, 5, 3, 2)
    assert counts.total == 105


def test_split_text_keeps_every_character() -> None:
    assert split_text("abcdefg", 3) == ["abc", "def", "g"]
    assert split_text("", 3) == []
    assert "".join(split_text("héllo 🌍 wörld", 2)) == "héllo 🌍 wörld"


def test_frame_sse_with_and_without_event_line() -> None:
    assert frame_sse({"a": "é"}) == 'data: {"a":"é"}\n\n'.encode()
    assert frame_sse({"type": "ping"}, event="ping") == b'event: ping\ndata: {"type":"ping"}\n\n'
    assert frame_sse("[DONE]") == b"data: [DONE]\n\n"
    assert json.loads(dump_json({"k": ["ü"]})) == {"k": ["ü"]}
