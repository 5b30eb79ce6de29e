"""A confusion matrix small enough to show. Pure.

`metrics.RunMetrics.confusion` is sparse (expected -> called -> count) and stays whole in
`--json`; the tables, the HTML chart and the TUI show it dense, expected tools down and
called tools across, which is quadratic in the tools: a run whose every call had a tool of
its own (100,000 tools) made a 100,000 x 100,000 table, and `report` ran out of memory. Beyond
`KEEP` tools, `fold_confusion` names the `KEEP` tools most often confused (then most often
expected or called) and adds the other tools' counts up under one `(other N tools)` row
and column; `(none)` is always its own. Every count stays in some cell.
"""

from __future__ import annotations

import heapq
from collections import Counter

from toolproxy.grade.metrics import NONE

KEEP = 30  # tools named on each side of a shown confusion matrix


def others_label(n: int) -> str:
    """The row and column that hold the tools not named."""
    return f"(other {n:,} tools)"


def is_others(name: str) -> bool:
    """Is this row or column the folded tools' (no cases of one tool behind it)?"""
    return name.startswith("(other ") and name.endswith(" tools)")


def fold_confusion(
    confusion: dict[str, dict[str, int]], keep: int = KEEP
) -> dict[str, dict[str, int]]:
    """`confusion` with at most `keep` tools named; the others' counts added up."""
    tools = (set(confusion) | {t for row in confusion.values() for t in row}) - {NONE}
    if len(tools) <= keep:
        return confusion
    confused: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    for expected, row in confusion.items():
        for called, n in row.items():
            calls[expected] += n
            calls[called] += n
            if expected != called:
                confused[expected] += n
                confused[called] += n
    ranked = heapq.nsmallest(keep, tools, key=lambda t: (-confused[t], -calls[t], t))
    kept = set(ranked) | {NONE}
    other = others_label(len(tools) - keep)
    folded: dict[str, dict[str, int]] = {}
    for expected, row in confusion.items():
        cells = folded.setdefault(expected if expected in kept else other, {})
        for called, n in row.items():
            key = called if called in kept else other
            cells[key] = cells.get(key, 0) + n
    return folded


def shown_confusion(
    confusion: dict[str, dict[str, int]],
) -> tuple[list[str], list[str], list[list[int]]]:
    """(expected tools, called tools, counts by row) of the matrix the report's table and
    the HTML chart show: folded, tools sorted, `(none)` last on both sides."""
    conf = fold_confusion(confusion)
    expected = [*sorted(set(conf) - {NONE}), NONE]
    called = [*sorted({t for row in conf.values() for t in row} - {NONE}), NONE]
    return expected, called, [[conf.get(e, {}).get(c, 0) for c in called] for e in expected]
