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

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field

from toolproxy import store
from toolproxy.grade.casefile import cases_node, file_format, write_atomic
from toolproxy.grade.expectations import dump_cases, load_cases, render_cases
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Provenance
from toolproxy.grade.sampling import sample
from toolproxy.store.filters import ExchangeFilter
from toolproxy.store.queries import exchanges, turns
from toolproxy.store.rows import CallRow, ExchangeRow
from toolproxy.wire.structured import OUTPUT, output_call, output_spec

SHORT_ID = 8
RAW_IN_NOTES = 200  # characters of unparseable argument text quoted in a case's notes


class LabelFilters(ExchangeFilter):
    """Which recorded model turns become cases: the store's filter, where `tools` also
    keeps text-only turns that were offered one of them (with `no_calls`)."""

    tools: list[str] = Field(
        default_factory=list, description="only turns calling (or, for no_call, offered) these"
    )
    no_calls: bool = Field(default=False, description="also text-only turns, as no_call cases")
    sample: int | None = Field(default=None, description="draw this many turns (sampling)")
    stratify: Literal["tool", "model", "session"] | None = Field(
        default=None, description="the sample's strata: first tool called, model, or session"
    )
    seed: int = Field(default=0, description="the same seed draws the same sample")


def _rows(capture: Path, filters: LabelFilters) -> list[dict[str, Any]]:
    """Usable model turns with their calls (in index order) and offered tool names."""
    where = filters.model_copy(update={"tools": [], "model_turns": True})
    with store.reading(capture) as r:
        found = turns.model_turns(r, where)
        ids = [t.exchange_id for t in found]
        calls: dict[str, list[dict[str, Any]]] = {}
        for c in exchanges.tool_calls(r, ids):
            calls.setdefault(c.exchange_id, []).append(c.as_dict())
        offered: dict[str, set[str]] = {}
        for o in exchanges.offered_tools(r, ids):
            if o.name is not None:
                offered.setdefault(o.exchange_id, set()).add(o.name)
        for eid, text, fmt, text_param in exchanges.structured_replies(r, ids):
            if eid not in calls and text and output_spec(fmt, text_param) is not None:
                calls[eid] = [{**output_call(text).model_dump(), "exchange_id": eid}]
    return [
        {
            "exchange_id": t.exchange_id,
            "session_id": t.session_id,
            "started_at": t.started_at,
            "model": t.model,
            "calls": calls.get(t.exchange_id),
            "offered": sorted(offered.get(t.exchange_id, ())),
        }
        for t in found
    ]


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
    parsed = call["arguments"]  # decoded by the store
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


def reviewer(given: str | None = None) -> str | None:
    """Who labels: `given` (label --by), else $TOOLPROXY_REVIEWER, else the OS user."""
    import getpass
    import os

    if given:
        return given
    if os.environ.get("TOOLPROXY_REVIEWER"):
        return os.environ["TOOLPROXY_REVIEWER"]
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name in this environment
        return None


def now_iso() -> str:
    """The current time as provenance writes it (UTC, seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def stamped(case: Case, by: str | None, via: str, at: str | None = None) -> Case:
    """`case` with provenance: who, when, how; the recorded turn's ids kept when it has
    them (a case with provenance already keeps it: `label --import` of labeled cases)."""
    if case.provenance is not None:
        return case
    prov = Provenance(by=by, at=at or now_iso(), via=via, exchange_id=case.exchange_id)
    return case.model_copy(update={"provenance": prov})


def stamped_all(cases: Sequence[Case], by: str | None, via: str) -> list[Case]:
    """Each case `stamped`, all at one time: when the command labeled them."""
    at = now_iso()
    return [stamped(case, by, via, at) for case in cases]


def _case(
    row: dict[str, Any], by: str | None = None, via: str = "label", at: str | None = None
) -> Case:
    started = row["started_at"].astimezone(UTC).isoformat(timespec="seconds")
    notes = [f"labeled from session {row['session_id']}, model {row['model']}, {started}"]
    calls = [_expected_call(c, notes) for c in row["calls"] or []]
    output = bool(calls) and all(c.tool == OUTPUT for c in calls)  # structured output
    return Case(
        id=case_id(["output" if output else c.tool for c in calls], row["exchange_id"]),
        exchange_id=row["exchange_id"],
        expect="output" if output else "call" if calls else "no_call",
        calls=calls,
        order="unordered" if len(calls) > 1 else "ordered",
        notes="\n".join(notes),
        provenance=Provenance(
            by=by,
            at=at or now_iso(),
            via=via,
            exchange_id=row["exchange_id"],
            session_id=row["session_id"],
            model=row["model"],
        ),
    )


def case_for_turn(
    exchange: ExchangeRow,
    calls: Sequence[CallRow],
    no_call: bool = False,
    by: str | None = None,
    via: str = "tui",
) -> Case:
    """The case that accepts one recorded turn as it is (its calls, exact arguments), or
    with `no_call` says the model should have answered in text; ids as `label` gives them."""
    row = {
        "exchange_id": exchange.exchange_id,
        "session_id": exchange.session_id,
        "started_at": exchange.started_at,
        "model": exchange.model,
        "calls": None if no_call else [c.as_dict() for c in calls],
    }
    return _case(row, by, via)


def _stratum(by: str) -> Callable[[dict[str, Any]], str]:
    """A turn's stratum: the first tool it called ("(no call)"), its model, its session."""
    if by == "tool":
        return lambda row: next((c["name"] or "" for c in row["calls"] or []), "(no call)")
    return lambda row: str(row["model" if by == "model" else "session_id"])


def cases_from_capture(capture: Path, filters: LabelFilters, by: str | None = None) -> list[Case]:
    """One case per matching recorded model turn, in recording order (see module doc);
    with `sample`, that many of them (`sampling.sample`, stratified by `stratify`); each
    with its provenance (`by`, now, the turn's exchange, session and model)."""
    via = "label --sample" if filters.sample is not None else "label"
    rows = []
    for row in _rows(capture, filters):
        names = [c["name"] for c in row["calls"] or []]
        if not names and not (filters.no_calls and row["offered"]):
            continue
        wanted = set(filters.tools)
        if wanted and not wanted & set(names or row["offered"] or []):
            continue
        rows.append(row)
    if filters.sample is not None:
        key = _stratum(filters.stratify) if filters.stratify else None
        rows = sample(rows, filters.sample, filters.seed, key)
    cases: list[Case] = []
    taken: dict[str, str] = {}  # case id -> exchange id
    at = now_iso()  # when this command labeled them
    for row in rows:
        case = _case(row, by, via, at)
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
