"""Selection: which observed call answers which expected one (the checker's first stage).

`pair_calls` pairs a case's expected calls with the observed ones and gives each pair its
selection label (None, `wrong_tool` or `parallel_collapse`; an observed call left over is
an extra call, `wrong_tool` when no expected call names its tool). `ordered` cases walk the
expectation in order, taking each tool's next call; `unordered` ones pair by tool, then,
where a call could answer more than one expectation, by the best argument match. Names are
compared by `ToolNames` (`toolnames.same_tool`, offered names only). A call paired by an
argument score that found every expected argument matching is marked `proven` with its
expected call, so the semantic stage does not match those arguments again. Pure.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from mypy_extensions import mypyc_attr

from toolproxy.grade.labels import Label
from toolproxy.grade.matchers import matches
from toolproxy.grade.model import Case, ExpectedCall
from toolproxy.grade.parsestage import Call, call_arguments
from toolproxy.util.absent import ABSENT
from toolproxy.wire.toolnames import same_tool


@mypyc_attr(acyclic=True, free_list_len=1)
class ToolNames:
    """How one case compares called names with expected ones: a name that was not offered
    (when the offered tools are known) never means an expected tool, and a server prefix
    counts only for a real MCP server (`toolnames`). One per case: compiled, acyclic and
    remade from the last dropped one, as `grade.grades`' records."""

    __slots__ = ("offered", "servers")

    def __init__(self, offered: Collection[str] = frozenset(), servers: tuple[str, ...] = ()):
        self.offered = offered  # names offered to the model (empty: not known)
        self.servers = servers  # real MCP server names

    def same(self, observed: str | None, expected: str) -> bool:
        """Does the called name mean the expected tool?"""
        if not observed or (self.offered and observed not in self.offered):
            return False
        return observed == expected or same_tool(observed, expected, self.servers)


Pair = tuple[ExpectedCall | None, Call | None, Label | None]


def pair_calls(case: Case, observed: list[Call], names: ToolNames) -> list[Pair]:
    """Expected calls paired with observed ones, each pair with its selection label."""
    expected = case.calls
    if not expected:  # "some call" expected: every call passes selection
        return [(None, o, None) for o in observed]
    if len(expected) == 1 and len(observed) == 1 and names.same(observed[0].name, expected[0].tool):
        return [(expected[0], observed[0], None)]  # one call, where expected: either order's answer
    if case.order == "ordered":
        if _in_place(expected, observed, names):  # what the walk below would find
            return [(expected[i], observed[i], None) for i in range(len(expected))]
        taken: dict[int, int] = {}
        start = 0
        for i, e in enumerate(expected):
            j = next(
                (j for j in range(start, len(observed)) if names.same(observed[j].name, e.tool)),
                None,
            )
            if j is not None:
                taken[i], start = j, j + 1
    else:
        taken = _pair_unordered(expected, observed, names)
    if len(taken) == len(expected) == len(observed):  # each call paired: nothing left over
        return [(e, observed[taken[i]], None) for i, e in enumerate(expected)]
    used = set(taken.values())
    left_e = [i for i in range(len(expected)) if i not in taken]
    left_o = [j for j in range(len(observed)) if j not in used]
    wrong = {left_e[k]: left_o[k] for k in range(min(len(left_e), len(left_o)))}
    pairs: list[Pair] = []
    for i, e in enumerate(expected):
        if i in taken:
            pairs.append((e, observed[taken[i]], None))
        elif i in wrong:
            pairs.append((e, observed[wrong[i]], "wrong_tool"))
        else:
            pairs.append((e, None, "parallel_collapse"))
    for j in left_o[len(left_e) :]:
        known = any(names.same(observed[j].name, e.tool) for e in expected)
        pairs.append((None, observed[j], None if known else "wrong_tool"))
    return pairs


def _in_place(expected: list[ExpectedCall], observed: list[Call], names: ToolNames) -> bool:
    """Is every call where it was expected (the ordered walk's answer when it is)?"""
    if len(expected) != len(observed):
        return False
    for i in range(len(expected)):
        if not names.same(observed[i].name, expected[i].tool):
            return False
    return True


