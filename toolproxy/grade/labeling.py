"""`toolproxy label`: recorded calls become expectation cases (accept as they are, then edit).

For each recorded model exchange that made tool calls (filtered by session, tool, model and
time) one case is written that accepts the calls exactly as the model made them: the
exchange's id, the calls in order, every parsed argument an exact matcher, `order:
unordered` when there are several. A call whose arguments did not parse keeps its tool
with no arguments, and the case's notes say so. With `--no-calls`, model turns that were
offered tools but answered in text become `expect: no_call` cases.

Case ids are `<tool>-<first 8 characters of the exchange id>` (tools joined by `+` when a
turn called several; `no_call-...` for text turns), so labeling the same capture twice
gives the same ids and `--append` skips the cases already in the file. `--import FILE`
validates a JSONL dataset of cases line by line (every error reported) and writes it out.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from toolproxy import store
from toolproxy.errors import UserError
from toolproxy.grade.casefile import cases_node, file_format, write_atomic
from toolproxy.grade.expectations import dump_cases, load_cases, render_cases
from toolproxy.grade.model import Case, ExpectedCall, Matcher

MODEL_FORMATS = ("openai_chat", "openai_responses", "anthropic_messages")
SHORT_ID = 8
RAW_IN_NOTES = 200  # characters of unparseable argument text quoted in a case's notes


class LabelFilters(BaseModel):
    """Which recorded exchanges become cases (empty lists mean no filter)."""

    sessions: list[str] = Field(default_factory=list, description="only these session ids")
    tools: list[str] = Field(
        default_factory=list, description="only turns calling (or, for no_call, offered) these"
    )
    models: list[str] = Field(default_factory=list, description="requested or returned model")
    since: datetime | None = Field(default=None, description="started at or after")
    until: datetime | None = Field(default=None, description="started before")
    no_calls: bool = Field(default=False, description="also text-only turns, as no_call cases")


_EXCHANGES = """
SELECT e.exchange_id, e.session_id, e.started_at,
       coalesce(e.model_returned, e.model_requested) AS model,
       (SELECT list({{'index': c."index", 'name': c.name, 'arguments': c.arguments,
                     'arguments_raw': c.arguments_raw, 'parse_error': c.parse_error}}
                    ORDER BY c."index")
          FROM tool_calls c WHERE c.exchange_id = e.exchange_id) AS calls,
       (SELECT list(DISTINCT o.name) FROM tools_offered o
          WHERE o.exchange_id = e.exchange_id) AS offered
FROM exchanges e
WHERE e.wire_format IN ('openai_chat', 'openai_responses', 'anthropic_messages')
  AND e.parse_status IN ('ok', 'partial')
  AND e.error_kind IS NULL AND coalesce(e.status_code, 200) < 400 {where}
