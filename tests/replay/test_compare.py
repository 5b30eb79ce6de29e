"""compare: recorded vs replayed per call, labeled by the grader."""

from __future__ import annotations

from toolproxy.records import ToolCall
from toolproxy.replay.compare import (
    arguments_of,
    diff_cell,
    first_attempts,
    observe_turn,
    recorded_case,
)
from toolproxy.replay.model import CellResult, ReplayItem, Step, TurnRecord

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
NOTES = {
    "type": "function",
    "function": {"name": "search_notes", "parameters": {"type": "object", "properties": {}}},
}


def call(name: str | None, raw: str, call_id: str | None = None) -> ToolCall:
    return ToolCall(call_id=call_id, name=name, arguments_raw=raw)


def item(*steps: list[ToolCall]) -> ReplayItem:
    return ReplayItem(
        item_id="s1",
        kind="session",
        steps=[
            Step(
                messages=[{"role": "user", "content": "hi"}],
                tools=[WEATHER, NOTES],
                recorded_calls=c,
            )
            for c in steps
        ],
    )


def cell(*turns: TurnRecord) -> CellResult:
    return CellResult(
        run="r",
        candidate="c",
        item_id="s1",
        repeat=2,
        finished_at="2024-05-01T00:00:00+00:00",
        status="completed",
        turns=list(turns),
    )


def turn(step: int, *calls: ToolCall, attempt: int = 0, **extra: object) -> TurnRecord:
    return TurnRecord(
        step=step, attempt=attempt, exchange_id=f"x{step}{attempt}", calls=list(calls), **extra
    )


PARIS = call("get_weather", '{"city": "Paris"}', "r1")


def test_same_call_has_no_label():
    [d] = diff_cell(item([PARIS]), cell(turn(0, call("get_weather", '{"city":"Paris"}', "a"))))
    assert (d.run, d.candidate, d.item_id, d.repeat, d.step, d.index) == ("r", "c", "s1", 2, 0, 0)
    assert d.same_tool and d.same_arguments and d.label is None
    assert d.recorded_arguments == {"city": "Paris"} == d.replayed_arguments


def test_wrong_tool():
    [d] = diff_cell(item([PARIS]), cell(turn(0, call("search_notes", "{}"))))
    assert not d.same_tool and not d.same_arguments
    assert (d.recorded_tool, d.replayed_tool, d.label) == (
        "get_weather",
        "search_notes",
        "wrong_tool",
    )


def test_hallucinated_value_and_invented_argument():
    [d] = diff_cell(item([PARIS]), cell(turn(0, call("get_weather", '{"city": "Lyon"}'))))
    assert d.same_tool and not d.same_arguments and d.label == "hallucinated_param"
    [d] = diff_cell(
        item([PARIS]), cell(turn(0, call("get_weather", '{"city": "Paris", "zip": 1}')))
    )
    assert d.label == "hallucinated_param"


def test_type_differences_are_not_the_same_arguments():
    rec = call("get_weather", '{"city": "Paris", "n": 1}')
    [d] = diff_cell(item([rec]), cell(turn(0, call("get_weather", '{"city": "Paris", "n": true}'))))
    assert not d.same_arguments
    [d] = diff_cell(item([rec]), cell(turn(0, call("get_weather", '{"n": 1.0, "city": "Paris"}'))))
    assert d.same_arguments


def test_unparsed_arguments_compare_raw_text():
    [d] = diff_cell(item([PARIS]), cell(turn(0, call("get_weather", '{"city": "Par'))))
    assert d.replayed_arguments == '{"city": "Par' and not d.same_arguments
    assert d.label in ("truncation", "malformed_json")
    bad = call("get_weather", "{oops")
    [d] = diff_cell(item([bad]), cell(turn(0, call("get_weather", "{oops"))))
    assert d.same_arguments  # both unparseable, same text


def test_missing_and_extra_calls():
    two = [PARIS, call("search_notes", '{"query": "x"}', "r2")]
    diffs = diff_cell(item(two), cell(turn(0, call("get_weather", '{"city": "Paris"}'))))
    assert [(d.recorded_tool, d.replayed_tool) for d in diffs] == [
        ("get_weather", "get_weather"),
        ("search_notes", None),
    ]
    assert diffs[1].label is not None and not diffs[1].same_tool
    extra = [call("get_weather", '{"city": "Paris"}'), call("search_notes", "{}")]
    diffs = diff_cell(item([PARIS]), cell(turn(0, *extra)))
    assert diffs[1].recorded_tool is None and diffs[1].label == "wrong_tool"


