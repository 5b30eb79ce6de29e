"""The C selection stage (`nativepairing.c`, part of `nativegrade.c`): the same pairs,
labels and words as `pairing.pair_calls` and `checker._selection`, ordered and unordered,
scored by the arguments where a call could answer more than one expectation."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.grade.test_nativegrade import SETTINGS, agrees, native_grader
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation
from toolproxy.records import ToolCall


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return native_grader()


@SETTINGS
@given(st.lists(st.sampled_from(["a", "b", "mcp__srv__a"]), min_size=1, max_size=4), st.data())
def test_pairing_of_repeated_tools_is_the_pythons(native, tools, data):
    """Parallel calls to the same tools, in any order, some right and some not: the
    unordered pairing scores them by their arguments; extra calls, allowed or not."""

    def matcher(value: Any) -> Matcher:
        kind = data.draw(st.sampled_from(["exact", "any_of", "regex", "any"]))
        return Matcher(kind=kind, value=value, values=[value, 9], pattern="[a-z]+")

    expected = [
        ExpectedCall(tool=t, args={"x": matcher(data.draw(st.integers(0, 3)))}) for t in tools
    ]
    calls = [
        ToolCall(
            name=data.draw(st.sampled_from(["a", "b", "mcp__srv__a", "c"])),
            arguments={"x": data.draw(st.integers(0, 3) | st.just("y"))},
            call_id=f"c{i}",
        )
        for i in range(data.draw(st.integers(1, 5)))
    ]
    case = Case(
        id="p",
        calls=expected,
        order=data.draw(st.sampled_from(["ordered", "unordered"])),
        extra_calls=data.draw(st.sampled_from(["allow", "forbid", 0, 1])),
    )
    offered = data.draw(st.sampled_from([[], [{"name": n, "parameters": {}} for n in "ab"]]))
    observation = Observation(calls=calls, offered=offered)
    assert agrees(native, case, observation) is not None  # every part of it read in C


def calls_to(*names: str | None) -> Observation:
    return Observation(calls=[ToolCall(name=n, arguments={}, call_id=f"c{i}")
                              for i, n in enumerate(names)])  # fmt: skip


@pytest.mark.parametrize(
    "expected, observation, label",
    [
        (["a"], calls_to("b"), "wrong_tool"),
        (["a", "b"], calls_to("b", "a"), "wrong_tool"),  # ordered: out of order
        (["a", "b"], calls_to("a"), "parallel_collapse"),
        (["a"], calls_to("a", "a"), None),  # an extra call to an expected tool is allowed
        (["a"], calls_to("a", "z"), "wrong_tool"),  # an extra call no expectation names
        (["a"], calls_to(None), "wrong_tool"),  # a call with no name
        ([], calls_to("x"), None),  # "some call" expected
    ],
)
def test_selection_labels_and_words(native, expected, observation, label):
    case = Case(id="s", calls=[ExpectedCall(tool=t) for t in expected])
    found = agrees(native, case, observation)
    assert found is not None and found.label == label


def test_a_name_not_offered_is_never_the_expected_tool(native):
    case = Case(id="o", calls=[ExpectedCall(tool="a")])
    observation = calls_to("a").model_copy(update={"offered": [{"name": "b", "parameters": {}}]})
    found = agrees(native, case, observation)
    assert found is not None and "which was not offered" in found.calls[0].errors[0]


@pytest.mark.parametrize("extra_calls, label", [("forbid", "spurious_call"), (1, None)])
def test_extra_calls_beyond_what_the_case_allows(native, extra_calls, label):
    case = Case(id="x", calls=[ExpectedCall(tool="a")], extra_calls=extra_calls)
    found = agrees(native, case, calls_to("a", "a"))
    assert found is not None and found.label == label
