"""Compare one argument value with a `Matcher`: the semantic stage's per-argument rule.

`match(matcher, value, judge)` returns (ok, detail): True, False, or None when the value
cannot be graded (a judge matcher with no judge, a judge that failed, an invalid regex).
Values are JSON values as parsed; nothing here raises on any value or matcher.

    exact      equal by value, deeply: 1 == 1.0, but True != 1; dict keys and list order count
    any_of     deeply equal to one of `values` (or of `value` when that is a list)
    enum       the same as any_of (kept apart for reports)
    range      a number (not a bool) within [min, max], inclusive; either bound optional
    tolerance  a number within `tolerance` (absolute, default 0) of `value`
    regex      a string fully matching `pattern`
    datetime   ISO-8601 timestamps that are the same instant (`Z` = `+00:00`); both sides
               must carry a timezone or neither does
    unordered  a list equal to `value` as a multiset (elements compared deeply; dicts ok)
    text       strings equal to `value` (or one of `values`) after what `ignore` names is
               ignored: case (casefold), whitespace (runs collapsed, ends stripped),
               punctuation (Unicode P* characters dropped); default: case and whitespace
    judge      `judge(criterion, value) -> (score, reason)` scores 1 / 0.5 / 0; it passes at
               `pass_at` (default 1, may be 0.5); no judge: None
    object     an object whose `fields` (key -> matcher) each match; an absent key only
               when its matcher is optional; other keys are fine unless allow_extra: false
    list       a list whose elements match `items` one to one, in order (default) or in
               any order (`order: unordered`, a matching found if there is one); more
               elements than items only with allow_extra: true
Matchers nest in object and list, at any depth; a failure names where, `stops[1].city`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from datetime import date, datetime
from functools import lru_cache
from typing import Any, Final

from toolproxy.grade.equality import deep_equal, is_number
from toolproxy.grade.literalhint import literal_hint
from toolproxy.grade.model import Matcher
from toolproxy.grade.showing import show

Judge = Callable[[str, Any], tuple[float, str]]  # (score 1 / 0.5 / 0, reason)
MatchResult = tuple[bool | None, str | None]


DEFAULT_IGNORE: Final = ("case", "whitespace")


def normalize_text(value: str, ignore: Sequence[str] = DEFAULT_IGNORE) -> str:
    """`value` with what `ignore` names taken out: case (casefolded), punctuation (Unicode
    category P* dropped: "D.C." is "DC"), whitespace (runs collapsed to one space, the ends
    stripped)."""
    if "case" in ignore:
        value = value.casefold()
    if "punctuation" in ignore:
        value = "".join(ch for ch in value if not unicodedata.category(ch).startswith("P"))
    if "whitespace" in ignore:
        value = " ".join(value.split())
    return value


def parse_instant(value: Any) -> datetime | None:
    """An ISO-8601 timestamp as a datetime (`Z` read as UTC), or None."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):  # YAML reads bare dates as date objects
        return datetime(value.year, value.month, value.day)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str] | str:
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        return f"invalid pattern {pattern!r}: {exc}"


def _choices(m: Matcher) -> list[Any]:
    if m.values is not None:
        return m.values
    return m.value if isinstance(m.value, list) else [m.value]


def _exact(m: Matcher, value: Any) -> MatchResult:
    if deep_equal(m.value, value):
        return True, None
    detail = f"expected {show(m.value)}, got {show(value)}"
    hint = literal_hint(m.value)
    return False, detail if hint is None else f"{detail} ({hint})"


def _any_of(m: Matcher, value: Any) -> MatchResult:
    choices = _choices(m)
    ok = any(deep_equal(c, value) for c in choices)
    return ok, None if ok else f"{show(value)} is none of {show(choices)}"


def _range(m: Matcher, value: Any) -> MatchResult:
    if not is_number(value):
        return False, f"expected a number, got {show(value)}"
    if m.min is not None and value < m.min:
        return False, f"{show(value)} < min {m.min}"
    if m.max is not None and value > m.max:
        return False, f"{show(value)} > max {m.max}"
    return True, None


