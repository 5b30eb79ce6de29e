"""Why an expected mapping that failed may be a matcher written wrong: `literal_hint`.

In an expectation a mapping is a matcher only with a `match` key (or `optional` alone);
any other mapping is a literal value. `{regex: "^A"}`, `{mtach: regex, ...}`, `{optinal:
true}` and `{min: 0, max: 9}` are literals, so their cases can never pass; the failure's
detail says so and what to write instead. Pure, and only on the failure path.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, get_args

from toolproxy.grade.model import MatcherKind
from toolproxy.grade.showing import show
from toolproxy.util.words import counted

MARK: Final = "if a matcher was meant:"  # how a hint starts, in a failure's detail


def hinted(calls: Any) -> bool:
    """Does a graded case's `calls` (its CallGrades as stored, JSON) hold an argument whose
    detail carries a hint? (`grade` counts such failures and warns.)"""
    for call in calls if isinstance(calls, list) else ():
        for arg in call.get("args") or () if isinstance(call, dict) else ():
            detail = arg.get("detail") if isinstance(arg, dict) else None
            if isinstance(detail, str) and MARK in detail:
                return True
    return False


# What a matcher object holds but a tool's own arguments rarely do: its fields, and the
# names of the kinds that are not also everyday words (text, any, range, exact are).
_MATCHER_FIELDS: Final = frozenset(
    ("optional", "value", "values", "min", "max", "tolerance", "pattern", "ignore")
    + ("criterion", "pass_at", "fields", "items", "order", "allow_extra")
)
_KIND_NAMES: Final = frozenset(
    ("regex", "any_of", "enum", "tolerance", "datetime", "unordered", "judge")
)
_KIND_OF_FIELD: Final = {  # a field -> the kind it most likely belongs to
    "pattern": "regex",
    "min": "range",
    "max": "range",
    "tolerance": "tolerance",
    "values": "any_of",
    "ignore": "text",
    "criterion": "judge",
    "pass_at": "judge",
    "fields": "object",
    "items": "list",
    "order": "list",
}
_KINDS: Final = frozenset(get_args(MatcherKind))


def hinted_failures(rows: Iterable[Any]) -> int:
    """How many of a run's graded rows (`GradeRow`s) failed with a hint in an argument's
    detail: cases that may never pass as written."""
    return sum(r.label is not None and hinted(r.calls) for r in rows)


def hint_warning(failed: int, tui: str) -> str:
    """The warning `grade` and `replay` print for `failed` such cases; `tui`: the command
    that shows each argument's detail."""
    expect = "expects" if failed == 1 else "expect"
    return (
        f"warning: {counted(failed, 'failed case')} {expect} a mapping that looks like a "
        "matcher written wrong (without a `match` key a mapping is a literal value); each "
        f"argument's detail says what to write: {tui}"
    )


def literal_hint(literal: Any) -> str | None:
    """Why an expected mapping that failed may be a matcher written wrong, or None. Without
    a `match` key a mapping is a literal value, so a key that misspells `match` or names a
    matcher kind, or keys that are all a matcher's fields, make a case that cannot pass."""
    if not isinstance(literal, dict) or not literal or "match" in literal:
        return None  # a literal with `match` was written {match: exact, value: ...}
    keys = [k for k in literal if isinstance(k, str)]
    if len(keys) < len(literal):
        return None
    near = [(k, w) for k in keys for w in ("match", "optional") if _misspells(k, w)]
    kinds = [k for k in keys if k in _KIND_NAMES]
    if near and near[0][1] == "optional":
        why, write = f"{show(near[0][0])} is not `optional`", "{optional: true}"
    elif near or kinds or all(k in _MATCHER_FIELDS for k in keys):
        if near:
            why = f"{show(near[0][0])} is not `match`"
        elif kinds:
            why = f"{show(kinds[0])} is a matcher kind, not a key"
        else:
            why = "its keys are a matcher's fields"
        named = [v for v in literal.values() if isinstance(v, str) and v in _KINDS]
        guessed = [_KIND_OF_FIELD[k] for k in keys if k in _KIND_OF_FIELD]
        kind = next(iter(kinds + named + guessed), "KIND")
        write = f"{{match: {kind}, ...}}"
    else:
        return None
    return f"{MARK} without a `match` key a mapping is a literal value, and {why}; write {write}"


def _misspells(key: str, word: str) -> bool:
    """`key` is `word` in other case, or with two neighbours swapped (mtach) or a letter
    doubled or slipped in (mattch), or with up to two more letters (matches, matcher);
    for a long word also with one letter changed or dropped (optinal). Short words keep
    those: batch, patch and math are a tool's own words."""
    k = key.casefold()
    if key == word:
        return False
    if k.startswith(word):
        return len(k) <= len(word) + 2
    n = len(word)
    if len(k) == n:
        diffs = [i for i in range(n) if k[i] != word[i]]
        swapped = len(diffs) == 2 and diffs[1] == diffs[0] + 1 and sorted(k) == sorted(word)
        return swapped or (n >= 8 and len(diffs) == 1)
    if len(k) == n + 1:
        return any(k[:i] + k[i + 1 :] == word for i in range(n + 1))
    return n >= 8 and len(k) == n - 1 and any(word[:i] + word[i + 1 :] == k for i in range(n))
