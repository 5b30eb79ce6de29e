"""toolproxy.wire.leaked: tool calls a serving stack left in the text, in each format."""

from __future__ import annotations

import json
import keyword

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolproxy.wire.leaked import FORMATS, find_leaked_calls

OFFERED = {"get_weather", "get_time"}
PARIS = {"city": "Paris", "unit": "celsius"}

# (format, text as servers return it, the calls it holds)
SHAPES = [
    (
        "hermes",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n'
        "</tool_call>",
        [("get_weather", PARIS)],
    ),
    (
        "hermes",  # two calls, text around them, Qwen's way
        'Let me check.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", '
        '"unit": "celsius"}}</tool_call>\n<tool_call>{"name": "get_time", "arguments": '
        '{"tz": "Europe/Paris"}}</tool_call>',
        [("get_weather", PARIS), ("get_time", {"tz": "Europe/Paris"})],
    ),
    (
        "llama3_json",
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris", "unit": "celsius"}}'
        '; {"name": "get_time", "parameters": {"tz": "UTC"}}',
        [("get_weather", PARIS), ("get_time", {"tz": "UTC"})],
    ),
    (
        "mistral",
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}]',
        [("get_weather", PARIS)],
    ),
    (
        "mistral",  # tokenizer v11: name[ARGS]{...}
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "unit": "celsius"}',
        [("get_weather", PARIS)],
    ),
    (
        "function_tag",
        '<function=get_weather>{"city": "Paris", "unit": "celsius"}</function>',
        [("get_weather", PARIS)],
    ),
    (
        "pythonic",
        '[get_weather(city="Paris", unit="celsius"), get_time(tz="UTC")]',
        [("get_weather", PARIS), ("get_time", {"tz": "UTC"})],
    ),
    (
        "bare_json",
        '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}',
        [("get_weather", PARIS)],
    ),
    (
        "bare_json",  # fenced, and arguments as JSON text
        '```json\n{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\", '
        '\\"unit\\": \\"celsius\\"}"}\n```',
        [("get_weather", PARIS)],
    ),
]


@pytest.mark.parametrize(("fmt", "text", "calls"), SHAPES, ids=[s[0] for s in SHAPES])
def test_each_format_is_read_back_into_its_calls(fmt, text, calls):
    leak = find_leaked_calls(text, OFFERED)
    assert leak is not None and leak.format == fmt
    assert [(c.name, c.arguments) for c in leak.calls] == calls
    assert [c.index for c in leak.calls] == list(range(len(calls)))
    assert all(c.parse_error is None for c in leak.calls)


def test_every_format_has_a_shape():
    assert {s[0] for s in SHAPES} == set(FORMATS)


def test_a_cut_block_is_still_a_call_with_its_parse_error():
    leak = find_leaked_calls(
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Pa', OFFERED
    )
    assert leak is not None and leak.format == "hermes"
    (call,) = leak.calls
    assert call.name == "get_weather" and call.arguments is None and call.parse_error


def test_a_tagged_call_to_a_tool_not_offered_is_still_a_leak():
    leak = find_leaked_calls('<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>', OFFERED)
    assert leak is not None and leak.calls[0].name == "rm_rf"


@pytest.mark.parametrize(
    "text",
    [
        "It is 18 °C in Paris.",
        '{"name": "Paris", "arguments": {}}',  # JSON, but not a call to an offered tool
        '[{"name": "get_weather"}, {"city": "Paris"}]',
        "[print(x) for x in y]",
        "[get_weather(city)]",  # positional: not a call the server would have made
        '```json\n{"city": "Paris"}\n```',
        "<tool_call></tool_call>",
        "",
    ],
)
def test_text_that_is_no_call_is_left_alone(text):
    assert find_leaked_calls(text, OFFERED) is None


def test_nothing_is_looked_for_when_no_tool_was_offered():
    text = '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    assert find_leaked_calls(text, set()) is None and find_leaked_calls(None, OFFERED) is None


# --- properties -------------------------------------------------------------------------
NAMES = st.sampled_from(sorted(OFFERED))
SCALARS = st.one_of(st.text(max_size=20), st.integers(-(2**63), 2**63), st.booleans(), st.none())
KEYS = st.from_regex(r"[a-z_]{1,8}", fullmatch=True).filter(lambda k: not keyword.iskeyword(k))
ARGS = st.dictionaries(KEYS, SCALARS, max_size=4)
RENDER = {
    "hermes": lambda n, a: f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>",
    "llama3_json": lambda n, a: "<|python_tag|>" + json.dumps({"name": n, "parameters": a}),
    "mistral": lambda n, a: "[TOOL_CALLS]" + json.dumps([{"name": n, "arguments": a}]),
    "function_tag": lambda n, a: f"<function={n}>{json.dumps(a)}</function>",
    "pythonic": lambda n, a: f"[{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})]",
    "bare_json": lambda n, a: json.dumps({"name": n, "arguments": a}),
}


@given(st.sampled_from(FORMATS), NAMES, ARGS)
def test_a_call_written_in_any_format_is_read_back(fmt, name, args):
    leak = find_leaked_calls(RENDER[fmt](name, args), OFFERED)
    assert leak is not None and leak.format == fmt
    assert [(c.name, c.arguments) for c in leak.calls] == [(name, args)]


@given(st.text(max_size=300))
def test_any_text_is_read_without_raising(text):
    leak = find_leaked_calls(text, OFFERED)
    assert leak is None or (leak.format in FORMATS and leak.calls)
