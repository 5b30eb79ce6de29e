"""What the model did for each case: `Observation`s built from the capture's rows.

`build_observation` is pure: one `exchanges` row, its `tool_calls` and its `tools_offered`
rows in, an `Observation` out (calls in index order, tools offered by position, model,
finish reason, `complete` = the parse was not `partial`). `load_observations` is the thin
part that reads those rows through `toolproxy.store`. `observe_case` pairs a case with
its observation, or says why there is nothing to grade yet (`Ungradable`).

Stable strings (`Ungradable.kind`):
    needs_replay     the case carries its own messages and tools: a replay must produce the
                     model's turn first (toolproxy replay)
    no_exchange      the case points at an exchange id the capture does not hold
    upstream_failed  the exchange got no model output: no HTTP status (connection failure,
                     timeout before the headers), an error status, or a response cut (or
                     said failed by the provider: `provider_error`) before any text or
                     tool call. A response cut after the model started answering
                     is graded (`complete = False`: the checker's truncation)
    not_parsed       the response could not be read as a model reply (unknown wire format
                     or a parse error)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from toolproxy.store.reader import Reader

from toolproxy.grade.model import Case, Observation
from toolproxy.records import ToolCall
from toolproxy.schema.compiling import note_schema_key
from toolproxy.store.rows import GradedExchange
from toolproxy.wire.common import decoded
from toolproxy.wire.structured import with_output

UngradableKind = Literal["needs_replay", "no_exchange", "upstream_failed", "not_parsed"]

# the `tool_calls` columns a ToolCall is made of, in `_call`'s order
_CALL_FIELDS = ("index", "call_id", "name", "arguments_raw", "arguments", "parse_error")


class Ungradable(BaseModel):
    """Why a case cannot be graded from the capture (yet)."""

    kind: UngradableKind
    reason: str = Field(description="one line a person can act on")


def build_observation(
    exchange: Mapping[str, Any],
    calls: Iterable[Mapping[str, Any]],
    offered: Iterable[Mapping[str, Any]],
) -> Observation:
    """An Observation from one `exchanges` row and its `tool_calls` / `tools_offered` rows
    (dicts keyed by column; JSON columns may be text or already decoded)."""
    ordered = sorted(calls, key=lambda c: c.get("index") or 0)
    return _observation(
        exchange_row(exchange),
        [_call(*(c.get(k) for k in _CALL_FIELDS)) for c in ordered],
        [
            {"name": t.get("name"), "parameters": decoded(t.get("parameters"))}
            for t in sorted(offered, key=lambda t: t.get("position") or 0)
        ],
    )


def exchange_row(exchange: Mapping[str, Any]) -> GradedExchange:
    """An `exchanges` row given as a dict, as the columns the grader reads (absent: None)."""
    return GradedExchange._make(exchange.get(name) for name in GradedExchange._fields)


def _call(index: Any, call_id: Any, name: Any, raw: Any, arguments: Any, error: Any) -> ToolCall:
    """One `tool_calls` row's columns (`_CALL_FIELDS`, as stored) as an ToolCall."""
    return ToolCall(
        index=index or 0,
        call_id=call_id,
        name=name,
        arguments_raw=raw or "",
        arguments=decoded(arguments),
        parse_error=error,
    )


def _observation(
    exchange: GradedExchange, calls: list[ToolCall], offered: list[dict[str, Any]]
) -> Observation:
    text = exchange.assistant_text
    if exchange.response_format or exchange.text_format:  # structured output?
        fmt, text_param = decoded(exchange.response_format), decoded(exchange.text_format)
        calls, offered = with_output(calls, offered, text, fmt, text_param)
    return Observation(
        exchange_id=exchange.exchange_id,
        session_id=exchange.session_id,
        model=exchange.model,
        finish_reason=exchange.finish_reason,
        complete=exchange.parse_status != "partial",
        calls=calls,
        offered=offered,
        text=text if not calls else None,  # a call lost in it
    )


def check_exchange(exchange: Mapping[str, Any], calls: int = 0) -> Ungradable | None:
    """Why an exchange holds no model turn to grade, or None when it does (`calls`: how
    many tool calls it recorded)."""
    return check_row(exchange_row(exchange), calls)


def check_row(exchange: GradedExchange, calls: int = 0) -> Ungradable | None:
    """`check_exchange` of a row as the store reads it."""
    eid = exchange.exchange_id
    kind, status = exchange.error_kind, exchange.status_code
    detail = exchange.error_message or f"HTTP {status}"
    if status is None or status >= 400:
        return Ungradable(
            kind="upstream_failed", reason=f"exchange {eid} got no model output ({kind}: {detail})"
        )
    if exchange.parse_status in ("error", "unparsed"):
        why = exchange.parse_error or f"wire format {exchange.wire_format}"
        return Ungradable(kind="not_parsed", reason=f"exchange {eid} was not parsed: {why}")
    if kind is not None and not calls and not exchange.assistant_text:
        # cut, or failed by the provider, before the model said anything: not a missing call
        how = "failed" if kind == "provider_error" else "was cut"
        return Ungradable(
            kind="upstream_failed",
            reason=f"exchange {eid} {how} before any model output ({kind}: {detail})",
        )
    return None


def observe_case(
    case: Case, observations: Mapping[str, Observation | Ungradable]
) -> Observation | Ungradable:
    """The observation to grade `case` against, or why there is none."""
    if case.exchange_id is None:
        return Ungradable(
            kind="needs_replay",
            reason="the case carries its own messages and tools: run a replay to grade it",
        )
    found = observations.get(case.exchange_id)
    if found is None:
        return Ungradable(
            kind="no_exchange", reason=f"exchange {case.exchange_id} is not in the capture"
        )
    return found


def load_observations(
    capture: Path | str, exchange_ids: Iterable[str]
) -> dict[str, Observation | Ungradable]:
    """Observations of the given exchanges, read from a capture (ids it lacks are absent).

    Four queries on one connection, whatever the number of cases (the ids go in as one
    list parameter). Each distinct offered schema is read and decoded once, by its
    `schema_hash`, and shared by every observation that offered it, so the checker compiles
    it once too."""
    from toolproxy import store

    ids = sorted(set(exchange_ids))
    if not ids:
        return {}
    with store.reading(capture) as r:
        return read_observations(r, ids)


def read_observations(r: Reader, ids: list[str]) -> dict[str, Observation | Ungradable]:
    """`load_observations` inside a read batch the caller holds."""
    from toolproxy.store.queries.grades import observation_rows

    if not ids:
        return {}
    exchanges, calls, offered, schemas = observation_rows(r, ids)
    calls_of: dict[str, list[ToolCall]] = {}
    for eid, index, call_id, name, raw, arguments, error in calls:
        calls_of.setdefault(eid, []).append(_call(index, call_id, name, raw, arguments, error))
    schema_of = {key: decoded(text) for key, text in schemas}
    for key, schema in schema_of.items():
        note_schema_key(schema, key)  # so the checker need not hash it again
    offered_of: dict[str, list[dict[str, Any]]] = {}
    for eid, _, name, key in offered:
        offered_of.setdefault(eid, []).append({"name": name, "parameters": schema_of.get(key)})
    result: dict[str, Observation | Ungradable] = {}
    for row in exchanges:
        eid = row.exchange_id
        found = calls_of.get(eid, [])
        problem = check_row(row, len(found))
        result[eid] = problem or _observation(row, found, offered_of.get(eid, []))
    return result
