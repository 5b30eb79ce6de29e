"""The three-stage checker: selection, pairing, stage order, schema source, not graded."""

from __future__ import annotations

from typing import Any

import pytest

from toolproxy.grade.checker import ToolNames, grade_case, make_grader, offered_tools
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation
from toolproxy.records import ToolCall
from toolproxy.schema.compiling import compile_schema

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
    "required": ["city"],
    "additionalProperties": False,
}


def case(*calls: ExpectedCall, **kw: Any) -> Case:
    return Case(id="c1", calls=list(calls), **kw)


def want(tool: str = "get_weather", **args: Any) -> ExpectedCall:
    return ExpectedCall(
        tool=tool,
        args={k: v if isinstance(v, Matcher) else Matcher(value=v) for k, v in args.items()},
    )


def seen(*calls: tuple[str | None, str], offered: Any = None, **kw: Any) -> Observation:
    tools = [{"name": "get_weather", "parameters": WEATHER}] if offered is None else offered
    observed = [ToolCall(index=i, name=n, arguments_raw=raw) for i, (n, raw) in enumerate(calls)]
    return Observation(calls=observed, offered=tools, **kw)


def buckets(grade) -> list[dict[str, str]]:
    return [{a.name: a.bucket for a in c.args} for c in grade.calls]


def test_a_pass_carries_the_case_and_observation_ids():
    obs = seen(("get_weather", '{"city": "Paris"}'), exchange_id="ex1", session_id="s1", model="m")
    got = grade_case(case(want(city="Paris")), obs)
    assert (got.passed, got.label, got.not_graded) == (True, None, False)
    assert (got.case_id, got.exchange_id, got.session_id, got.model) == ("c1", "ex1", "s1", "m")
    assert (got.called_tools, got.expected_tools) == (["get_weather"], ["get_weather"])
    assert got.calls[0].schema_source == "offered"
    assert got.calls[0].call_id is None and got.calls[0].stage_failed is None


def test_stages_run_in_order_and_stop_at_the_first_failure():
    # wrong type (schema) and wrong value (semantic): the schema stage names the label
    got = grade_case(
        case(want(city="Paris", unit="c")), seen(("get_weather", '{"city": 5, "unit": "f"}'))
    )
    assert (got.label, got.calls[0].stage_failed) == ("type_coercion", "schema")
    # buckets still cover every expected argument
    assert buckets(got) == [{"city": "malformed", "unit": "hallucinated"}]


def test_precedence_across_calls():
    obs = seen(("get_weather", '{"city": "Lyon"}'), ("get_weather", '{"city": "Par'))
    got = grade_case(case(want(city="Paris"), want(city="Lyon"), order="unordered"), obs)
    assert got.label == "truncation"
    assert [c.label for c in got.calls] == ["truncation", None]


def test_ordered_pairs_in_order_and_skips_extra_calls_to_expected_tools():
    obs = seen(
        ("get_weather", '{"city": "A"}'),
        ("get_weather", '{"city": "B"}'),
        ("get_weather", '{"city": "B"}'),
    )
    got = grade_case(case(want(city="A"), want(city="B")), obs)
    assert got.passed
    assert [(c.expected_tool, c.label) for c in got.calls] == [
        ("get_weather", None),
        ("get_weather", None),
        (None, None),
    ]
    assert got.calls[2].errors == ["extra call to an expected tool"]


def test_ordered_position_matters_for_values():
    obs = seen(("get_weather", '{"city": "B"}'), ("get_weather", '{"city": "A"}'))
    assert grade_case(case(want(city="A"), want(city="B")), obs).label == "hallucinated_param"
    # each expected call takes its tool's next call: a repeat shifts the pairing
    repeat = seen(
        ("get_weather", '{"city": "A"}'),
        ("get_weather", '{"city": "A"}'),
        ("get_weather", '{"city": "B"}'),
    )
    assert grade_case(case(want(city="A"), want(city="B")), repeat).label == "hallucinated_param"
    unordered = case(want(city="A"), want(city="B"), order="unordered")
    assert grade_case(unordered, obs).passed


def test_unordered_pairs_by_best_argument_match():
    obs = seen(
        ("get_weather", '{"city": "B", "unit": "c"}'), ("get_weather", '{"city": "A", "unit": "f"}')
    )
    got = grade_case(
        case(want(city="A", unit="c"), want(city="B", unit="c"), order="unordered"), obs
    )
    # A pairs with the call that has city A (one match beats none)
    assert buckets(got) == [{"city": "ok", "unit": "hallucinated"}, {"city": "ok", "unit": "ok"}]