def _pair_unordered(
    expected: list[ExpectedCall], observed: list[Call], names: ToolNames
) -> dict[int, int]:
    """Each expected call's observed one: by tool, and where a call could answer more than
    one expectation, the best argument scores first (ties: expected, then observed order)."""
    # every call where it was expected: each a candidate for its own expectation, so
    # `_in_order` is the diagonal's scores alone (and with no other candidate, the pairing
    # below takes the diagonal too), asked before any candidate is listed
    in_place = len(expected) == len(observed) and _in_place(expected, observed, names)
    if in_place:
        reads = [call_arguments(o, incomplete=False)[0] for o in observed]
        if _full_diagonal(expected, reads):
            return _proven_diagonal(expected, observed, reads)
    called = [o.name for o in observed]
    by_tool: dict[str, list[int]] = {}  # expected tool -> the calls that name it
    rows: list[list[int]] = []
    columns: set[int] = set()
    ambiguous = False  # does a call answer two expectations, or an expectation two calls?
    for e in expected:
        js = by_tool.get(e.tool)
        if js is None:
            js = by_tool[e.tool] = [j for j, name in enumerate(called) if names.same(name, e.tool)]
            for j in js:  # another tool's name may mean the same calls (`same_tool`)
                ambiguous = ambiguous or j in columns
                columns.add(j)
        else:
            ambiguous = ambiguous or bool(js)
        ambiguous = ambiguous or len(js) > 1
        rows.append(js)
    taken: dict[int, int] = {}
    used: set[int] = set()
    if not ambiguous:  # each call answers at most one expectation and each expectation one call
        for i, js in enumerate(rows):
            for j in js:
                if j not in used:
                    taken[i] = j
                    used.add(j)
                    break
        return taken
    reads = [call_arguments(o, incomplete=False)[0] for o in observed]  # once a call
    if not in_place and _in_order(expected, rows, reads):  # (in place: answered above)
        return _proven_diagonal(expected, observed, reads)
    # argument scores, best first: one int a candidate, (best - score, i, j) in that order
    n_e, n_o = len(expected), len(observed)
    best = 2 * max(len(e.args) for e in expected)
    keys = []
    for i, js in enumerate(rows):
        e = expected[i]
        for j in js:
            keys.append(((best - _score(e, reads[j])) * n_e + i) * n_o + j)
    keys.sort()
    for key in keys:
        i, j = key // n_o % n_e, key % n_o
        if i not in taken and j not in used:
            taken[i] = j
            used.add(j)
            if best - key // (n_o * n_e) == 2 * len(expected[i].args):  # a full score
                _prove(expected[i], observed[j], reads[j])
    return taken


def _prove(e: ExpectedCall, o: Call, args: Any) -> None:
    """Mark `o` as proven for `e`: its arguments parsed and every one `e` names matched."""
    if isinstance(args, dict):
        o.proven = e


def _in_order(expected: list[ExpectedCall], rows: list[list[int]], reads: list[Any]) -> bool:
    """Is each expected call's own call (the same position) a candidate matching every
    argument, all expectations naming as many arguments? Then the scored pairing takes
    exactly those pairs: every row's diagonal is in the best score's tier, which is taken
    row by row, and a row's earlier candidates were taken by the rows before it. Parallel
    calls made right and in order are paired without scoring every other pair."""
    if len(reads) < len(expected):
        return False
    for i in range(len(expected)):
        if i not in rows[i]:
            return False
    return _full_diagonal(expected, reads)


def _full_diagonal(expected: list[ExpectedCall], reads: list[Any]) -> bool:
    """Does each expected call's own call (the same position) match every argument, all
    expectations naming as many arguments?"""
    size = len(expected[0].args)
    for i in range(len(expected)):
        e = expected[i]
        if len(e.args) != size or _score(e, reads[i]) != 2 * size:
            return False
    return True


def _proven_diagonal(
    expected: list[ExpectedCall], observed: list[Call], reads: list[Any]
) -> dict[int, int]:
    """Each expected call paired with the call at its own position, every one proven."""
    for i in range(len(expected)):
        _prove(expected[i], observed[i], reads[i])  # `_full_diagonal` scored it full
    return {i: i for i in range(len(expected))}


def _score(e: ExpectedCall, args: dict[str, Any] | None) -> int:
    if not isinstance(args, dict):
        return 0
    score = 0
    for k, m in e.args.items():
        value = args.get(k, ABSENT)
        if value is not ABSENT:
            score += 2 if matches(m, value) else 1
    return score