def _tolerance(m: Matcher, value: Any) -> MatchResult:
    if not is_number(value) or not is_number(m.value):
        return False, f"expected a number near {show(m.value)}, got {show(value)}"
    allowed = m.tolerance or 0.0
    off = abs(value - m.value)
    ok = bool(off <= allowed)
    return ok, None if ok else f"{show(value)} is {off:g} from {m.value} (tolerance {allowed})"


def _regex(m: Matcher, value: Any) -> MatchResult:
    compiled = _compile(m.pattern or "")
    if isinstance(compiled, str):
        return None, compiled  # the expectation is broken, not the model
    if not isinstance(value, str):
        return False, f"expected a string matching {m.pattern!r}, got {show(value)}"
    ok = compiled.fullmatch(value) is not None
    return ok, None if ok else f"{show(value)} does not match {m.pattern!r}"


def _datetime(m: Matcher, value: Any) -> MatchResult:
    want, got = parse_instant(m.value), parse_instant(value)
    if want is None:
        return None, f"expectation {show(m.value)} is not an ISO-8601 timestamp"
    if got is None:
        return False, f"{show(value)} is not an ISO-8601 timestamp"
    if (want.tzinfo is None) != (got.tzinfo is None):
        return False, f"{show(value)} and {show(m.value)}: only one has a timezone"
    try:
        ok = want == got
    except (OverflowError, ValueError):  # an offset pushing the instant out of range
        return False, f"{show(value)} cannot be compared with {show(m.value)}"
    return ok, None if ok else f"{show(value)} is not the instant {show(m.value)}"


def _unordered(m: Matcher, value: Any) -> MatchResult:
    if not isinstance(value, list) or not isinstance(m.value, list):
        return False, f"expected a list like {show(m.value)}, got {show(value)}"
    rest = list(value)
    for want in m.value:
        hit = next((i for i, got in enumerate(rest) if deep_equal(want, got)), None)
        if hit is None:
            return False, f"{show(want)} is not in {show(value)} (or too few times)"
        del rest[hit]
    if rest:
        return False, f"unexpected elements {show(rest)}"
    return True, None


def _text(m: Matcher, value: Any) -> MatchResult:
    wanted = [w for w in (m.values if m.values is not None else [m.value]) if isinstance(w, str)]
    ignore = DEFAULT_IGNORE if m.ignore is None else m.ignore
    alternatives = " or ".join(show(w) for w in wanted) or show(m.value)
    ignoring = f" (ignoring {', '.join(ignore)})" if ignore else ""
    if not isinstance(value, str) or not wanted:
        return False, f"expected text like {alternatives}, got {show(value)}"
    got = normalize_text(value, ignore)
    ok = any(got == normalize_text(w, ignore) for w in wanted)
    return ok, None if ok else f"{show(value)} is not {alternatives}{ignoring}"


def judge_match(
    m: Matcher, value: Any, judge: Judge | None
) -> tuple[bool | None, str | None, float | None]:
    """A judge matcher's (ok, detail, score): ok when the score reaches `pass_at` (1)."""
    if judge is None:
        return None, "not graded: no judge configured", None
    try:
        score, reason = judge(m.criterion or "", value)
    except Exception as exc:  # noqa: BLE001 - a judge outage leaves the field ungraded
        return None, f"not graded: judge failed: {type(exc).__name__}: {exc}", None
    return float(score) >= (m.pass_at or 1.0), str(reason), float(score)


def _judge(m: Matcher, value: Any, judge: Judge | None) -> MatchResult:
    ok, detail, _ = judge_match(m, value, judge)
    return ok, detail


def _any(matcher: Matcher, value: Any) -> MatchResult:
    return True, None


_MATCHERS: Final[dict[str, Callable[[Matcher, Any], MatchResult]]] = {
    "exact": _exact,
    "any": _any,
    "any_of": _any_of,
    "enum": _any_of,
    "range": _range,
    "tolerance": _tolerance,
    "regex": _regex,
    "datetime": _datetime,
    "unordered": _unordered,
    "text": _text,
}


