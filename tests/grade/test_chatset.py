"""toolproxy.grade.chatset: OpenAI-format chat datasets as expectation cases."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolproxy.grade.chatset import cases_from_lines, cases_from_record, is_chat_dataset
from toolproxy.grade.expectations import case_to_dict, load_cases, render_cases

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def call(name, args, id_="call_1"):
    return {
        "id": id_,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


RECORD = {
    "messages": [
        {"role": "system", "content": "You help with weather."},
        {"role": "user", "content": "Weather in Paris and Oslo?"},
        {
            "role": "assistant",
            "tool_calls": [
                call("get_weather", {"city": "Paris"}),
                call("get_weather", {"city": "Oslo"}, "call_2"),
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": "snow"},
        {"role": "assistant", "content": "Sunny in Paris, snow in Oslo.", "weight": 1},
    ],
    "tools": TOOLS,
    "parallel_tool_calls": True,
}


def test_every_assistant_turn_is_a_case():
    first, second = cases_from_record(
        RECORD, "weather", 3, by="ana", at="2026-11-24T00:00:00+00:00"
    )
    assert first.id == "get_weather-weather-3-2"
    assert first.expect == "call" and first.order == "unordered"
    assert [(c.tool, {k: m.value for k, m in c.args.items()}) for c in first.calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Oslo"}),
    ]
    assert first.messages == RECORD["messages"][:2] and first.tools == TOOLS
    assert first.wire_format == "openai_chat" and first.exchange_id is None
    assert (first.provenance.by, first.provenance.via) == ("ana", "import")
    assert second.id == "no_call-weather-3-5" and second.expect == "no_call"
    assert second.messages[-1] == {"role": "tool", "tool_call_id": "call_2", "content": "snow"}


def test_weight_zero_turns_are_not_cases_and_weights_are_dropped():
    record = json.loads(json.dumps(RECORD))
    record["messages"][2]["weight"] = 0
    (only,) = cases_from_record(record, "w", 1)
    assert only.expect == "no_call"
    assert all("weight" not in m for m in only.messages)


def test_legacy_functions_and_function_call():
    record = {
        "messages": [
            {"role": "user", "content": "Paris?"},
            {
                "role": "assistant",
                "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
        ],
        "functions": [TOOLS[0]["function"]],
    }
    (case,) = cases_from_record(record, "legacy", 1)
    assert case.tools == TOOLS and case.calls[0].tool == "get_weather"


@pytest.mark.parametrize(
    ("record", "says"),
    [
        ([1, 2], "not a chat record: no messages list"),
        ({"messages": "hi"}, "not a chat record"),
        ({"messages": [{"content": "x"}]}, "messages[0] has no role"),
        ({"messages": [{"role": "user", "content": "x"}]}, "no assistant message"),
        (
            {"messages": [{"role": "user"}, {"role": "assistant", "tool_calls": [{"id": 1}]}]},
            "messages[1]: tool_calls[0] has no function name",
        ),
        (
            {
                "messages": [
                    {"role": "user"},
                    {
                        "role": "assistant",
                        "tool_calls": [{"function": {"name": "f", "arguments": "{oops"}}],
                    },
                ]
            },
            "messages[1]: tool_calls[0]: arguments are not JSON",
        ),
        (
            {
                "messages": [
                    {"role": "user"},
                    {
                        "role": "assistant",
                        "tool_calls": [{"function": {"name": "f", "arguments": "[1]"}}],
                    },
                ]
            },
            "arguments are list, not an object",
        ),
    ],
)
def test_bad_records_say_why(record, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        cases_from_record(record, "d", 1)


def test_bad_lines_are_named_the_rest_converted():
    lines = [json.dumps(RECORD), "", "{not json", json.dumps({"messages": []}), json.dumps(RECORD)]
    cases, problems = cases_from_lines(lines, Path("data/set.jsonl"))
    assert len(cases) == 4
    assert [p.split(": ", 1)[0] for p in problems] == ["data/set.jsonl:3", "data/set.jsonl:4"]
    assert problems[1].endswith("no assistant message to learn from after the first message")
    assert len({c.id for c in cases}) == 4  # the line number keeps equal records apart


def test_cases_round_trip_through_an_expectations_file(tmp_path):
    cases, _ = cases_from_lines([json.dumps(RECORD)], Path("set.jsonl"))
    path = tmp_path / "cases.yaml"
    path.write_text(render_cases(cases, "yaml"))
    assert [case_to_dict(c) for c in load_cases([path])] == [case_to_dict(c) for c in cases]


def test_is_chat_dataset():
    assert is_chat_dataset(json.dumps(RECORD))
    assert not is_chat_dataset('{"log": {"entries": []}}')
    assert not is_chat_dataset("{not json")
