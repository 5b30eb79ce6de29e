"""Two reviewers' labels of the same turns, compared and merged (pure).

Each reviewer labels into a file of their own; `adjudicate` pairs the two files' cases by
id and lists every disagreement, field by field, in the file form (`case_to_dict`): the
expectation, its calls, their matchers, order, extra calls, tags (notes are free text and
provenance says who labeled, so neither ever disagrees). A case only one reviewer labeled
is a disagreement too. A resolutions file (cases written as they should be) settles the
disagreements it names; once none is left,
the merged cases are the agreed ones (in the first file's order, then the second's) with
each resolution in its case's place. A merged case's provenance names both reviewers
(`by: alice + bob`, `via: adjudicated`, `at`: when merged) and keeps the recorded turn's
ids; a resolution's own provenance, if it has one, is kept as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolproxy.grade.expectations import case_to_dict
from toolproxy.grade.model import Case, Provenance

ABSENT = "(absent)"


@dataclass(frozen=True)
class Disagreement:
    """Where two reviewers' versions of one case differ."""

    case_id: str
    where: str  # a field path inside the case, or "(the case)" for one only a reviewer has
    a: Any  # the first reviewer's value (ABSENT: none)
    b: Any


@dataclass
class Adjudication:
    """The merged cases (complete only when nothing is `open`), and what is still open."""

    merged: list[Case]
    open: list[Disagreement]
    agreed: int
    resolved: int


def adjudicate(
    a: Sequence[Case], b: Sequence[Case], resolutions: Sequence[Case] = (), at: str | None = None
) -> Adjudication:
    """Compare `a` and `b` case by case; `resolutions` settle the cases they hold; merged
    cases are stamped `at` (module docstring)."""
    by_a, by_b = {c.id: c for c in a}, {c.id: c for c in b}
    fixed = {c.id: c for c in resolutions}
    order = list(by_a) + [i for i in by_b if i not in by_a]
    merged: list[Case] = []
    still: list[Disagreement] = []
    agreed = resolved = 0
    for case_id in order:
        found = differences(case_id, by_a.get(case_id), by_b.get(case_id))
        both = (by_a.get(case_id), by_b.get(case_id))
        if case_id in fixed:
            merged.append(_merged(fixed[case_id], *both, at))
            resolved += bool(found)
            agreed += not found
        elif found:
            still.extend(found)
        else:
            merged.append(_merged(by_a[case_id], *both, at))
            agreed += 1
    return Adjudication(merged, still, agreed, resolved)


def differences(case_id: str, a: Case | None, b: Case | None) -> list[Disagreement]:
    """Every field where the two versions differ (notes aside)."""
    if a is None or b is None:
        return [Disagreement(case_id, "(the case)", _form(a), _form(b))]
    out: list[Disagreement] = []
    _walk(case_id, "", _form(a), _form(b), out)
    return out


def _merged(case: Case, a: Case | None, b: Case | None, at: str | None) -> Case:
    """`case` with the provenance of an adjudicated case (its own, if it has one)."""
    if case.provenance is not None and case is not a:
        return case  # a resolution that says who wrote it
    provs = [c.provenance for c in (a, b) if c is not None and c.provenance is not None]
    names = [p.by for p in provs if p.by]
    first = provs[0] if provs else Provenance(exchange_id=case.exchange_id)
    prov = first.model_copy(
        update={"by": " + ".join(dict.fromkeys(names)) or None, "at": at, "via": "adjudicated"}
    )
    return case.model_copy(update={"provenance": prov})


def _form(case: Case | None) -> Any:
    if case is None:
        return ABSENT
    form = case_to_dict(case)
    form.pop("notes", None)
    form.pop("provenance", None)
    return form


def _walk(case_id: str, path: str, a: Any, b: Any, out: list[Disagreement]) -> None:
    if type(a) is dict and type(b) is dict:
        for key in list(a) + [k for k in b if k not in a]:
            sub = f"{path}.{key}" if path else str(key)
            _walk(case_id, sub, a.get(key, ABSENT), b.get(key, ABSENT), out)
    elif type(a) is list and type(b) is list and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _walk(case_id, f"{path}[{i}]", x, y, out)
    elif a != b or type(a) is not type(b):
        out.append(Disagreement(case_id, path, a, b))