ORDER BY e.started_at, e.exchange_id
"""


def _rows(capture: Path, filters: LabelFilters) -> list[dict[str, Any]]:
    where: list[str] = []
    params: dict[str, Any] = {}
    if filters.sessions:
        where.append("list_contains($sessions, e.session_id)")
        params["sessions"] = filters.sessions
    if filters.models:
        where.append(
            "(list_contains($models, e.model_requested)"
            " OR list_contains($models, e.model_returned))"
        )
        params["models"] = filters.models
    if filters.since is not None:
        where.append("e.started_at >= $since")
        params["since"] = filters.since
    if filters.until is not None:
        where.append("e.started_at < $until")
        params["until"] = filters.until
    sql = _EXCHANGES.format(where="".join(f"\n  AND {w}" for w in where))
    names, rows = store.query(capture, sql, params or None)
    return [dict(zip(names, row, strict=True)) for row in rows]


def _short(exchange_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", exchange_id)[:SHORT_ID] or exchange_id


def case_id(tools: Sequence[str], exchange_id: str) -> str:
    """`get_weather-3f2a9c1e`: the distinct tools in call order, then the short exchange id."""
    base = "+".join(dict.fromkeys(tools)) or "no_call"
    return f"{base}-{_short(exchange_id)}"


def _expected_call(call: dict[str, Any], notes: list[str]) -> ExpectedCall:
    tool = call["name"] or "(unnamed)"
    if call["name"] is None:
        notes.append(f"call {call['index']}: the model gave no tool name")
    parsed = json.loads(call["arguments"]) if call["arguments"] is not None else None
    if call["parse_error"] is None and isinstance(parsed, dict):
        return ExpectedCall(tool=tool, args={k: Matcher(value=v) for k, v in parsed.items()})
    why = call["parse_error"] or f"arguments are {type(parsed).__name__}, not an object"
    raw = call["arguments_raw"] or ""
    raw = raw if len(raw) <= RAW_IN_NOTES else raw[:RAW_IN_NOTES] + "…"
    notes.append(
        f"call {call['index']} ({tool}): arguments did not parse ({why}); raw text: {raw!r}. "
        "No args are checked: write the intended ones."
    )
    return ExpectedCall(tool=tool)


def _case(row: dict[str, Any]) -> Case:
    started = row["started_at"].astimezone(UTC).isoformat(timespec="seconds")
    notes = [f"labeled from session {row['session_id']}, model {row['model']}, {started}"]
    calls = [_expected_call(c, notes) for c in row["calls"] or []]
    return Case(
        id=case_id([c.tool for c in calls], row["exchange_id"]),
        exchange_id=row["exchange_id"],
        expect="call" if calls else "no_call",
        calls=calls,
        order="unordered" if len(calls) > 1 else "ordered",
        notes="\n".join(notes),
    )


def cases_from_capture(capture: Path, filters: LabelFilters) -> list[Case]:
    """One case per matching recorded model turn, in recording order (see module doc)."""
    cases: list[Case] = []
    taken: dict[str, str] = {}  # case id -> exchange id
    for row in _rows(capture, filters):
        names = [c["name"] for c in row["calls"] or []]
        if not names and not (filters.no_calls and row["offered"]):
            continue
        wanted = set(filters.tools)
        if wanted and not wanted & set(names or row["offered"] or []):
            continue
        case = _case(row)
        if case.id in taken:  # two exchange ids share their first characters
            case = case.model_copy(
                update={"id": f"{case.id.rsplit('-', 1)[0]}-{row['exchange_id']}"}
            )
        taken[case.id] = row["exchange_id"]
        cases.append(case)
    return cases


def append_cases(cases: Sequence[Case], path: Path) -> None:
    """Add cases at the end of an existing file, keeping what is there (comments too)."""
    fmt = file_format(path)
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        text += "\n"
    new = render_cases(cases, fmt)
    if fmt == "yaml":
        node = cases_node(text)
        if node is not None and not (isinstance(node, yaml.SequenceNode) and not node.flow_style):
            # A flow-style list ([...]) cannot be extended by appending text: rewrite it.
            dump_cases([*load_cases([path]), *cases], path)
            return
        indent = " " * (node.start_mark.column if node is not None else 0)
        new = "\n".join(indent + line if line.strip() else line for line in new.split("\n"))
    write_atomic(path, text + new)


def write_cases(cases: Sequence[Case], path: Path, append: bool, header: str) -> tuple[int, int]:
    """Write (or with `append`, add) cases to `path`: (cases written, skipped as present)."""
    if not (append and path.exists()):
        dump_cases(cases, path, header=header)
        return len(cases), 0
    existing = {c.id for c in load_cases([path])}
    fresh = [c for c in cases if c.id not in existing]
    if fresh:
        append_cases(fresh, path)
    return len(fresh), len(cases) - len(fresh)


def parse_time(value: str | None, option: str) -> datetime | None:
    """An ISO-8601 time from the command line; a naive time is taken as UTC."""
    if value is None:
        return None
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        raise UserError(f"{option}: not an ISO-8601 time: {value!r}") from None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def cmd_label(args: argparse.Namespace) -> int:
    """Turn recorded calls into expectation cases (accept as they are, then edit)."""
    out: Path = args.out
    file_format(out)  # a bad suffix fails before any work
    if args.import_file is not None:
        cases = load_cases([args.import_file])
        source = f"imported from {args.import_file}"
        nothing = f"{args.import_file} holds no cases"
    else:
        filters = LabelFilters(
            sessions=args.session,
            tools=args.tool,
            models=args.model,
            since=parse_time(args.since, "--since"),
            until=parse_time(args.until, "--until"),
            no_calls=args.no_calls,
        )
        cases = cases_from_capture(args.capture, filters)
        source = f"labeled from capture {args.capture}"
        nothing = "no recorded model turn matched the filters"
    if not cases:
        print(f"{nothing}: nothing written", file=sys.stderr)
        return 0
    header = (
        f"toolproxy label: {source}.\n"
        "Each case accepts the recorded calls exactly as made: edit the matchers.\n"
        "Format: README 'Expectations' (toolproxy/grade/expectations.py)."
    )
    written, skipped = write_cases(cases, out, args.append, header)
    also = f" ({skipped} skipped: id already in the file)" if skipped else ""
    print(f"wrote {written} case{'s' * (written != 1)} to {out}{also}")
    if written:
        print(
            f"next: review and edit them (plain values match exactly; see README "
            f"'Expectations'), then: toolproxy grade {out} --run NAME"
        )
    return 0
