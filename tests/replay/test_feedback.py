"""Closed-loop feedback: which calls are invalid, and what the model is told."""

from __future__ import annotations

from toolproxy.records import ToolCall
from toolproxy.replay.feedback import describe, make_check, offered_tools

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "limit": {"type": "integer"},
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "when": {"type": "string", "format": "date-time"},
        "filters": {
            "type": "object",
            "properties": {"since": {"type": "string"}},
            "required": ["since"],
        },
    },
    "required": ["city"],
    "additionalProperties": False,
}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]


def check(raw: str, tools=TOOLS, server_tools=()):
    return make_check(server_tools)(ToolCall(name="get_weather", arguments_raw=raw), tools)


def test_valid_call_passes():
    assert check('{"city": "Paris", "unit": "celsius"}').valid


def test_every_group_is_named_in_a_stable_order():
    got = check('{"limit": "five", "unit": "kelvin", "country": "FR", "when": "noon"}')
    assert not got.valid
    assert describe(got, "get_weather") == (
        "Invalid arguments for get_weather. Missing required fields: city. "
        "Badly formatted fields: limit (expected integer), when ('noon' is not a 'date-time'). "
        "Wrong values: unit ('kelvin' is not one of ['celsius', 'fahrenheit']). "
        "Unknown fields: country. Fix the call and send it again."
    )


def test_nested_missing_field_is_named_by_its_path():
    got = check('{"city": "Paris", "filters": {}}')
    assert describe(got) == (
        "Invalid arguments. Missing required fields: filters.since. Fix the call and send it again."
    )


def test_unparseable_arguments_say_so():
    got = check('{"city": "Paris"')
    assert not got.valid and got.parse_error
    text = describe(got, "get_weather")
    assert text.startswith("Invalid arguments for get_weather. They are not valid JSON (")
    assert text.endswith("Send a JSON object.")
    assert not check("").valid  # empty arguments are not JSON either


def test_unusable_schema_is_reported():
    bad = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": 5}}}]
    got = check('{"city": "Paris"}', tools=bad)
    assert not got.valid and "schema cannot be used" in describe(got)


def test_the_real_mcp_schema_wins_over_the_offered_one():
    strict = {"type": "object", "required": ["city", "country"]}
    got = check('{"city": "Paris"}', server_tools=[("weather", "get_weather", strict)])
    assert not got.valid and "Missing required fields: country." in describe(got)


def test_a_tool_that_was_not_offered_is_only_parsed():
    call = ToolCall(name="other", arguments_raw='{"x": 1}')
    assert make_check()(call, TOOLS).valid


def test_long_lists_are_cut():
    schema = {"type": "object", "additionalProperties": False}
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": schema}}]
    got = check('{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7}', tools=tools)
    assert "Unknown fields: a, b, c, d, e and 2 more." in describe(got)


def test_offered_tools_skips_entries_that_are_not_functions():
    tools = [{"type": "web_search"}, "junk", {"type": "function", "function": {"name": "f"}}]
    assert [t.name for t in offered_tools(tools)] == ["f"]
