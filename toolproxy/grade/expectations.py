"""Expectation files: load and validate labeled cases, and write them back.

Format (validated by `schemas/expectations.schema.json`, JSON Schema Draft 2020-12)
----------------------------------------------------------------------------------

A **YAML** file (`.yaml`, `.yml`) is a list of cases, or a mapping `{cases: [...]}`.
A **JSONL** file (`.jsonl`) holds one case per line (blank lines are skipped).
YAML is read with YAML 1.2 core scalars: only `true`/`false` are booleans (`no`, `on`,
`NO` stay strings), numbers are JSON-like (`0x1F`, `017`, `1_000`, `12:30` stay strings)
and timestamps stay strings (a `datetime` matcher parses them itself).

A case says what should have happened for one model turn::

    - id: weather-paris              # required, unique across every file loaded
      exchange_id: 3f2a9c1e-...      # a recorded exchange to grade, OR instead:
      # messages: [...]              #   its own conversation (wire format's messages)
      # tools: [...]                 #   and tools block (only with messages)
      # wire_format: openai_chat     #   openai_chat | openai_responses | anthropic_messages
      #                              #   | ollama_chat | gemini | bedrock_converse
      expect: call                   # call (default) | no_call (the model should answer in
                                     #   text) | output (structured output: instead of calls,
                                     #   `output: {field: MATCHER}` and allow_extra_fields;
                                     #   docs/grading.md "Structured output")
      order: ordered                 # ordered (default) | unordered (parallel calls, any order)
      extra_calls: allow             # allow (default) | forbid | N: more calls to expected
                                     #   tools than expected (a second write): forbid makes
                                     #   each a spurious_call, N allows that many
      calls:                         # required for expect: call, forbidden for no_call
        - tool: get_weather
          allow_extra_args: true     # default: arguments not named below are not graded
          args:                      # argument name -> MATCHER
            city: Paris              # a plain value: exact
            unit: {match: enum, values: [celsius, fahrenheit]}
      tags: [smoke]
      notes: free text
      provenance: {by: alice, at: "2026-11-24T10:00:00+00:00", via: label}  # who, when, how

MATCHER: a plain value is an exact match (nested objects and lists compared by value).
A mapping is a matcher object only when it has a `match` key, or has `optional` as its
only key; any other mapping is a plain value. Matcher objects:

    {match: exact, value: V}                 equal by value (write a literal mapping that
                                             has a `match` key this way)
    {match: any}                             present, any value
    {match: any_of, values: [A, B]}          equal to one of the values
    {match: enum, values: [a, b]}            the same, reported as an enum
    {match: range, min: 0, max: 10}          a number within [min, max]; either bound
                                             may be left out, not both
    {match: tolerance, value: 3.0, tolerance: 0.1}   |x - value| <= tolerance
    {match: regex, pattern: "^[A-Z]{3}$"}    the string fully matches (Python `re`)
    {match: datetime, value: "2024-05-01T12:00:00+02:00"}   ISO-8601, equal as instants
    {match: unordered, value: [a, b]}        a list equal to value ignoring order
    {match: text, value: "New York"}         equal ignoring case and runs of whitespace
    {match: text, values: ["Washington, DC", "DC"], ignore: [case, whitespace, punctuation]}
                                             equal to one of the values, ignoring what
                                             `ignore` names (default: case, whitespace)
    {match: judge, criterion: "a polite refusal"}   an LLM judge scores it 1 / 0.5 / 0;
                                             passes at 1, or at `pass_at: 0.5`
    {optional: true}                         may be omitted; any value accepted

Any matcher may add `optional: true`: absent is fine, present must match. Errors name the
file, the line and the field path (`cases[3].calls[0].args.city.pattern`); every error of
every file is reported at once (`ExpectationError`, exit code 2 in the CLI).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolproxy.grade.casecheck import (
    case_problems,
    is_matcher_object,
    matcher_problems,
    schema_problems,
)
from toolproxy.grade.casefile import (
    ExpectationError,
    FieldPath,
    Issue,
    Located,
    file_format,
    format_path,
    read_located,
    render,
    write_atomic,
)
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Provenance
from toolproxy.util.gctools import paused_gc
from toolproxy.wire.structured import OUTPUT

__all__ = [
    "Checked",
    "ExpectationError",
    "FirstSeen",
    "Issue",
    "case_to_dict",
    "check_located",
    "dump_cases",
    "dump_matcher",
    "file_issues",
    "is_matcher_object",
    "load_cases",
    "parse_matcher",
    "render_cases",
]

# Matcher fields per kind, in the order they are written.
FIELDS: dict[str, tuple[str, ...]] = {
    "exact": ("value",),
    "any": (),
    "any_of": ("values",),
    "enum": ("values",),
    "range": ("min", "max"),
    "tolerance": ("value", "tolerance"),
    "regex": ("pattern",),
    "datetime": ("value",),
    "unordered": ("value",),
    "text": ("value", "values", "ignore"),
    "judge": ("criterion", "pass_at"),
    "object": ("fields", "allow_extra"),
    "list": ("items", "order", "allow_extra"),
}


def parse_matcher(value: Any) -> Matcher:
    """A file's matcher value (plain value or matcher object) as a `Matcher`.

    Raises `ExpectationError` when it is not a valid matcher."""
    problems = schema_problems("arg", value) + matcher_problems(value)
    if problems:
        raise ExpectationError(
            [Issue(file="<matcher>", path=format_path(p), message=m) for p, m in problems]
        )
    return _matcher(value)


def _matcher(value: Any) -> Matcher:
    """A matcher value already checked (by `parse_matcher`, or as part of a case): a plain
    value is an exact matcher."""
    if not is_matcher_object(value):
        return Matcher(value=value)
    kind = value.get("match", "any")
    fields = {f: value[f] for f in FIELDS[kind] if f in value}
    if kind == "object" and isinstance(fields.get("fields"), dict):  # nested matchers
        fields["fields"] = {k: _matcher(v) for k, v in fields["fields"].items()}
    if kind == "list" and isinstance(fields.get("items"), list):
        fields["items"] = [_matcher(v) for v in fields["items"]]
    return Matcher(kind=kind, optional=value.get("optional", False), **fields)


def _to_case(raw: dict[str, Any]) -> Case:
    """A raw case already checked against the expectations schema (`check_located`) as a
    `Case`. Structured output (`expect: output`) becomes its one call to `OUTPUT`."""
    if raw.get("expect") == "output":
        extra = raw.get("allow_extra_fields", True)
        call = {"tool": OUTPUT, "args": raw.get("output") or {}, "allow_extra_args": extra}
        raw = {k: v for k, v in raw.items() if k not in ("output", "allow_extra_fields")}
        raw["calls"] = [call]
    calls = [
        ExpectedCall(
            tool=c["tool"],
            args={k: _matcher(v) for k, v in (c.get("args") or {}).items()},
            allow_extra_args=c.get("allow_extra_args", True),
        )
        for c in raw.get("calls") or []
    ]
    given = raw.get("provenance")
    provenance = Provenance(**given) if given is not None else None
    return Case(**{**raw, "calls": calls, "provenance": provenance})


def load_cases(paths: Sequence[Path]) -> list[Case]:
    """Every case of the files, in order; raises `ExpectationError` listing all problems.

    The cyclic garbage collector is paused meanwhile (`gctools.paused_gc`): loading makes
    many objects and no cycles."""
    with paused_gc():
        return _load_cases(paths)


def _load_cases(paths: Sequence[Path]) -> list[Case]:
    issues: list[Issue] = []
    cases: list[Case] = []
    first: FirstSeen = {}
    for path in paths:
        checked = check_located(read_located(Path(path), issues))
        issues.extend(file_issues(path, checked, first))
        cases.extend(checked.cases)
    if issues:
        raise ExpectationError(issues)
    return cases


@dataclass
class Checked:
    """Raw cases (of a file, or of one part of a JSONL file) checked one by one: each case's
    own problems, and its id for the checks across cases (`file_issues`)."""

    count: int = 0  # raw cases read
    cases: list[Case] = field(default_factory=list)  # those without problems
    problems: list[tuple[int, int, FieldPath, str]] = field(default_factory=list)
    ids: list[tuple[int, str, int]] = field(default_factory=list)  # (case index, id, its line)

    def shifted(self, by: int) -> Checked:
        """The same checks for a part whose first case is case `by` of its file."""
        if by == 0:
            return self
        return Checked(
            self.count,
            self.cases,
            [(i + by, line, sub, m) for i, line, sub, m in self.problems],
            [(i + by, case_id, line) for i, case_id, line in self.ids],
        )


def check_located(located: Sequence[Located]) -> Checked:
    """Each raw case checked on its own, and built into a `Case` when nothing is wrong."""
    out = Checked(count=len(located))
    for i, (raw, line_of, plain) in enumerate(located):
        problems = case_problems(raw, plain)
        out.problems.extend((i, line_of(sub), sub, message) for sub, message in problems)
        case_id = raw.get("id") if isinstance(raw, dict) else None
        if isinstance(case_id, str):
            out.ids.append((i, case_id, line_of(("id",))))
        if not problems:
            out.cases.append(_to_case(raw))
    return out


FirstSeen = dict[str, tuple[Path | str, int]]  # case id -> (file, line) where it was first defined


def file_issues(path: Path | str, checked: Checked, first: FirstSeen) -> list[Issue]:
    """The issues of one file's checked cases, in case order (a case's own problems, then a
    duplicate id); `first` is updated (a place is worded only for a duplicate)."""
    found = [
        (i, 0, Issue(file=str(path), line=line, path=format_path(sub, f"cases[{i}]"), message=m))
        for i, line, sub, m in checked.problems
    ]
    for i, case_id, line in checked.ids:
        if case_id in first:
            where, at = first[case_id]
            message = f"duplicate id {case_id!r} (first at {where}:{at})"
            found.append(
                (i, 1, Issue(file=str(path), line=line, path=f"cases[{i}].id", message=message))
            )
        else:
            first[case_id] = (path, line)
    found.sort(key=lambda t: t[:2])
    return [issue for _, _, issue in found]


def dump_matcher(m: Matcher) -> Any:
    """The file form of a matcher: the shortest one that loads back equal."""
    if m.kind == "any":
        return {"optional": True} if m.optional else {"match": "any"}
    if m.kind == "exact" and not m.optional and not is_matcher_object(m.value):
        return m.value
    out: dict[str, Any] = {"match": m.kind}
    # `value` is written even when None (exact: null), except where `values` stands instead
    bare = m.kind != "text" or m.values is None
    out |= {
        f: getattr(m, f)
        for f in FIELDS[m.kind]
        if getattr(m, f) is not None or (f == "value" and bare)
    }
    if m.fields is not None and m.kind == "object":
        out["fields"] = {k: dump_matcher(v) for k, v in m.fields.items()}
    if m.items is not None and m.kind == "list":
        out["items"] = [dump_matcher(v) for v in m.items]
    return out | ({"optional": True} if m.optional else {})


def case_to_dict(case: Case) -> dict[str, Any]:
    """A case as written to a file: stable key order, defaults left out where obvious."""
    out: dict[str, Any] = {"id": case.id}
    for name in ("exchange_id", "wire_format", "messages", "tools"):
        if getattr(case, name) is not None:
            out[name] = getattr(case, name)
    out["expect"] = case.expect
    if case.expect == "output" and case.calls:
        output = case.calls[0]
        out["output"] = {k: dump_matcher(m) for k, m in output.args.items()}
        if not output.allow_extra_args:
            out["allow_extra_fields"] = False
        return out | _tail(case)
    if len(case.calls) > 1 or case.order != "ordered":
        out["order"] = case.order
    if case.extra_calls != "allow":
        out["extra_calls"] = case.extra_calls
    if case.calls:
        out["calls"] = [
            {"tool": c.tool, "args": {k: dump_matcher(m) for k, m in c.args.items()}}
            | ({} if c.allow_extra_args else {"allow_extra_args": False})
            for c in case.calls
        ]
    return out | _tail(case)


def _tail(case: Case) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if case.tags:
        out["tags"] = list(case.tags)
    if case.notes is not None:
        out["notes"] = case.notes
    if case.provenance is not None:
        given = case.provenance.model_dump().items()
        out["provenance"] = {k: v for k, v in given if v is not None}
    return out


def render_cases(cases: Sequence[Case], fmt: str) -> str:
    """The text of cases in `fmt` ('yaml': a block list; 'jsonl': one object per line)."""
    return render([case_to_dict(c) for c in cases], fmt)


def dump_cases(cases: Sequence[Case], path: Path, header: str = "") -> None:
    """Write cases to `path` (format by suffix), replacing it; `header` is a YAML comment.

    What is written loads back equal through `load_cases`."""
    fmt = file_format(path)
    text = render_cases(cases, fmt)
    if fmt == "yaml":
        comment = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
        text = comment + (text or "[]\n")
    write_atomic(path, text)
