"""How a candidate's calls at a step differ from the recorded ones (replay's divergence).

`pair_calls` says whether the replayed calls are the recorded ones (same tools, arguments
equal by value, in any order); when they are not, `describe_divergence` says how, in one
line a cell keeps as its `divergence`. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from toolproxy.grade.equality import deep_equal
from toolproxy.grade.showing import show
from toolproxy.records import ToolCall

MAX_SHOWN_DIFFS: Final = 3  # argument differences named in one line; the rest counted


def pair_calls(recorded: Sequence[ToolCall], replayed: Sequence[ToolCall]) -> list[int] | None:
    """For each replayed call, the index of the recorded call it equals (same tool,
    arguments equal by value, any order); None unless every call has its counterpart."""
    if len(recorded) != len(replayed):
        return None
    free = list(range(len(recorded)))
    pairs = []
    for call in replayed:
        hit = next((i for i in free if same_call(recorded[i], call)), None)
        if hit is None:
            return None
        free.remove(hit)
        pairs.append(hit)
    return pairs


def same_call(a: ToolCall, b: ToolCall) -> bool:
    """Same tool name and arguments equal by value (`equality.deep_equal`); arguments that
    did not parse are compared as text."""
    if a.name != b.name:
        return False
    if a.arguments is None or b.arguments is None:
        return a.arguments is None and b.arguments is None and a.arguments_raw == b.arguments_raw
    return deep_equal(a.arguments, b.arguments)


def describe_divergence(
    recorded: Sequence[ToolCall], replayed: Sequence[ToolCall], text: str | None
) -> str:
    """One line saying how the replayed calls differ from the recorded ones."""
    rec_names = ", ".join(str(c.name) for c in recorded)
    if not replayed:
        said = "answered in text" if text else "answered nothing"
        return f"{said} instead of calling {rec_names}"
    rep_names = ", ".join(str(c.name) for c in replayed)
    if not recorded:
        return f"called {rep_names} instead of answering in text"
    if len(recorded) != len(replayed):
        return f"made {len(replayed)} calls ({rep_names}) instead of {len(recorded)} ({rec_names})"
    left_rec, left_rep = list(recorded), list(replayed)
    for call in replayed:
        hit = next((r for r in left_rec if same_call(r, call)), None)
        if hit is not None:
            left_rec.remove(hit)
            left_rep.remove(call)
    want = left_rec[0]
    got = next((c for c in left_rep if c.name == want.name), left_rep[0])
    prefix = f"call {list(replayed).index(got) + 1}: " if len(replayed) > 1 else ""
    if got.name != want.name:
        return f"{prefix}called {got.name} instead of {want.name}"
    return f"{prefix}arguments differ: {describe_arguments(got, want)}"


def describe_arguments(got: ToolCall, want: ToolCall) -> str:
    """Replayed vs recorded arguments, first differences by name: `city 'Lyon' vs 'Paris'`."""
    if got.arguments is None:
        return f"not valid JSON: {show(got.arguments_raw)}"
    a, b = got.arguments, want.arguments
    if not isinstance(a, dict) or not isinstance(b, dict):
        return f"{show(a)} vs {show(b)}"
    diffs = []
    for name in sorted(a.keys() | b.keys()):
        if name not in a:
            diffs.append(f"no {name} (recorded {show(b[name])})")
        elif name not in b:
            diffs.append(f"extra {name} {show(a[name])}")
        elif not deep_equal(a[name], b[name]):
            diffs.append(f"{name} {show(a[name])} vs {show(b[name])}")
    more = len(diffs) - MAX_SHOWN_DIFFS
    shown = "; ".join(diffs[:MAX_SHOWN_DIFFS])
    return f"{shown}; {more} more" if more > 0 else shown
