"""The Chat pieces every replay converter writes: toolproxy.replay.chatmsg."""

from toolproxy.replay.chatmsg import answer, assistant, chat_call, compact, function_choice


def test_the_pieces_in_chat_s_shapes():
    call = chat_call("c1", "get_weather", compact({"city": "Zürich", "days": 2}))
    assert call == {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Zürich","days":2}'},
    }
    assert assistant("", [call]) == {"role": "assistant", "content": None, "tool_calls": [call]}
    assert assistant("hi", []) == {"role": "assistant", "content": "hi"}
    assert answer("c1", "18C") == {"role": "tool", "tool_call_id": "c1", "content": "18C"}
    assert function_choice("f") == {"type": "function", "function": {"name": "f"}}


def test_a_result_answers_its_own_call_else_the_next_waiting_one():
    from toolproxy.replay.chatmsg import answered

    waiting = ["a", "b", "c"]
    assert answered("b", waiting) == "b" and waiting == ["a", "c"]
    assert answered(None, waiting) == "a" and waiting == ["c"]
    assert answered(None, waiting) == "c" and answered(None, waiting) is None