def match(matcher: Matcher, value: Any, judge: Judge | None = None) -> MatchResult:
    """Does `value` satisfy `matcher`? (ok, detail); ok None means not graded."""
    kind = matcher.kind
    if kind == "exact":  # the common kinds called directly (through the table, compiled
        return _exact(matcher, value)  # code calls them as Python and boxes the pair)
    if kind == "any_of" or kind == "enum":
        return _any_of(matcher, value)
    if kind == "judge":
        return _judge(matcher, value, judge)
    if kind == "object":
        return _object(matcher, value, judge)
    if kind == "list":
        return _list(matcher, value, judge)
    return _MATCHERS[kind](matcher, value)


def _worst(results: list[tuple[str, MatchResult]]) -> MatchResult:
    """Nested results as one: the first failure (with where), else not graded, else ok."""
    for where, (ok, detail) in results:
        if ok is False:
            return False, f"{where}: {detail}" if detail else where
    for where, (ok, detail) in results:
        if ok is None:
            return None, f"{where}: {detail}"
    return True, None


def _object(m: Matcher, value: Any, judge: Judge | None) -> MatchResult:
    if not isinstance(value, dict):
        return False, f"expected an object, got {show(value)}"
    fields = m.fields or {}
    results: list[tuple[str, MatchResult]] = []
    for key, sub in fields.items():
        if key in value:
            results.append((key, match(sub, value[key], judge)))
        elif not sub.optional:
            results.append((key, (False, "missing")))
    if m.allow_extra is False:
        extra = [k for k in value if k not in fields]
        if extra:
            results.append(
                (", ".join(map(str, extra)), (False, "not expected (allow_extra: false)"))
            )
    return _worst(results)


def _list(m: Matcher, value: Any, judge: Judge | None) -> MatchResult:
    if not isinstance(value, list):
        return False, f"expected a list, got {show(value)}"
    items = m.items or []
    if len(value) < len(items) or (len(value) > len(items) and not m.allow_extra):
        return False, f"expected {len(items)} elements, got {len(value)}: {show(value)}"
    if m.order != "unordered":
        return _worst(
            [
                (f"[{i}]", match(s, v, judge))
                for i, (s, v) in enumerate(zip(items, value, strict=False))
            ]
        )
    verdicts = [[match(s, v, judge)[0] for v in value] for s in items]
    if any(ok is None for row in verdicts for ok in row):
        return None, "not graded: an element needs the judge"
    if not _matching([[j for j, ok in enumerate(row) if ok] for row in verdicts]):
        return False, f"no element of {show(value)} for each item, in any order"
    return True, None


def _matching(options: list[list[int]]) -> bool:
    """Whether each item gets an element of its own (`options[i]`: the elements item i
    accepts): augmenting paths (Kuhn's algorithm)."""
    owner: dict[int, int] = {}

    def place(i: int, seen: set[int]) -> bool:
        for j in options[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or place(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return all(place(i, set()) for i in range(len(options)))


def matches(matcher: Matcher, value: Any) -> bool:
    """`match` as a plain yes/no, without its detail (for pairing calls by their arguments)."""
    if matcher.kind == "exact":
        return deep_equal(matcher.value, value)
    if matcher.kind in ("any_of", "enum"):
        for choice in _choices(matcher):
            if deep_equal(choice, value):
                return True
        return False
    return matcher.kind != "judge" and match(matcher, value)[0] is True


_NUMBER: Final = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")


def is_integer_text(text: str) -> bool:
    """Does `text` fully match `-?(0|[1-9]\\d*)` (`\\d`: any Unicode decimal digit, as `re`
    reads it for text)? Tested without the regex, whose call cost ~1,000 instructions."""
    body = text[1:] if text.startswith("-") else text
    if body == "0":
        return True
    return body != "" and "1" <= body[0] <= "9" and body.isdecimal()


def coercions(value: Any) -> list[Any]:
    """The same value in other JSON types, losslessly: "5"->5, "2.5"->2.5, "true"->True,
    1->"1", True->"true". Empty when there is none."""
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if is_number(value):
        text = repr(value) if isinstance(value, float) else str(value)
        return [text]
    if not isinstance(value, str):
        return []
    text = value.strip()
    if text in ("true", "false"):
        return [text == "true"]
    if text != value:
        return []
    if is_integer_text(text):
        return [int(text)] if len(text) < 400 else []
    if ("." in text or "e" in text or "E" in text) and _NUMBER.fullmatch(text):
        number = float(text)
        return [number] if math.isfinite(number) else []
    return []
