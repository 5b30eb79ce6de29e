"""Pass rates per task family: the cases of a run grouped by their tags (pure).

A conformance suite tags each task with its family (`nested_objects`, `unions`, …), so a
run's pass rate per tag is the suite's matrix of candidates × families; any tagged cases
of a user's own get the same table. A case with several tags counts in each; untagged cases
are left out. Rates are over graded cases (None when none is graded), as `pass_rate` is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, Field

from toolproxy.grade.metrics import CaseRecord, ratio


class FamilyScore(BaseModel):
    """One tag's cases in one run."""

    cases: int = Field(description="cases with the tag (repeats count each)")
    graded: int = Field(description="of those, graded")
    passed: int = Field(description="of those, passed")
    pass_rate: float | None = Field(description="passed / graded; None when none is graded")
    labels: dict[str, int] = Field(description="failing cases per label, most frequent first")


def family_scores(records: Sequence[CaseRecord]) -> dict[str, FamilyScore]:
    """Each tag's score over `records`, tags in alphabetical order."""
    groups: dict[str, list[CaseRecord]] = {}
    for record in records:
        for tag in dict.fromkeys(record.tags):
            groups.setdefault(tag, []).append(record)
    out = {}
    for tag in sorted(groups):
        grades = [r.grade for r in groups[tag]]
        graded = [g for g in grades if not g.not_graded]
        passed = sum(g.passed for g in graded)
        labels = Counter(g.label for g in grades if not g.passed and g.label)
        out[tag] = FamilyScore(
            cases=len(grades),
            graded=len(graded),
            passed=passed,
            pass_rate=ratio(passed, len(graded)),
            labels=dict(labels.most_common()),
        )
    return out


def matrix_rows(scores: dict[str, dict[str, FamilyScore]], runs: Sequence[str]) -> list[list[str]]:
    """One row per tag, one cell per run: `passed/graded (rate)`, the run's most frequent
    failure label after it; `-` where the run has no case with the tag."""
    tags = sorted({t for per_run in scores.values() for t in per_run})
    rows = []
    for tag in tags:
        row = [tag]
        for run in runs:
            s = scores.get(run, {}).get(tag)
            if s is None:
                row.append("-")
                continue
            rate = "n/a" if s.pass_rate is None else f"{s.pass_rate:.0%}"
            worst = next(iter(s.labels), None)
            row.append(f"{s.passed}/{s.graded} ({rate})" + (f" {worst}" if worst else ""))
        rows.append(row)
    return rows
