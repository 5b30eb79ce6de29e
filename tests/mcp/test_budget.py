"""Token cost of tools blocks: measured from usage differences, else estimated."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime, timedelta

from tests.builders import chat_exchange
from tests.seeded import CaptureRows
from toolproxy.cli.main import main
from toolproxy.mcp.budget import (
    BudgetRequest,
    compute_budget,
    conversation_key,
    estimate_tokens,
    fit_tool_costs,
    measure_blocks,
    render_budget,
    wire_tool,
)
from toolproxy.records import ToolOffered, canonical_json, schema_hash

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}


def tool(name: str, schema: dict | None = SCHEMA, description: str | None = "d") -> ToolOffered:
    return ToolOffered(
        position=0,
        name=name,
        description=description,
        parameters=schema,
        schema_hash=schema_hash(schema),
    )


A, B, C = tool("a"), tool("b"), tool("c", {"type": "object"})


def request(
    n: int, tools: list[ToolOffered], tokens: int | None, conv: str = "c1"
) -> BudgetRequest:
    return BudgetRequest(
        exchange_id=f"ex{n}",
        session_id="s",
        started_at=T0 + timedelta(seconds=n),
        model="m",
        wire_format="openai_chat",
        input_tokens=tokens,
        conversation=conv,
        tools=tools,
    )


def key(t: ToolOffered) -> str:
    return canonical_json(wire_tool(t, "openai_chat"))


def test_wire_tool_per_format():
    assert wire_tool(A, "openai_chat") == {
        "type": "function",
        "function": {"name": "a", "description": "d", "parameters": SCHEMA},
    }
    assert wire_tool(A, "openai_responses") == {
        "type": "function",
        "name": "a",
        "description": "d",
        "parameters": SCHEMA,
    }
    assert wire_tool(A, "anthropic_messages") == {
        "name": "a",
        "description": "d",
        "input_schema": SCHEMA,
    }
    bare = tool("b", None, None)
    assert wire_tool(bare, "anthropic_messages") == {
        "name": "b",
        "input_schema": {"type": "object"},
    }
    assert wire_tool(bare, "openai_responses") == {"type": "function", "name": "b"}
    builtin = ToolOffered(position=0, name="web_search", kind="web_search", schema_hash="x")
    assert wire_tool(builtin, "openai_responses") == {"type": "web_search", "name": "web_search"}
    assert wire_tool(A, "bedrock_converse") == {
        "toolSpec": {"name": "a", "description": "d", "inputSchema": {"json": SCHEMA}}
    }
    assert wire_tool(A, "gemini") == {"name": "a", "description": "d", "parameters": SCHEMA}
    assert wire_tool(A, "ollama_chat") == wire_tool(A, "openai_chat")


def test_a_hosted_servers_listed_tools_cost_what_their_schemas_do():
    """The tools a hosted MCP server listed (kind `mcp_tool`) go into the model's prompt
    with their schemas, as functions do: not as a bare name."""
    listed = ToolOffered(
        position=1,
        name="a",
        kind="mcp_tool",
        description="d",
        parameters=SCHEMA,
        schema_hash=schema_hash(SCHEMA),
        mcp_server="docs",
    )
    assert wire_tool(listed, "openai_responses") == wire_tool(A, "openai_responses")


def test_estimate_is_chars_over_four_rounded_up():
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]


def test_conversation_key_ignores_sampling_but_not_prompt_parameters():
    base = conversation_key("openai_chat", "m", None, [{"role": "user"}], {"temperature": 0})
    assert base == conversation_key("openai_chat", "m", None, [{"role": "user"}], {"top_p": 1})
    assert base == conversation_key("openai_chat", "m", None, [{"role": "user"}], None)
    for other in (
        conversation_key("openai_chat", "m", None, [{"role": "user"}], {"tool_choice": "auto"}),
        conversation_key("openai_chat", "m2", None, [{"role": "user"}]),
        conversation_key("openai_chat", "m", "sys", [{"role": "user"}]),
        conversation_key("openai_chat", "m", None, [{"role": "assistant"}]),
        conversation_key("openai_responses", "m", None, [{"role": "user"}]),
        conversation_key(
            "openai_responses", "m", None, [{"role": "user"}], {"previous_response_id": "r"}
        ),
    ):
        assert other != base


def test_whole_block_measured_against_a_no_tools_twin():
    requests = [
        request(0, [], 100),
        request(1, [A, B], 180),
        request(2, [A], 100),  # no growth: caching or noise, not a measurement
        request(3, [A], None),  # no usage reported
        request(4, [A, B], 500, conv="other"),  # no twin in its conversation
    ]
    assert measure_blocks(requests) == {"ex1": 80}


def test_single_tool_differences_measure_that_tool():
    requests = [
        request(0, [A], 150),
        request(1, [A, B], 190),
        request(2, [A, B], 192, conv="c2"),
        request(3, [B], 150, conv="c2"),
        request(4, [], 10, conv="c2"),  # whole-block overhead is not attributed to a tool
    ]
    assert fit_tool_costs(requests) == {key(B): 40, key(A): 42}


def test_costs_are_peeled_from_pairs_whose_other_tools_are_known():
    requests = [
        request(0, [A], 100),
        request(1, [A, B], 130),  # B = 30
        request(2, [A, B, C], 150, conv="c2"),
        request(3, [A], 105, conv="c2"),  # B + C = 45, so C = 15
        request(4, [A, C], 90, conv="c3"),
        request(5, [A], 95, conv="c3"),  # negative: discarded, not averaged in
    ]
    assert fit_tool_costs(requests) == {key(B): 30, key(C): 15}


def test_report_labels_every_number_with_its_method():
    requests = [
        request(0, [], 100),
        request(1, [A, B], 190),
        request(2, [A], 150, conv="c2"),
        request(3, [A, C], 170, conv="c2"),
        request(4, [C], None, conv="c3"),
    ]
    report = compute_budget(requests)
    by_id = {r.exchange_id: r for r in report.requests}
    assert [r.exchange_id for r in report.requests][0] == "ex1"  # most expensive first
    assert (by_id["ex1"].tools_tokens, by_id["ex1"].method) == (90, "provider_usage_diff")
    assert by_id["ex1"].share == round(90 / 190, 4)
    estimated = math.ceil(len(canonical_json([wire_tool(A, "openai_chat")])) / 4)
    assert (by_id["ex2"].tools_tokens, by_id["ex2"].method) == (estimated, "estimate_chars_div_4")
    assert [(t.name, t.tokens, t.method) for t in by_id["ex3"].tools] == [
        ("a", estimate_tokens(key(A)), "estimate_chars_div_4"),
        ("c", 20, "provider_usage_diff"),
    ]
    assert by_id["ex4"].share is None
    tools = {(t.name, t.method): t for t in report.tools}
    assert tools[("c", "provider_usage_diff")].requests == 2
    assert tools[("c", "provider_usage_diff")].total_tokens == 40
    assert tools[("a", "estimate_chars_div_4")].requests == 3
    assert tools[("a", "estimate_chars_div_4")].avg_tokens == estimate_tokens(key(A))
    cap = report.capture
    assert (cap.requests, cap.requests_with_tools, cap.requests_without_usage) == (5, 4, 1)
    assert cap.prompt_tokens == 100 + 190 + 150 + 170
    assert cap.schema_tokens_measured == 90
    assert cap.schema_tokens == cap.schema_tokens_measured + cap.schema_tokens_estimated
    assert cap.share == round(cap.schema_tokens / cap.prompt_tokens, 4)
    assert cap.method == "mixed"


def test_capture_method_when_uniform_or_empty():
    only_estimates = compute_budget([request(0, [A], 50)]).capture
    assert (only_estimates.method, only_estimates.schema_tokens_measured) == (
        "estimate_chars_div_4",
        0,
    )
    empty = compute_budget([request(0, [], 50)]).capture
    assert (empty.method, empty.share, empty.schema_tokens) == ("none", 0.0, 0)
    assert compute_budget([]).capture.share is None


def test_render_says_which_method():
    report = compute_budget([request(0, [], 100), request(1, [A], 130), request(2, [B], None)])
    text = render_budget(report, top=1)
    assert text.startswith(
        "3 requests, 2 with tools; prompt tokens 230, to tool schemas 30 (13.0%; measured 30, "
        "estimated 0; method provider_usage_diff)"
    )
    assert "1 requests had no usage" in text
    assert "Per request (top 1 of 2)" in text
    assert re.search(r"2024-05-01 12:00:02 +s +m +1 +34 +estimate_chars_div_4", text)
    assert "12:00:01" not in text  # below --top
    assert re.search(r"\na +\w+ +1 +33 +33 +estimate_chars_div_4", text)


# --- the command, on a real capture ----------------------------------------------------


def test_budget_command_over_a_capture(tmp_path, capsys):
    capture = tmp_path / "cap"
    rows = CaptureRows()
    messages = [{"role": "user", "content": "hi"}]
    plan = [("s1", [], 100), ("s1", [A, B], 175), ("s2", [A], 300), ("s1", [A], 120)]
    for n, (session, tools, tokens) in enumerate(plan):
        ex = chat_exchange(
            f"ex{n}",
            session,
            T0 + timedelta(seconds=n),
            model_requested="m",
            messages=messages if session == "s1" else [],
            request_params={"temperature": n},
            input_tokens=tokens,
        )
        offered = [t.model_copy(update={"position": p}) for p, t in enumerate(tools)]
        rows.turn(ex, offered=offered)
    rows.write(capture)

    assert main(["mcp", "budget", "-c", str(capture), "--json", "--top", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    estimate = estimate_tokens(canonical_json([wire_tool(A, "openai_chat")]))
    assert 20 < estimate < 75
    assert [(r["exchange_id"], r["tools_tokens"], r["method"]) for r in data["requests"]] == [
        ("ex1", 75, "provider_usage_diff"),
        ("ex2", estimate, "estimate_chars_div_4"),  # ex3 (20, measured) is below --top
    ]
    assert {(t["name"], t["method"]) for t in data["tools"]} == {
        ("a", "estimate_chars_div_4"),
        ("b", "provider_usage_diff"),  # ex1 - ex3 differ by exactly b
    }
    assert data["capture"]["prompt_tokens"] == 695
    assert data["capture"]["requests_with_tools"] == 3  # totals cover more than --top shows

    assert main(["mcp", "budget", "-c", str(capture), "--session", "s2"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("1 requests, 1 with tools; prompt tokens 300")
    assert "method estimate_chars_div_4" in text