def test_wrong_tool_pairs_the_leftovers_for_the_confusion_matrix():
    got = grade_case(case(want(city="A")), seen(("search", "{}")))
    assert [(c.expected_tool, c.actual_tool, c.label) for c in got.calls] == [
        ("get_weather", "search", "wrong_tool")
    ]
    assert got.calls[0].errors == ["called 'search', which was not offered; expected 'get_weather'"]


def test_a_nameless_call_is_a_wrong_tool():
    got = grade_case(case(want(city="A")), seen((None, '{"city": "A"}')))
    assert got.label == "wrong_tool" and got.called_tools == [""]


def test_wrong_tool_beats_parallel_collapse():
    got = grade_case(case(want(city="A"), want("read_file")), seen(("search", "{}")))
    assert got.label == "wrong_tool"
    assert [c.label for c in got.calls] == ["wrong_tool", "parallel_collapse"]


def test_two_calls_to_one_of_two_expected_tools_is_a_wrong_tool():
    obs = seen(("get_weather", '{"city": "A"}'), ("get_weather", '{"city": "B"}'))
    got = grade_case(case(want(city="A"), want("read_file"), order="unordered"), obs)
    assert got.label == "wrong_tool"


def test_prefixed_names_match_both_ways():
    names = ToolNames()
    assert names.same("mcp__weather__get_weather", "get_weather")
    assert ToolNames(servers=("weather",)).same("weather__get_weather", "get_weather")
    assert not names.same("weather__get_weather", "get_weather")
    assert not names.same("get_weather_v2", "get_weather")
    assert not names.same(None, "get_weather") and not names.same("", "x")


def test_an_underscore_is_not_a_server_prefix_either_way():
    play = {"name": "play", "parameters": {"type": "object"}}
    spotify_play = {"name": "spotify_play", "parameters": {"type": "object"}}
    # expected `play`, the model called the offered `spotify_play`: another tool
    obs = Observation(
        calls=[ToolCall(name="spotify_play", arguments_raw="{}")], offered=[play, spotify_play]
    )
    got = grade_case(Case(id="c", calls=[ExpectedCall(tool="play")]), obs)
    assert got.label == "wrong_tool"
    # expected `spotify_play`, the model called `play`, which was never offered
    obs = Observation(calls=[ToolCall(name="play", arguments_raw="{}")], offered=[spotify_play])
    got = grade_case(Case(id="c", calls=[ExpectedCall(tool="spotify_play")]), obs)
    assert got.label == "wrong_tool"
    assert got.calls[0].errors == ["called 'play', which was not offered; expected 'spotify_play'"]
    # a real MCP server named spotify makes its prefix a prefix
    servers = [("spotify", "play", {"type": "object"})]
    obs = Observation(
        calls=[ToolCall(name="spotify_play", arguments_raw="{}")], offered=[spotify_play]
    )
    assert grade_case(Case(id="c", calls=[ExpectedCall(tool="play")]), obs, None, servers).passed


def test_real_prefixed_names_pass_as_the_server_tool():
    schema = {"type": "object", "properties": {"timezone": {"type": "string"}}}
    time_tools = [("time", "get_current_time", schema)]
    for called in ("mcp__time__get_current_time", "time__get_current_time"):
        obs = Observation(
            calls=[ToolCall(name=called, arguments_raw='{"timezone": "UTC"}')],
            offered=[{"name": called, "parameters": schema}],
        )
        case_ = Case(id="c", calls=[ExpectedCall(tool="get_current_time")])
        assert grade_case(case_, obs, None, time_tools).passed, called


def test_an_extra_call_names_itself_as_extra():
    obs = seen(("get_weather", '{"city": "A"}'), ("search", "{}"))
    got = grade_case(case(want(city="A")), obs)
    assert got.label == "wrong_tool"
    assert got.calls[-1].errors == ["an extra call to 'search', which no expected call names"]


def test_expecting_some_call_without_naming_it():
    assert grade_case(Case(id="c", expect="call"), seen(("anything", "{}"))).passed
    assert (
        grade_case(Case(id="c", expect="call"), seen(("anything", "{x"))).label == "malformed_json"
    )
    assert grade_case(Case(id="c", expect="call"), seen()).label == "no_call"


def test_no_call_expected_and_none_made_passes():
    got = grade_case(Case(id="c", expect="no_call"), seen())
    assert got.passed and got.calls == []


