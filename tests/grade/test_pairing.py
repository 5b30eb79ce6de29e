"""Selection pairing: the ordered walk (with its shortcut for calls already in place) and
the unordered pairing by tool, then by best argument match."""

from __future__ import annotations

import gc

from hypothesis import given, settings
from hypothesis import strategies as st

from toolproxy.grade.model import Case, ExpectedCall, Matcher
from toolproxy.grade.pairing import ToolNames, pair_calls
from toolproxy.grade.parsestage import views
from toolproxy.records import ToolCall
from toolproxy.util import compiled

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
    calls = views([ToolCall(index=j, name=n) for j, n in enumerate(observed)])
    got = pair_calls(case, calls, ToolNames())
    assert [
        (e.tool if e else None, o.call.index if o else None, label) for e, o, label in got
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
    calls = views(
        [
            ToolCall(index=0, name="w", arguments={"city": "Oslo"}),
            ToolCall(index=1, name="w", arguments={"city": "Paris"}),
        ]
    )
    got = pair_calls(case, calls, ToolNames())
    assert [(e.args["city"].value, o.arguments["city"], label) for e, o, label in got] == [
        ("Paris", "Paris", None),
        ("Oslo", "Oslo", None),
    ]


def _one_tool(expected: list[dict]) -> Case:
    """An unordered case of calls to tool `w`, each argument expected exactly."""
    calls = [
        ExpectedCall(tool="w", args={k: Matcher(value=v) for k, v in args.items()})
        for args in expected
    ]
    return Case(id="c", order="unordered", calls=calls)


def _unordered(expected: list[dict], observed: list[dict]) -> list[tuple]:
    """(expected index, observed index, label) of each pair, all calls to one tool."""
    case = _one_tool(expected)
    calls = views([ToolCall(index=j, name="w", arguments=a) for j, a in enumerate(observed)])
    index = {id(e): i for i, e in enumerate(case.calls)}
    return [
        (index[id(e)], o.call.index, label) for e, o, label in pair_calls(case, calls, ToolNames())
    ]


def test_parallel_calls_made_right_and_in_order_pair_in_order() -> None:
    calls = [{"city": "Paris", "days": 2}, {"city": "Oslo", "days": 2}, {"city": "Rome", "days": 1}]
    assert _unordered(calls, calls) == [(0, 0, None), (1, 1, None), (2, 2, None)]
    assert _unordered(calls, calls[::-1]) == [(0, 2, None), (1, 1, None), (2, 0, None)]


def test_calls_in_place_still_pair_by_score_when_expectations_differ_in_size() -> None:
    # each call gets its own expectation's arguments right (the second has one of two), but
    # the first call has both of the second expectation's: it scores higher and pairs first
    observed = [{"a": 1, "b": 2}, {"a": 1}]
    assert _unordered([{"a": 1}, {"a": 1, "b": 2}], observed) == [(0, 1, None), (1, 0, None)]


def test_a_name_not_offered_never_means_an_expected_tool() -> None:
    names = ToolNames(offered=frozenset({"get"}))
    assert names.same("get", "get")
    assert not names.same("mcp__x__get", "get")  # not offered
    assert ToolNames().same("mcp__x__get", "get")  # Claude Code's marker, offers unknown


def test_tool_names_made_where_dropped_ones_were_start_with_their_defaults() -> None:
    # compiled: one per case, kept out of the cycle collector and made from the last
    # dropped one (`mypyc_attr`)
    for _ in range(3):
        del_me = ToolNames(offered=frozenset({"get"}), servers=("x",))
        del del_me
        names = ToolNames()
        assert (names.offered, names.servers) == (frozenset(), ())
        assert names.same("mcp__x__get", "get")
        assert gc.is_tracked(names) is not compiled.in_use()


def reference_unordered(case: Case, calls: list, names: ToolNames) -> list[tuple]:
    """The unordered rule as the docs state it, written plainly: candidates by tool; where a
    call could answer two expectations (or an expectation two calls), the best argument
    score first, ties in expected then observed order; then pair_calls' leftovers."""
    expected = case.calls
    candidates = [
        (i, j)
        for i, e in enumerate(expected)
        for j, o in enumerate(calls)
        if names.same(o.name, e.tool)
    ]
    rows, columns = {i for i, _ in candidates}, {j for _, j in candidates}
    scored = []
    for i, j in candidates:
        score = 0
        if len(rows) < len(candidates) or len(columns) < len(candidates):
            args = calls[j].arguments if isinstance(calls[j].arguments, dict) else {}
            for k, m in expected[i].args.items():
                if k in args:
                    score += 2 if args[k] == m.value else 1
        scored.append((-score, i, j))
    taken: dict[int, int] = {}
    for _, i, j in sorted(scored):
        if i not in taken and j not in taken.values():
            taken[i] = j
    left_e = [i for i in range(len(expected)) if i not in taken]
    left_o = [j for j in range(len(calls)) if j not in taken.values()]
    pairs = []
    for i in range(len(expected)):
        if i in taken:
            pairs.append((i, taken[i], None))
        elif left_e.index(i) < len(left_o):
            pairs.append((i, left_o[left_e.index(i)], "wrong_tool"))
        else:
            pairs.append((i, None, "parallel_collapse"))
    for j in left_o[len(left_e) :]:
        known = any(names.same(calls[j].name, e.tool) for e in expected)
        pairs.append((None, j, None if known else "wrong_tool"))
    return pairs


def _tool_calls(expected: list, observed: list) -> tuple[Case, list]:
    """An unordered case of (tool, args) expectations, and the (tool, args) calls made (args
    None: a call whose arguments do not parse)."""
    case = Case(
        id="c",
        order="unordered",
        calls=[
            ExpectedCall(tool=t, args={k: Matcher(value=v) for k, v in args.items()})
            for t, args in expected
        ],
    )
    calls = views(
        [
            ToolCall(index=j, name=n, arguments=a, arguments_raw="{" if a is None else "")
            for j, (n, a) in enumerate(observed)
        ]
    )
    return case, calls


TOOLS = st.sampled_from(["a", "b", "s_a", "mcp__s__a"])  # s_a and mcp__s__a mean a
ARGS = st.dictionaries(st.sampled_from(["x", "y"]), st.integers(0, 2), max_size=2)


@settings(max_examples=500)
@given(
    st.lists(st.tuples(TOOLS, ARGS), min_size=1, max_size=4),
    st.lists(st.tuples(TOOLS, ARGS | st.none()), max_size=5),
)
def test_unordered_pairing_follows_the_rule(expected: list, observed: list) -> None:
    case, calls = _tool_calls(expected, observed)
    names = ToolNames(servers=("s",))
    got = pair_calls(case, calls, names)
    index = {id(e): i for i, e in enumerate(case.calls)}
    assert [
        (index[id(e)] if e else None, o.call.index if o else None, label) for e, o, label in got
    ] == reference_unordered(case, calls, names)


@settings(max_examples=300)
@given(
    st.lists(ARGS, min_size=2, max_size=4),
    st.lists(ARGS | st.none(), min_size=1, max_size=5),
)
def test_a_call_is_proven_only_when_every_expected_argument_matched(
    expected: list, observed: list
) -> None:
    # calls to one tool: pairing scores them, and marks a pair whose score was full
    case = _one_tool(expected)
    calls = views(
        [
            ToolCall(index=j, name="w", arguments=a, arguments_raw="{" if a is None else "")
            for j, a in enumerate(observed)
        ]
    )
    pairs = pair_calls(case, calls, ToolNames())
    for e, o, _ in pairs:
        if o is None or o.proven is None:
            continue
        assert o.proven is e  # marked for the expectation it was paired with
        assert isinstance(o.arguments, dict)
        assert all(k in o.arguments and o.arguments[k] == m.value for k, m in e.args.items())
    paired = [o for e, o, _ in pairs if e is not None and o is not None]
    assert len({id(o) for o in paired}) == len(paired)
    assert all(o.proven is None for o in calls if o not in paired)


def test_parallel_calls_right_in_and_out_of_order_are_proven() -> None:
    expected = [{"city": "Paris", "days": 2}, {"city": "Oslo", "days": 2}]
    case = _one_tool(expected)
    for observed in (expected, expected[::-1], [expected[0], {"city": "Rome", "days": 2}]):
        calls = views([ToolCall(index=j, name="w", arguments=a) for j, a in enumerate(observed)])
        pair_calls(case, calls, ToolNames())
        proven = [o.proven.args["city"].value if o.proven else None for o in calls]
        assert proven == [a["city"] if a in expected else None for a in observed]


@settings(max_examples=300)
@given(
    st.lists(st.tuples(TOOLS, ARGS), min_size=1, max_size=4),
    st.lists(st.tuples(TOOLS, ARGS | st.none()), max_size=5),
)
def test_a_call_to_any_tool_is_proven_only_for_its_pair(expected: list, observed: list) -> None:
    """Calls in place, out of place, to one tool or several: a proven call is proven for
    the expectation it was paired with, and matches every argument that names."""
    case, calls = _tool_calls(expected, observed)
    pairs = pair_calls(case, calls, ToolNames(servers=("s",)))
    partner = {id(o): e for e, o, _ in pairs if o is not None}
    for o in calls:
        if o.proven is not None:
            assert o.proven is partner[id(o)]
            assert isinstance(o.arguments, dict)
            assert all(o.arguments.get(k) == m.value for k, m in o.proven.args.items())


def test_calls_to_different_tools_right_and_in_place_are_proven() -> None:
    case = Case(
        id="c",
        order="unordered",
        calls=[
            ExpectedCall(tool="weather", args={"city": Matcher(value="Oslo")}),
            ExpectedCall(tool="time", args={"zone": Matcher(value="CET")}),
        ],
    )
    right = [("weather", {"city": "Oslo"}), ("time", {"zone": "CET"})]
    for observed, proven in ((right, [0, 1]), ([right[0], ("time", {"zone": "UTC"})], [])):
        calls = views([ToolCall(index=j, name=n, arguments=a) for j, (n, a) in enumerate(observed)])
        pairs = pair_calls(case, calls, ToolNames())
        assert [(e.tool, o.name) for e, o, _ in pairs] == [("weather", "weather"), ("time", "time")]
        assert [j for j, o in enumerate(calls) if o.proven is case.calls[j]] == proven