def test_text_instead_of_call_is_no_call():
    [d] = diff_cell(item([PARIS]), cell(turn(0, text="it is sunny")))
    assert d.replayed_tool is None and d.label == "no_call"


def test_call_where_text_was_recorded_is_spurious():
    [d] = diff_cell(item([]), cell(turn(0, call("get_weather", '{"city": "Paris"}'))))
    assert d.recorded_tool is None and d.label == "spurious_call"


def test_first_attempt_per_step_and_unreached_steps():
    retry = turn(0, call("get_weather", '{"city": "Paris"}'), attempt=1)
    first = turn(0, call("get_weather", "{}"))
    result = cell(retry, first)
    assert first_attempts(result)[0] is first
    diffs = diff_cell(item([PARIS], [PARIS]), result)
    assert [d.step for d in diffs] == [0]  # step 1 was never reached
    assert diffs[0].label == "missing_required"


def test_failed_turn_without_calls_gives_no_rows():
    failed = turn(0, error_kind="http_5xx", error="HTTP 500")
    assert diff_cell(item([PARIS]), cell(failed)) == []


def test_server_prefix_is_the_same_tool():
    weather = [("weather", "get_weather", {"type": "object"})]
    replayed = cell(turn(0, call("weather__get_weather", '{"city": "Paris"}')))
    [d] = diff_cell(item([PARIS]), replayed, weather)
    assert d.same_tool and d.same_arguments
    marked = cell(turn(0, call("mcp__wx__get_weather", '{"city": "Paris"}')))
    [d] = diff_cell(item([PARIS]), marked)
    assert d.same_tool


def test_an_unknown_prefix_is_another_tool():
    [d] = diff_cell(item([PARIS]), cell(turn(0, call("weather__get_weather", '{"city": "Paris"}'))))
    assert not d.same_tool and not d.same_arguments


def test_recorded_case_and_observation():
    case = recorded_case(item([PARIS, call("search_notes", "{bad")]).steps[0])
    assert case.order == "unordered" and case.calls[1].args == {}
    assert case.calls[0].args["city"].value == "Paris"
    assert recorded_case(item([]).steps[0]).expect == "no_call"
    obs = observe_turn(
        turn(0, call("get_weather", "{bad"), error_kind="stream_cut"), item([]).steps[0]
    )
    assert not obs.complete and obs.calls[0].parse_error and obs.calls[0].arguments is None
    assert [t["name"] for t in obs.offered] == ["get_weather", "search_notes"]
    assert arguments_of(ToolCall(arguments={"a": 1}, arguments_raw="x")) == {"a": 1}


def test_a_replayed_turn_s_text_goes_to_the_grader_when_it_made_no_call():
    lost = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    assert observe_turn(turn(0, text=lost), item([]).steps[0]).text == lost
    assert observe_turn(turn(0, PARIS, text="calling"), item([]).steps[0]).text is None


def test_a_structured_output_is_replayed_and_graded_as_one_call_to_the_output():
    from toolproxy.grade.checker import grade_case
    from toolproxy.wire.structured import OUTPUT

    fmt = {
        "type": "json_schema",
        "json_schema": {
            "name": "t",
            "schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
    step = Step(messages=[{"role": "user", "content": "hi"}], params={"response_format": fmt},
                recorded_text='{"city": "Paris"}')  # fmt: skip
    case = recorded_case(step)
    assert case.expect == "output" and case.calls[0].tool == OUTPUT
    assert case.calls[0].args["city"].value == "Paris"
    same = observe_turn(turn(0, text='{"city": "Paris"}'), step)
    assert [c.name for c in same.calls] == [OUTPUT] and same.text is None
    assert same.offered[-1]["parameters"] == fmt["json_schema"]["schema"]
    assert grade_case(case, same).passed
    assert grade_case(case, observe_turn(turn(0, text='{"city": "Lyon"}'), step)).label == (
        "hallucinated_param"
    )
    assert grade_case(case, observe_turn(turn(0, text="{}"), step)).label == "missing_required"
    plain = Step(messages=step.messages, recorded_text="hello")  # no response_format
    assert recorded_case(plain).expect == "no_call"
    assert observe_turn(turn(0, text="hello"), plain).calls == []