def test_the_real_schema_beats_the_offered_one():
    lax = [{"name": "get_weather", "parameters": {"type": "object"}}]
    obs = seen(("get_weather", '{"city": "A", "x": 1}'), offered=lax)
    assert grade_case(case(want(city="A")), obs).passed
    grader = make_grader(server_tools=[("wx", "get_weather", WEATHER)])
    got = grader(case(want(city="A")), obs)
    assert (got.label, got.calls[0].schema_source) == ("hallucinated_param", "mcp_server")


def test_no_schema_means_only_parse_and_matchers():
    got = grade_case(case(want(city="A")), seen(("get_weather", '{"city": 1}'), offered=[]))
    assert got.calls[0].schema_source == "none"
    assert got.label == "hallucinated_param"


def test_the_cases_own_tools_are_used_when_nothing_was_offered():
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
    got = grade_case(
        case(want(city="A"), tools=tools),
        seen(("get_weather", '{"city": "A", "x": 1}'), offered=[]),
    )
    assert got.label == "hallucinated_param" and got.calls[0].schema_source == "offered"


def test_a_tool_offered_twice_is_checked_against_its_first_schema():
    strict = {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}
    loose = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
    call = seen(("get_weather", '{"city": "A", "x": 1}'), offered=[])
    first = grade_case(case(want(city="A"), tools=[strict, loose]), call)
    again = grade_case(case(want(city="A"), tools=[loose, strict]), call)
    assert first.label == "hallucinated_param" and first.calls[0].stage_failed == "schema"
    assert again.calls[0].stage_failed != "schema"


def test_offered_tools_reads_every_wire_shape():
    tools = offered_tools(
        [
            {"name": "a", "parameters": {"type": "object"}},
            {"type": "function", "function": {"name": "b", "parameters": {}}},
            {"name": "c", "input_schema": {"type": "object"}},
            {"name": "d", "inputSchema": True},
            {"name": "e"},
            {"name": "f", "parameters": None, "input_schema": {"type": "object"}},  # None given
            {"nameless": 1},
            "junk",
            {"name": "a", "parameters": {"type": "string"}},  # a name again: the first wins
        ]
    )
    assert list(tools.items()) == [
        ("a", {"type": "object"}),
        ("b", {}),
        ("c", {"type": "object"}),
        ("d", True),
        ("e", None),
        ("f", None),
    ]
    assert offered_tools("not a list") == {}


def test_validators_compile_once_per_schema():
    validators = set()

    def counting(schema):
        compiled = compile_schema(schema)
        validators.add(id(compiled.validator))
        return compiled

    for city in ("A", "B", "C"):
        obs = seen(
            ("get_weather", f'{{"city": "{city}"}}'),
            offered=[{"name": "get_weather", "parameters": dict(WEATHER)}],
        )
        grade_case(case(want(city=city)), obs, compiler=counting)
    assert len(validators) == 1


def test_an_unusable_schema_skips_the_schema_stage():
    bad = [{"name": "get_weather", "parameters": {"type": "no-such-type"}}]
    got = grade_case(case(want(city="A")), seen(("get_weather", '{"city": "A"}'), offered=bad))
    assert got.passed
    assert got.calls[0].errors[0].startswith("schema not checked")


def test_an_unresolvable_ref_skips_the_schema_stage():
    bad = [{"name": "get_weather", "parameters": {"$ref": "#/$defs/missing"}}]
    got = grade_case(case(want(city="A")), seen(("get_weather", '{"city": "A"}'), offered=bad))
    assert got.passed and "schema not checked" in got.calls[0].errors[0]


def test_refs_and_nested_paths():
    schema = {
        "$defs": {
            "range": {
                "type": "object",
                "properties": {"since": {"type": "string", "format": "date-time"}},
                "required": ["since"],
            }
        },
        "type": "object",
        "properties": {"filters": {"$ref": "#/$defs/range"}},
    }
    tools = [{"name": "q", "parameters": schema}]
    got = grade_case(case(want("q")), seen(("q", '{"filters": {}}'), offered=tools))
    assert got.label == "missing_required" and buckets(got) == [{"filters.since": "missing"}]
    got = grade_case(
        case(want("q")), seen(("q", '{"filters": {"since": "yesterday"}}'), offered=tools)
    )
    assert got.label == "schema_violation" and buckets(got) == [{"filters.since": "malformed"}]


def test_recorded_arguments_are_trusted_over_the_raw_text():
    # an Anthropic argument-less call: raw "" but the API's own reading is {}
    call = ToolCall(name="ping", arguments_raw="", arguments={})
    assert grade_case(case(want("ping")), Observation(calls=[call])).passed
    encoded = ToolCall(name="ping", arguments_raw="", arguments='{"a": 1}')
    assert grade_case(case(want("ping")), Observation(calls=[encoded])).label == "escaping_error"
    listed = ToolCall(name="ping", arguments_raw="", arguments=[1])
    assert grade_case(case(want("ping")), Observation(calls=[listed])).label == "malformed_json"


