"""toolproxy.localmodel.template: the chat template that lets the local model call tools."""

from __future__ import annotations

import jinja2

from toolproxy.localmodel.template import tool_template

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_current_time",
            "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}},
        },
    }
]


def render(**context) -> str:
    env = jinja2.Environment()
    return env.from_string(tool_template()).render(add_generation_prompt=True, **context)


def test_tools_go_into_the_system_turn_with_worked_examples():
    text = render(messages=[{"role": "user", "content": "Time in Tokyo?"}], tools=TOOLS)
    assert text.startswith("<|im_start|>system\nYou are a helpful assistant that calls tools.")
    assert '"name": "get_current_time"' in text.split("\n</tools>")[0]
    assert '{"name": "get_weather", "arguments": {"city": "Rome"} }' in text
    assert text.endswith("<|im_start|>user\nTime in Tokyo?<|im_end|>\n<|im_start|>assistant\n")


def test_a_call_and_its_result_round_trip_as_the_model_writes_them():
    messages = [
        {"role": "user", "content": "Time in Tokyo?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"function": {"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}}
            ],
        },
        {"role": "tool", "content": '{"time": "09:00"}'},
    ]
    text = render(messages=messages, tools=TOOLS)
    assert (
        '<|im_start|>assistant\n<tool_call>\n{"name": "get_current_time", "arguments": '
        '{"timezone": "Asia/Tokyo"}}\n</tool_call><|im_end|>\n' in text
    )
    assert (
        '<|im_start|>user\n<tool_response>\n{"time": "09:00"}\n</tool_response><|im_end|>' in text
    )


def test_without_tools_it_is_plain_chatml():
    text = render(
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    )
    assert text == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert "<tools>" not in text
