"""Property tests: the grader never raises, and every failing case gets exactly one label."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from toolproxy.grade.checker import grade_case
from toolproxy.grade.labels import PRECEDENCE, first_label
from toolproxy.grade.matchers import match
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation
from toolproxy.grade.parsestage import classify
from toolproxy.records import ToolCall

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = ["get_weather", "mcp__wx__get_weather", "read_file", "search", "", "é名"]
KEYS = st.sampled_from(["city", "unit", "limit", "path", "q", "ü", ""])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["5", "2.5", "true", "C:\\new", "2025-03-04T10:00:00Z", "2025-03-04T10:00:00"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


def _nest(depth: int) -> Any:
    value: Any = "deep"
    for i in range(depth):
        value = [value] if i % 2 else {"city": value}
    return value


deep_values = st.integers(min_value=1, max_value=800).map(_nest)
arg_objects = st.dictionaries(KEYS, json_values | deep_values, max_size=5)


@st.composite
def argument_text(draw: st.DrawFn) -> str:
    """Valid objects, their cuts and corruptions, deep nesting and plain garbage."""
    text = json.dumps(draw(arg_objects), ensure_ascii=draw(st.booleans()))
    kind = draw(st.sampled_from(["valid"] * 3 + ["cut", "poke", "garbage", "deep", "encoded"]))
    if kind == "cut":
        return text[: draw(st.integers(0, len(text)))]
    if kind == "poke":
        at = draw(st.integers(0, len(text)))
        return (
            text[:at] + draw(st.sampled_from(['"', "\\", "\n", "'", ",", "}", "\x00"])) + text[at:]
        )
    if kind == "garbage":
        return draw(st.text(max_size=40))
    if kind == "deep":
        n = draw(st.integers(1, 3000))
        return '{"a": ' + "[" * n + "]" * draw(st.integers(0, n)) + "}"
    if kind == "encoded":
        return json.dumps(text)
    return text


types = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
leaf_schemas = st.one_of(
    st.builds(lambda t: {"type": t}, types),
    st.builds(lambda t: {"type": [t, "null"]}, types),
    st.builds(lambda v: {"enum": v}, st.lists(scalars, min_size=1, max_size=3)),
    st.just({"type": "string", "format": "date-time"}),
    st.just({"type": "string", "pattern": "^[a-z]+$"}),
    st.just({"type": "integer", "minimum": 0, "maximum": 10}),
    st.just({"anyOf": [{"type": "number"}, {"type": "null"}]}),
    st.just({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
    st.just({"$ref": "#/$defs/nowhere"}),
    st.just(False),
    st.just({}),
)
schemas = st.one_of(
    st.builds(
        lambda props, required, extra: {
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": extra,
        },
        st.dictionaries(KEYS, leaf_schemas, max_size=4),
        st.lists(KEYS, max_size=3, unique=True),
        st.booleans(),
    ),
    st.builds(
        lambda s: {"type": "object", "properties": {"city": s}, "unevaluatedProperties": False},
        leaf_schemas,
    ),
    json_values,  # junk: not a schema at all
    st.none(),
)
matchers = st.builds(
    Matcher,
    kind=st.sampled_from(
        [
            "exact",
            "any_of",
            "enum",
            "range",
            "tolerance",
            "regex",
            "datetime",
            "unordered",
            "text",
            "judge",
        ]
    ),
    value=json_values,
    values=st.none() | st.lists(json_values, max_size=3),
    min=st.none() | st.floats(allow_nan=False, allow_infinity=False),
    max=st.none() | st.floats(allow_nan=False, allow_infinity=False),
    tolerance=st.none() | st.floats(min_value=0, max_value=100),
    pattern=st.none() | st.sampled_from(["[a-z]+", "(", "\\d{2}", ".*"]),
    criterion=st.none() | st.text(max_size=10),
    ignore=st.none()
    | st.lists(st.sampled_from(["case", "whitespace", "punctuation"]), unique=True),
    optional=st.booleans(),
)
# matchers nest: an object's fields and a list's items are matchers, at any depth
matchers = st.recursive(
    matchers,
    lambda inner: (
        st.builds(
            Matcher,
            kind=st.just("object"),
            fields=st.dictionaries(KEYS, inner, max_size=3),
            allow_extra=st.none() | st.booleans(),
            optional=st.booleans(),
        )
        | st.builds(
            Matcher,
            kind=st.just("list"),
            items=st.lists(inner, max_size=3),
            order=st.none() | st.sampled_from(["ordered", "unordered"]),
            allow_extra=st.none() | st.booleans(),
        )
    ),
    max_leaves=6,
)
expected_calls = st.builds(
    ExpectedCall,
    tool=st.sampled_from(NAMES[:4]),
    args=st.dictionaries(KEYS, matchers, max_size=3),
    allow_extra_args=st.booleans(),
)
cases = st.builds(
    Case,
    id=st.just("p"),
    expect=st.sampled_from(["call", "no_call"]),
    calls=st.lists(expected_calls, max_size=3),
    order=st.sampled_from(["ordered", "unordered"]),
    extra_calls=st.sampled_from(["allow", "forbid"]) | st.integers(0, 3),
    tools=st.none()
    | st.lists(
        st.fixed_dictionaries({"name": st.sampled_from(NAMES), "parameters": schemas}), max_size=2
    ),
)


@st.composite
def observed_calls(draw: st.DrawFn) -> ToolCall:
    raw = draw(argument_text())
    recorded = draw(st.sampled_from(["raw", "parsed", "junk"]))
    arguments: Any = None
    if recorded == "parsed":
        try:
            arguments = json.loads(raw)
        except (ValueError, RecursionError):
            arguments = None
    elif recorded == "junk":
        arguments = draw(json_values)
    return ToolCall(
        index=draw(st.integers(0, 5)),
        name=draw(st.none() | st.sampled_from(NAMES) | st.text(max_size=8)),
        arguments_raw=raw,
        arguments=arguments,
        parse_error=draw(st.none() | st.just("Expecting value at char 0")),
    )


observations = st.builds(
    Observation,
    finish_reason=st.none() | st.sampled_from(["stop", "tool_calls", "length", "max_tokens"]),
    complete=st.booleans(),
    calls=st.lists(observed_calls(), max_size=3),
    offered=st.lists(
        st.fixed_dictionaries({"name": st.sampled_from(NAMES), "parameters": schemas}), max_size=3
    ),
    # a reply's text: a call lost in it in some format, or plain text, or junk
    text=st.none()
    | st.sampled_from(
        [
            '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
            '<tool_call>{"name": "get_weather", "arguments": {"ci',
            '[TOOL_CALLS]get_weather[ARGS]{"city": 1}',
            "[get_weather(city=None)]",
            "It is sunny.",
        ]
    )
    | st.text(max_size=40),
)


def _judge_ok(criterion: str, value: Any) -> tuple[bool, str]:
    return len(str(criterion)) % 2 == 0, "parity"


def _judge_broken(criterion: str, value: Any) -> tuple[bool, str]:
    raise ConnectionError("judge endpoint down")


judges = st.sampled_from([None, _judge_ok, _judge_broken])
server_tools = st.lists(st.tuples(st.just("wx"), st.sampled_from(NAMES), schemas), max_size=2)


@settings(SETTINGS, max_examples=250)
@given(cases, observations, judges, server_tools)
def test_the_grader_never_raises_and_gives_exactly_one_label(case, observation, judge, servers):
    grade = grade_case(case, observation, judge, servers)
    event(f"label {grade.label}")
    assert grade.label is None or grade.label in PRECEDENCE
    assert grade.passed == (grade.label is None and not grade.not_graded)
    assert not (grade.not_graded and grade.label is not None)
    call_labels = [c.label for c in grade.calls if c.label is not None]
    assert all(label in PRECEDENCE for label in call_labels)
    assert grade.label == first_label(call_labels)
    if case.expect == "no_call" and observation.calls:
        assert grade.label == "spurious_call"
    if case.expect == "call" and not observation.calls:
        assert grade.label == "no_call"
    if grade.leaked_format is not None:  # calls lost in text never change the label
        assert grade.label == "no_call" and not observation.calls
        assert grade.leaked_label is None or grade.leaked_label in ("passed", *PRECEDENCE)
    else:
        assert grade.leaked_label is None
    extras = [c for c in grade.calls if c.expected_tool is None and case.expect == "call"]
    if case.extra_calls == "allow" or grade.label in ("no_call", "wrong_tool"):
        assert all(c.label != "spurious_call" for c in extras)
    for call in grade.calls:
        assert (call.label is None) == (call.stage_failed is None)
        assert call.schema_source in (None, "mcp_server", "offered", "none")
    buckets = [a.bucket for c in grade.calls for a in c.args]
    assert all(b in ("ok", "hallucinated", "missing", "malformed", "not_graded") for b in buckets)


@SETTINGS
@given(argument_text())
def test_classify_is_total_and_agrees_with_the_parser(text):
    label = classify(text)
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        parsed = None
    assert (label is None) == isinstance(parsed, dict)
    assert label in (None, "truncation", "escaping_error", "malformed_json")


@SETTINGS
@given(arg_objects, st.data())
def test_every_strict_prefix_of_an_object_is_truncation(value, data):
    text = json.dumps(value, ensure_ascii=data.draw(st.booleans()))
    cut = data.draw(st.integers(1, len(text) - 1))
    assert classify(text[:cut]) == "truncation"


@SETTINGS
@given(matchers, json_values | deep_values, judges)
def test_matchers_never_raise(matcher, value, judge):
    ok, detail = match(matcher, value, judge)
    assert ok in (True, False, None)
    assert detail is None or isinstance(detail, str)


@settings(SETTINGS, max_examples=250)
@given(st.lists(expected_calls, min_size=1, max_size=3), st.data())
def test_calls_to_the_expected_tools_reach_every_stage(expected, data):
    case = Case(id="p", calls=expected, order=data.draw(st.sampled_from(["ordered", "unordered"])))
    names = [e.tool for e in expected]
    calls = [
        data.draw(observed_calls()).model_copy(update={"name": data.draw(st.sampled_from(names))})
        for _ in range(data.draw(st.integers(len(expected), len(expected) + 1)))
    ]
    offered = [{"name": n, "parameters": data.draw(schemas)} for n in set(names)]
    observation = Observation(calls=calls, offered=offered, complete=data.draw(st.booleans()))
    grade = grade_case(case, observation, data.draw(judges))
    event(f"label {grade.label}")
    assert grade.passed == (grade.label is None and not grade.not_graded)
    assert grade.label == first_label([c.label for c in grade.calls if c.label is not None])
    for call in grade.calls:
        missing = {a.name for a in call.args if a.bucket == "missing"}
        hallucinated = {a.name for a in call.args if a.bucket == "hallucinated"}
        assert not missing & hallucinated  # a missing field is never a hallucination
        assert len({a.name for a in call.args}) == len(call.args)  # one bucket per argument