def test_a_reply_that_ended_early_makes_any_parse_failure_truncation():
    got = grade_case(
        case(want(city="A")), seen(("get_weather", '{"city": "A"]'), finish_reason="max_tokens")
    )
    assert got.label == "truncation" and "ended early" in got.calls[0].errors[0]
    got = grade_case(case(want(city="A")), seen(("get_weather", '{"city": "A"}'), complete=False))
    assert got.passed  # text that parses is not a truncation


def test_judge_fields_without_a_judge_are_not_graded_never_passed():
    judged = case(want(city=Matcher(kind="judge", criterion="a French city")))
    got = grade_case(judged, seen(("get_weather", '{"city": "Lyon"}')))
    assert (got.passed, got.label, got.not_graded) == (False, None, True)
    # a case that fails anyway is a failure, not "not graded"
    got = grade_case(judged, seen(("get_weather", "{}")))
    assert (got.passed, got.label, got.not_graded) == (False, "missing_required", False)


def test_the_judge_is_not_asked_after_the_schema_stage_failed():
    asked = []

    def judge(criterion: str, value: Any) -> tuple[bool, str]:
        asked.append(value)
        return True, "fine"

    judged = case(want(city=Matcher(kind="judge", criterion="a French city"), unit="c"))
    got = make_grader(judge)(judged, seen(("get_weather", '{"city": "Lyon", "unit": "k"}')))
    assert asked == [] and got.label == "schema_violation"
    assert buckets(got) == [{"city": "not_graded", "unit": "hallucinated"}]
    got = make_grader(judge)(judged, seen(("get_weather", '{"city": "Lyon", "unit": "c"}')))
    assert asked == ["Lyon"] and got.passed
    assert (got.calls[0].args[0].judged, got.calls[0].args[0].judge_reason) == (True, "fine")


@pytest.mark.parametrize(
    ("score", "pass_at", "passed"),
    [(1.0, None, True), (0.5, None, False), (0.5, 0.5, True), (0.0, 0.5, False)],
)
def test_a_judged_field_keeps_its_score_and_passes_at_pass_at(score, pass_at, passed):
    def judge(criterion: str, value: Any) -> tuple[float, str]:
        return score, f"scored {score}"

    m = Matcher(kind="judge", criterion="Paris, 8th arrondissement", pass_at=pass_at)
    got = make_grader(judge)(case(want(city=m)), seen(("get_weather", '{"city": "Paris"}')))
    arg = got.calls[0].args[0]
    assert got.passed is passed and (arg.judge_score, arg.judge_reason) == (
        score,
        f"scored {score}",
    )
    assert got.label == (None if passed else "hallucinated_param")
    assert arg.bucket == ("ok" if passed else "hallucinated")


def test_semantic_errors_are_listed():
    got = grade_case(case(want(city="Paris")), seen(("get_weather", '{"city": "Lyon"}')))
    assert got.calls[0].errors == ["expected 'Paris', got 'Lyon'"]


def test_over_escaped_any_of_is_an_escaping_error():
    paths = Matcher(kind="any_of", values=[r"C:\tmp", "D:/tmp"])
    got = grade_case(
        case(want("read", path=paths)), seen(("read", r'{"path": "C:\\\\tmp"}'), offered=[])
    )
    assert got.label == "escaping_error"


def test_parallel_calls_grade_alike_proven_or_not() -> None:
    # the same calls in order (proven by `_in_order`), reversed (proven by their scores)
    # and with a wrong value (that call not proven): the grades matching each one gives
    expected = [
        ExpectedCall(
            tool="w", args={"city": Matcher(kind="text", value=city)}, allow_extra_args=False
        )
        for city in ("Paris", "Oslo")
    ]
    case = Case(id="c", order="unordered", calls=expected)
    right = [{"city": "paris", "x": 1}, {"city": "OSLO"}]
    invented = [("city", "ok"), ("x", "hallucinated")]
    for observed, wanted in (
        (right, [[("city", "ok")], invented]),
        (right[::-1], [[("city", "ok")], invented]),
        ([right[0], {"city": "Rome"}], [[("city", "hallucinated")], invented]),
    ):
        calls = [ToolCall(index=j, name="w", arguments=a) for j, a in enumerate(observed)]
        grade = grade_case(case, Observation(calls=calls))
        assert sorted([(a.name, a.bucket) for a in c.args] for c in grade.calls) == wanted
        assert grade.label == "hallucinated_param"
