"""Selection pairing: the ordered walk (with its shortcut for calls already in place) and
the unordered pairing by tool, then by best argument match."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolproxy.grade.model import Case, ExpectedCall, Matcher
from toolproxy.grade.pairing import ToolNames, pair_calls
from toolproxy.records import ToolCall

NAMES = st.lists(st.sampled_from(["a", "b", "c"]), max_size=4)


def reference_ordered(expected: list[str], observed: list[str]) -> list[tuple]:
    """The ordered rule as the docs state it, written plainly."""
    taken, start = {}, 0
    for i, tool in enumerate(expected):
        j = next((j for j in range(start, len(observed)) if observed[j] == tool), None)
        if j is not None:
            taken[i], start = j, j + 1
    left_e = [i for i in range(len(expected)) if i not in taken]
    left_o = [j for j in range(len(observed)) if j not in taken.values()]
    wrong = dict(zip(left_e, left_o, strict=False))
    pairs = []
    for i, tool in enumerate(expected):
        if i in taken:
            pairs.append((tool, taken[i], None))
        elif i in wrong:
            pairs.append((tool, wrong[i], "wrong_tool"))
        else:
            pairs.append((tool, None, "parallel_collapse"))
    for j in left_o[len(left_e) :]:
        pairs.append((None, j, None if observed[j] in expected else "wrong_tool"))
    return pairs


@given(NAMES.filter(bool), NAMES)
def test_ordered_pairing_follows_the_rule(expected: list[str], observed: list[str]) -> None:
    case = Case(id="c", calls=[ExpectedCall(tool=t) for t in expected])
    calls = [ToolCall(index=j, name=n) for j, n in enumerate(observed)]
    got = pair_calls(case, calls, ToolNames())
    assert [
        (e.tool if e else None, o.index if o else None, label) for e, o, label in got
    ] == reference_ordered(expected, observed)


def test_unordered_calls_to_one_tool_pair_by_their_arguments() -> None:
    case = Case(
        id="c",
        order="unordered",
        calls=[
            ExpectedCall(tool="w", args={"city": Matcher(value="Paris")}),
            ExpectedCall(tool="w", args={"city": Matcher(value="Oslo")}),
        ],
    )
    calls = [
        ToolCall(index=0, name="w", arguments={"city": "Oslo"}),
        ToolCall(index=1, name="w", arguments={"city": "Paris"}),
    ]
    got = pair_calls(case, calls, ToolNames())
    assert [(e.args["city"].value, o.arguments["city"], label) for e, o, label in got] == [
        ("Paris", "Paris", None),
        ("Oslo", "Oslo", None),
    ]


def test_a_name_not_offered_never_means_an_expected_tool() -> None:
    names = ToolNames(offered=frozenset({"get"}))
    assert names.same("get", "get")
    assert not names.same("mcp__x__get", "get")  # not offered
    assert ToolNames().same("mcp__x__get", "get")  # Claude Code's marker, offers unknown
