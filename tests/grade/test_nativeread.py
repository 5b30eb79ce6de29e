"""How the C grader reads a case (`nativeread.c`, part of `nativegrade.c`): what it does
not read as `grade_case_py` would, it hands back (None), and the Python grader grades."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.grade.test_nativegrade import agrees, native_grader, weather_case
from tests.grade.test_properties import server_tools
from toolproxy.grade.checker import grade_case
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation
from toolproxy.records import ToolCall


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return native_grader()


@pytest.mark.parametrize(
    "update, calls",
    [
        ({"expect": "no_call"}, None),  # spurious calls: the Python grader's words
        ({"expect": "output"}, None),
        ({}, []),  # no call made: a call lost in the text is looked for in Python
    ],
)
def test_what_it_does_not_read_is_handed_back(native, update, calls):
    case, observation = weather_case(**update)
    if calls is not None:
        observation = observation.model_copy(update={"calls": calls})
    assert native.grade(case, observation, None, ()) is None
    assert grade_case(case, observation) is not None  # graded all the same


def test_a_call_subclass_is_handed_back(native):
    class Recorded(ToolCall):
        pass

    case, observation = weather_case()
    subclass = Recorded(**observation.calls[0].model_dump())
    moved = observation.model_copy(update={"calls": [subclass]})
    assert native.grade(case, moved, None, ()) is None


def test_more_calls_than_it_reads_are_handed_back(native):
    case, observation = weather_case()
    many = observation.model_copy(update={"calls": observation.calls * (native.MAX_CALLS + 1)})
    assert native.grade(case, many, None, ()) is None
    assert native.grade(case, observation.model_copy(update={"calls": observation.calls * 3}),
                        None, ()) is not None  # fmt: skip


def test_a_tool_offered_as_a_dict_subclass_or_wrapped_as_a_function(native):
    class Spec(dict):
        pass

    case, observation = weather_case()
    wrapped = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    assert agrees(native, case, observation.model_copy(update={"offered": wrapped}))
    odd = [Spec(name="get_weather", parameters={})]
    assert native.grade(case, observation.model_copy(update={"offered": odd}), None, ()) is None


def test_an_expected_call_or_a_call_read_as_other_types_is_handed_back(native):
    case = Case(id="t", calls=[ExpectedCall(tool="get_weather", args={1: "x"})])  # type: ignore[dict-item]
    _, observation = weather_case()
    assert native.grade(case, observation, None, ()) is None  # an argument name not a str
    unnamed = observation.model_copy(update={"calls": [ToolCall.model_construct(name=3)]})
    assert native.grade(weather_case()[0], unnamed, None, ()) is None  # a name not a str


# --- the offered tools: an array of HELD_TOOLS, a dict past it ----------------------------

POOL = [f"tool_{i}" for i in range(24)] + ["get_weather"]  # more than HELD_TOOLS names


@st.composite
def offered_specs(draw: st.DrawFn) -> Any:
    """One offered tool in any shape `checker.offered_tools` reads or skips."""
    name = draw(st.sampled_from(POOL))
    schema = draw(
        st.sampled_from(
            [
                {},
                {"type": "object", "properties": {"city": {"type": "string"}}},
                {"type": "object", "properties": {"city": {"type": "integer"}}},
                None,
            ]
        )
    )
    shape = draw(st.sampled_from(["plain", "function", "input_schema", "inputSchema", "odd"]))
    if shape == "function":
        return {"type": "function", "function": {"name": name, "parameters": schema}}
    if shape in ("input_schema", "inputSchema"):
        return {"name": name, shape: schema}
    if shape == "odd":
        return draw(st.sampled_from(["not a tool", {"name": 3}, {"parameters": {}}]))
    return {"name": name, "parameters": schema}


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.integers(0, 60).flatmap(lambda n: st.lists(offered_specs(), min_size=n, max_size=n)),
    st.lists(st.sampled_from([*POOL, "never_offered"]), min_size=1, max_size=3),
    st.booleans(),
    server_tools,
)
def test_any_number_of_offered_tools_reads_as_offered_tools(native, offered, names, parsed, mcp):
    """Past HELD_TOOLS names the tools spill into a dict; before that a Python hook (a call
    the wire did not read: `grade_call`; MCP servers: `resolve`) is given one built from
    the array. Either way: the Python grade, or handed back."""
    calls = [
        ToolCall(
            index=i,
            name=name,
            arguments_raw='{"city": "Paris"}',
            arguments={"city": "Paris"} if parsed else None,
        )
        for i, name in enumerate(names)
    ]
    case = Case(id="t", calls=[ExpectedCall(tool=names[0], args={"city": Matcher(value="Paris")})])
    found = agrees(native, case, Observation(calls=calls, offered=offered), None, mcp)
    distinct = len({n for n in (t.get("function", t).get("name") for t in offered
                                if isinstance(t, dict)) if isinstance(n, str)})  # fmt: skip
    event(f"graded, {'past' if distinct > 16 else 'within'} HELD_TOOLS" if found else "back")


def test_a_call_to_the_seventeenth_tool_finds_its_schema(native):
    """The 17th distinct name is the first the dict holds: its schema, not the first
    duplicate's, and the names before it still found."""
    city = {"type": "object", "properties": {"city": {"type": "string"}}}
    wrong = {"type": "object", "properties": {"city": {"type": "integer"}}}
    offered = [{"name": f"tool_{i}", "parameters": wrong} for i in range(16)]
    offered += [
        {"name": "get_weather", "parameters": city},
        {"name": "get_weather", "parameters": wrong},
    ]
    offered += [{"name": "tool_0", "parameters": city}]  # a repeat after the spill: not kept
    case, observation = weather_case()
    found = agrees(native, case, observation.model_copy(update={"offered": offered}))
    assert found is not None and found.passed
    case0 = Case(id="t", calls=[ExpectedCall(tool="tool_0", args={"city": Matcher(value="Paris")})])
    call0 = observation.calls[0].model_copy(update={"name": "tool_0"})
    found = agrees(native, case0, Observation(calls=[call0], offered=offered))
    assert found is not None and found.label == "schema_violation"  # tool_0's first schema
    lost = observation.calls[0].model_copy(update={"name": "get_wether"})
    found = agrees(native, case, Observation(calls=[lost], offered=offered))
    assert found is not None and "which was not offered" in found.calls[0].errors[0]
