"""toolproxy.tui.turns: a session's transcript as text, with each call's arguments as pretty
JSON, schema violations under the offending field and drift against the MCP server."""

from __future__ import annotations

from toolproxy import store
from toolproxy.schema.validator import check_value
from toolproxy.store.queries import exchanges, mcp
from toolproxy.store.rows import CallRow, OfferedRow
from toolproxy.tui.turns import (
    call_lines,
    json_lines,
    line_style,
    offered_lines,
    own_line,
    transcript,
)

ORDER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"qty": {"type": "integer"}}},
        },
    },
    "required": ["city"],
    "additionalProperties": False,
}


def offered(name="order", schema=ORDER) -> OfferedRow:
    return OfferedRow("x", 0, name, "function", None, schema, "h")


def call(arguments, name="order", parse_error=None, raw=None) -> CallRow:
    return CallRow("x", "s", 0, "c1", name, raw or str(arguments), arguments, parse_error)


def read(capture, *ids):
    with store.reading(capture) as r:
        return exchanges.details(r, list(ids)), mcp.server_tools(r)


def test_the_transcript_reads_turn_by_turn(seeded_capture):
    turns, servers = read(seeded_capture, "a-0", "a-1", "a-2")
    lines = transcript(turns, servers)
    text = "\n".join(lines)
    assert lines[0] == (
        "── turn 1 · 2026-03-01 12:00:00 · gpt-a-2026 · openai_chat · TTFB 100 ms · "
        "10→5 tokens · 50.0 tok/s ──"
    )
    assert text.count("user: weather in Paris?") == 1  # a later request repeats it: not shown
    assert "MCP tools/call get_weather (exchange m-0)" in text
    # each call shows the result that answered it, even with the call id reused
    paris = lines.index('      "city": "Paris"')
    rome = lines.index('      "city": "Rome"')
    assert lines[paris - 2] == "→ call get_weather · schema of MCP server weather"
    assert "  ← result: 18C" in lines[paris:rome]
    assert "  ← result: sunny" in lines[rome:]
    assert "assistant: It is sunny in Rome" in text
    assert "tools offered: get_weather, search  (t: open)" in text


def test_a_failed_turn_says_so(seeded_capture):
    turns, servers = read(seeded_capture, "b-1")
    assert "! upstream" in "\n".join(transcript(turns, servers))


def test_json_lines_carry_the_paths_jsonschema_names():
    value = {"city": "Paris", "items": [{"qty": 1}, {"qty": "2"}]}
    paths = [p for p, _ in json_lines(value)]
    assert "$.items[1].qty" in paths and "$.city" in paths
    bad = check_value(value, ORDER).errors
    assert {e.path for e in bad} <= set(paths)  # every violation finds its line
    assert "\n".join(t for _, t in json_lines(value)).startswith('{\n  "city": "Paris",\n')


def test_each_violation_sits_under_its_field():
    lines = call_lines(
        call({"city": 3, "items": [{"qty": 1}, {"qty": "2"}], "colour": "red"}), [offered()], []
    )
    assert lines[0] == "→ call order"
    city = lines.index('      "city": 3,')
    assert lines[city + 1] == "      ✗ $.city: 3 is not of type 'string'"
    qty = lines.index('          "qty": "2"')
    assert lines[qty + 1] == "      ✗ $.items[1].qty: '2' is not of type 'integer'"
    # a violation of the object itself (an extra property) goes after the object's end
    assert lines[-2] == "    }"
    assert lines[-1].startswith("      ✗ $: Additional properties are not allowed ('colour'")


def test_a_missing_required_field_and_unparsed_arguments():
    lines = call_lines(call({}), [offered()], [])
    assert lines[-1] == "      ✗ $: 'city' is a required property"
    lines = call_lines(call(None, parse_error="Expecting value", raw='{"city": '), [offered()], [])
    assert lines[1:] == ['    {"city": ', "    ! arguments did not parse: Expecting value"]
    assert call_lines(call({"a": 1}, name="ghost"), [offered()], [])[0] == (
        "→ call ghost · no schema to check"
    )


def test_the_servers_real_schema_wins_over_the_offered_copy():
    loose = {"type": "object"}
    lines = call_lines(call({"city": 3}), [offered(schema=loose)], [("shop", "order", ORDER)])
    assert lines[0] == "→ call order · schema of MCP server shop"
    assert "      ✗ $.city: 3 is not of type 'string'" in lines


def test_a_call_the_provider_ran_on_a_hosted_mcp_server_says_so():
    hosted = CallRow("x", "s", 0, "mcp_1", "order", '{"city": 3}', {"city": 3}, None, "shop")
    lines = call_lines(hosted, [offered()], [])
    assert lines[0] == "→ call order · run by the provider on MCP server shop"
    assert "      ✗ $.city: 3 is not of type 'string'" in lines


def test_offered_tools_mark_drift_and_open_to_their_schemas():
    copy = {"type": "object", "properties": {"city": {"type": "integer"}}}
    tools = [offered(schema=copy), offered(name="other", schema={"type": "object"})]
    servers = [("shop", "order", ORDER)]
    assert offered_lines(tools, servers, False) == [
        "tools offered: order ≠ server, other  (t: open)"
    ]
    opened = offered_lines(tools, servers, True)
    assert opened[0] == "tools offered (2, t: fold):"
    assert opened[1].startswith('  order: {"type":"object"')
    assert '    ≠ type_changed city: server ["string"], offered ["integer"]' in opened
    assert opened[-1] == '  other: {"type":"object"}'
    assert offered_lines([], servers, True) == []


def test_line_styles():
    assert line_style("── turn 1 ──") == "bold"
    assert line_style("      ✗ $.city: bad") == "bold red"
    assert line_style("    ≠ type_changed city") == "yellow"
    assert line_style("tools offered: order ≠ server") == "yellow"
    assert line_style("→ call order") == "cyan"
    assert line_style("  ← result (error): boom") == "red"
    assert line_style("  ← result: ok") == "green"
    assert line_style("assistant refused: I can't help with that.") == "yellow"
    assert line_style("user: hi") == ""


def test_replies_with_calls_and_results_are_not_lines_of_their_own():
    legacy = {"role": "assistant", "content": None, "function_call": {"name": "f"}}
    called = {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}
    assert not own_line(legacy) and not own_line(called)
    assert not own_line({"role": "tool", "content": "1"})
    assert not own_line({"role": "function", "name": "f", "content": "1"})
    assert own_line({"role": "assistant", "content": "hi"})
    assert own_line({"role": "user", "content": "hi"}) and own_line({"content": "no role"})


def test_gemini_contents_read_like_the_others():
    call = {"role": "model", "parts": [{"text": "Checking."}, {"functionCall": {"name": "f"}}]}
    answer = {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}
    asked = {"role": "user", "parts": [{"text": "Paris?"}]}
    assert not own_line(call) and not own_line(answer)
    assert own_line(asked) and own_line({"role": "model", "parts": [{"text": "18C."}]})


def test_converse_messages_read_like_the_others():
    use = {"toolUse": {"toolUseId": "t", "name": "f", "input": {}}}
    call = {"role": "assistant", "content": [{"text": "Checking."}, use]}
    answer = {"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": []}}]}
    assert not own_line(call) and not own_line(answer)
    assert own_line({"role": "user", "content": [{"text": "Paris?"}]})
    assert own_line({"role": "assistant", "content": [{"text": "18C."}]})
