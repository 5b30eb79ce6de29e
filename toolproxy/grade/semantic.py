"""The semantic stage: each expected argument of a paired call through its matcher
(`grade.checker` runs it after the parse and schema stages; the labels it gives are in the
checker's docstring). Pure.
"""

from __future__ import annotations

import json
from typing import Any

from toolproxy.grade.grades import ArgGrade
from toolproxy.grade.labels import Label
from toolproxy.grade.literalhint import literal_hint
from toolproxy.grade.matchers import Judge, coercions, judge_match, match, matches
from toolproxy.grade.model import ExpectedCall, Matcher
from toolproxy.grade.parsestage import json_type
from toolproxy.grade.showing import show
from toolproxy.util.absent import ABSENT
from toolproxy.wire.common import parse_arguments


def match_args(
    e: ExpectedCall | None,
    args: dict[str, Any],
    judge: Judge | None,
    failed_before: bool,
    failed: list[tuple[Label, ArgGrade]],
) -> list[ArgGrade]:
    """The semantic stage's grade of each expected argument, in the expectation's order,
    then of each argument it does not name when it allows none; those that fail are also
    added to `failed`, with their label (`failed_before`: the schema stage failed)."""
    found: list[ArgGrade] = []
    if e is None:
        return found
    present = 0  # expected arguments the call gave: all of its arguments when it has no other
    for name, m in e.args.items():
        value = args.get(name, ABSENT)
        if value is ABSENT:
            if m.optional:
                found.append(ArgGrade(name=name, bucket="ok", detail="optional, absent"))
            else:
                hint = literal_hint(m.value) if m.kind == "exact" else None
                detail = "required, absent" if hint is None else f"required, absent ({hint})"
                grade = ArgGrade(name=name, bucket="missing", detail=detail)
                found.append(grade)
                failed.append(("missing_required", grade))
            continue
        present += 1
        label, grade = match_one(name, m, value, judge, failed_before)
        found.append(grade)
        if label is not None:
            failed.append((label, grade))
    if not e.allow_extra_args and present < len(args):
        _invented(e, args, found, failed)
    return found


def proven_args(
    e: ExpectedCall, args: dict[str, Any], failed: list[tuple[Label, ArgGrade]]
) -> list[ArgGrade]:
    """`match_args` for a call whose expected arguments pairing found all present and
    matching: `matches` is True only where `match_one` grades ok (never for a judge),
    and an ok grade carries no detail. Arguments the expectation does not name as there."""
    found = [ArgGrade(name, "ok") for name in e.args]
    if not e.allow_extra_args and len(e.args) < len(args):
        _invented(e, args, found, failed)
    return found


def _invented(
    e: ExpectedCall,
    args: dict[str, Any],
    found: list[ArgGrade],
    failed: list[tuple[Label, ArgGrade]],
) -> None:
    """Each argument the expectation does not name: hallucinated."""
    for name in args:
        if name not in e.args:
            grade = ArgGrade(name=name, bucket="hallucinated", detail="not in the expectation")
            found.append(grade)
            failed.append(("hallucinated_param", grade))


def match_one(
    name: str, m: Matcher, value: Any, judge: Judge | None, failed_before: bool
) -> tuple[Label | None, ArgGrade]:
    """One present argument through its matcher: its label (None: not failed) and grade
    (`failed_before`: the schema stage failed, so a judge is not asked)."""
    kind = m.kind
    if (kind == "exact" or kind == "any_of" or kind == "enum") and matches(m, value):
        return None, ArgGrade(name, "ok")  # the common case: `matches` says what `match` would
    if m.kind == "judge" and failed_before:
        why = "not judged: the call failed the schema stage"
        return None, ArgGrade(name=name, bucket="not_graded", detail=why)
    score = None
    if m.kind == "judge":
        ok, detail, score = judge_match(m, value, judge)
    else:
        ok, detail = match(m, value, judge)
    judged = m.kind == "judge" and ok is not None
    reason = detail if judged else None
    if ok is None:
        return None, ArgGrade(name=name, bucket="not_graded", detail=detail)
    if ok:
        return None, ArgGrade(
            name=name, bucket="ok", judged=judged, judge_reason=reason, judge_score=score
        )
    if m.kind != "judge" and any(match(m, c)[0] for c in coercions(value)):
        why = f"{show(value)} is right in another JSON type ({json_type(value)} given)"
        return "type_coercion", ArgGrade(name=name, bucket="malformed", detail=why)
    if m.kind in ("exact", "text", "any_of", "enum") and _misescaped(m, value):
        why = f"{show(value)} is the expected string with its backslashes misread"
        return "escaping_error", ArgGrade(name=name, bucket="malformed", detail=why)
    return "hallucinated_param", ArgGrade(
        name=name, bucket="hallucinated", detail=detail, judged=judged, judge_reason=reason,
        judge_score=score,
    )  # fmt: skip


def _misescaped(m: Matcher, value: Any) -> bool:
    """Is `value` an expected string whose escaping went wrong (under or over-escaped)?"""
    if not isinstance(value, str):
        return False
    if m.kind == "exact" or (m.kind == "text" and m.values is None):
        return _misescaped_as(m.value, value)
    for want in m.values or []:  # a loop, not a generator (compiled, one is an object)
        if _misescaped_as(want, value):
            return True
    return False


def _misescaped_as(want: Any, value: str) -> bool:
    """Is `value` the expected `want` with its escaping gone wrong?"""
    if not isinstance(want, str) or want == value:
        return False
    if "\\" not in want and "\\" not in value and '"' not in want:
        return False
    under, error = parse_arguments('"' + want.replace('"', '\\"') + '"')
    if error is None and under == value:
        return True
    return value == want.replace("\\", "\\\\") or value == _json_inner(want)


def _json_inner(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]
