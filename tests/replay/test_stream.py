"""toolproxy.replay.stream: a streamed reply put back together from SDK-shaped chunks."""

from __future__ import annotations

from types import SimpleNamespace as NS

from toolproxy.replay.stream import Assembly


def chunk(content=None, calls=None, finish=None, usage=None, model="m", index=0):
    delta = NS(content=content, tool_calls=calls)
    return NS(
        model=model, usage=usage, choices=[NS(index=index, delta=delta, finish_reason=finish)]
    )


def call_delta(index, name=None, arguments="", call_id=None):
    return NS(index=index, id=call_id, type="function", function=NS(name=name, arguments=arguments))


def test_tool_call_deltas_are_joined_by_their_index_and_timed():
    a = Assembly()
    a.add(chunk(), 1.0)  # a role-only first chunk: not a delta
    a.add(chunk(calls=[call_delta(0, "get_weather", '{"ci', "c1")]), 1.5)
    a.add(chunk(calls=[call_delta(1, "search", "{}", "c2")]), 1.6)
    a.add(chunk(calls=[call_delta(0, None, 'ty":"Paris"}')]), 1.7)
    a.add(chunk(content="x", index=1), 1.8)  # a second choice is not the reply
    a.add(chunk(finish="tool_calls", usage=NS(prompt_tokens=7, completion_tokens=4)), 2.0)
    reply = a.reply(0.5, 2.0)
    assert [(c.name, c.arguments_raw) for c in reply.calls] == [
        ("get_weather", '{"city":"Paris"}'),
        ("search", "{}"),
    ]
    assert reply.text in ("", None)
    assert (reply.input_tokens, reply.output_tokens, reply.finish_reason) == (7, 4, "tool_calls")
    assert reply.ttft_ms == 1000.0  # from the start to the first tool-call delta


def test_a_stream_without_finish_is_cut_and_one_without_chunks_is_bad():
    a = Assembly()
    a.add(chunk(content="partial"), 1.0)
    assert a.reply(0.0, 1.0).error_kind == "cut_stream"
    assert Assembly().reply(0.0, 1.0).error_kind == "bad_response"
