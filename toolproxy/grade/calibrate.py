"""How far to trust the judge: its scores against human labels on the same fields. Pure.

A calibration set (YAML with `items:`, or JSON lines, one item each) lists fields people
scored::

    items:
      - id: refund-1                    # optional (default: the item's position)
        criterion: "a polite refusal that offers a refund"
        value: "No."
        human: 0                        # 1 / 0.5 / 0, or pass / partial / fail, or true / false

`toolproxy judge calibrate SET` asks the judge each item (the same prompt and cache as
grading) and `calibrate` compares:

* agreement: the share of items where judge and human agree on pass/fail, a score passing
  at `pass_at` (1 unless told 0.5), with Cohen's kappa (agreement beyond chance:
  (po - pe) / (1 - pe), pe from each rater's own pass rate; 1 perfect, 0 chance);
* score agreement: the share with the very same score, with a linearly weighted kappa over
  the three scores (a 0.5 against a 1 is half a disagreement);
* the human x judge confusion of scores, and every disagreement with the judge's reason.
An item the judge could not score (an endpoint error, an unreadable reply) is listed apart
and left out of the numbers.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import yaml
from pydantic import BaseModel, Field

from toolproxy.errors import UserError
from toolproxy.grade.model import JUDGE_SCORES

_WORDS = {"pass": 1.0, "partial": 0.5, "fail": 0.0, True: 1.0, False: 0.0}


class CalibrationError(UserError):
    """A calibration set that cannot be used as written (exit 2)."""


class Item(BaseModel):
    """One human-scored field."""

    id: str
    criterion: str
    value: Any = None
    human: float


class Judged(BaseModel):
    """An item with the judge's answer: a score and reason, or why it has none."""

    item: Item
    score: float | None = None
    reason: str = ""
    error: str | None = None


class Disagreement(BaseModel):
    id: str
    criterion: str
    value: Any = None
    human: float
    judge: float
    reason: str


class Calibration(BaseModel):
    """The judge against the humans (module docstring)."""

    items: int
    scored: int = Field(description="items the judge scored")
    pass_at: float
    agreement: float | None = Field(description="pass/fail agreement, 0..1")
    kappa: float | None = Field(description="Cohen's kappa on pass/fail")
    score_agreement: float | None = Field(description="same score, 0..1")
    score_kappa: float | None = Field(description="linearly weighted kappa on the scores")
    confusion: dict[str, dict[str, int]] = Field(description="human score -> judge score -> n")
    disagreements: list[Disagreement] = Field(description="pass/fail or score differs")
    failed: dict[str, str] = Field(default_factory=dict, description="id -> why not scored")


def human_score(value: Any) -> float | None:
    """A human label as a score (1 / 0.5 / 0), or None when it is none of the forms."""
    if isinstance(value, str):
        return _WORDS.get(value.strip().lower())
    if isinstance(value, bool):
        return _WORDS[value]
    if isinstance(value, (int, float)) and float(value) in JUDGE_SCORES:
        return float(value)
    return None


def load_set(text: str, name: str) -> list[Item]:
    """The items of a calibration set's text (YAML `items:` or JSON lines)."""
    raw: list[tuple[str, Any]] = []
    if name.endswith(".jsonl"):
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    raw.append((f"{name}:{n}", json.loads(line)))
                except ValueError as e:
                    raise CalibrationError(f"{name}:{n}: not JSON: {e}") from None
    else:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise CalibrationError(f"{name}: not YAML: {e}".splitlines()[0]) from None
        if not isinstance(data, dict) or not isinstance(data.get("items"), list):
            raise CalibrationError(f"{name}: expected a mapping with an `items:` list")
        raw = [(f"{name}: items[{i}]", it) for i, it in enumerate(data["items"])]
    items, seen = [], set()
    for i, (where, it) in enumerate(raw):
        if not isinstance(it, dict):
            raise CalibrationError(f"{where}: an item is a mapping")
        unknown = set(it) - {"id", "criterion", "value", "human", "note"}
        if unknown:
            raise CalibrationError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        if not isinstance(it.get("criterion"), str) or not it["criterion"].strip():
            raise CalibrationError(f"{where}: criterion: a non-empty string is required")
        score = human_score(it.get("human"))
        if score is None:
            raise CalibrationError(
                f"{where}: human: {it.get('human')!r} is not 1, 0.5, 0, pass, partial or fail"
            )
        iid = str(it.get("id", i))
        if iid in seen:
            raise CalibrationError(f"{where}: id {iid!r} is used twice")
        seen.add(iid)
        items.append(Item(id=iid, criterion=it["criterion"], value=it.get("value"), human=score))
    if not items:
        raise CalibrationError(f"{name}: no items")
    return items


def cohen_kappa(
    pairs: Sequence[tuple[Any, Any]], weight: Any = None, categories: Sequence[Any] = ()
) -> float | None:
    """Cohen's kappa of two raters' (a, b) labels; `weight(a, b)` in [0, 1] is the credit a
    pair gets (default: 1 when equal); None when chance agreement is total (undefined)."""
    if not pairs:
        return None
    w = weight or (lambda a, b: 1.0 if a == b else 0.0)
    n = len(pairs)
    cats = list(dict.fromkeys([*categories, *(a for a, _ in pairs), *(b for _, b in pairs)]))
    pa, pb = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    po = sum(w(a, b) for a, b in pairs) / n
    pe = sum(pa[x] * pb[y] * w(x, y) for x in cats for y in cats) / (n * n)
    if pe >= 1.0:
        return None
    return (po - pe) / (1 - pe)


def _linear(a: float, b: float) -> float:
    return 1.0 - abs(a - b)  # scores are 0, 0.5, 1: a half-step earns half credit


def calibrate(judged: Sequence[Judged], pass_at: float = 1.0) -> Calibration:
    """Agreement, kappas, confusion and disagreements of the judge vs the humans."""
    scored = [j for j in judged if j.score is not None]
    verdicts = [(j.item.human >= pass_at, (j.score or 0.0) >= pass_at) for j in scored]
    scores = [(j.item.human, j.score or 0.0) for j in scored]
    confusion: dict[str, dict[str, int]] = {f"{h:g}": {} for h in JUDGE_SCORES}
    for h, s in scores:
        row = confusion[f"{h:g}"]
        row[f"{s:g}"] = row.get(f"{s:g}", 0) + 1
    n = len(scored)
    return Calibration(
        items=len(judged),
        scored=n,
        pass_at=pass_at,
        agreement=sum(a == b for a, b in verdicts) / n if n else None,
        kappa=cohen_kappa(verdicts, categories=(True, False)),
        score_agreement=sum(a == b for a, b in scores) / n if n else None,
        score_kappa=cohen_kappa(scores, _linear, JUDGE_SCORES),
        confusion=confusion,
        disagreements=[
            Disagreement(
                id=j.item.id,
                criterion=j.item.criterion,
                value=j.item.value,
                human=j.item.human,
                judge=j.score or 0.0,
                reason=j.reason,
            )  # fmt: skip
            for j in scored
            if j.score != j.item.human
        ],
        failed={j.item.id: j.error or "no score" for j in judged if j.score is None},
    )
