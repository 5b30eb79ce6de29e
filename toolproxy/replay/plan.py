"""What a replay sends: captured model turns (or expectation cases) as `ReplayItem`s.

`plan_from_capture(capture, filters)` reads the capture through the store's read API
(`store.queries.turns.model_turns`, then the turns' calls, tools and answering results)
and returns a `Plan`: a list of items, plus how many exchanges were skipped and
why, plus the conversion notes (`toolproxy.replay.convert`).

Which exchanges
    Model turns only: wire format openai_chat / openai_responses / anthropic_messages,
    `parse_status` ok or partial, no `error_kind`, status < 400 (a turn with no reply has
    nothing to compare with). Exchanges written by replays (`proxy_id` `replay:...`) are
    never planned. The filters (`PlanFilters`; empty means no filter, several filters
    AND) select *matching* turns: sessions, exchanges, models (requested or returned),
    since (started at or after) / until (before), tools (turns that called one of them),
    labels (turns whose case earned one of the labels in `label_run`, the latest grade per
    case; `label_run` alone: every turn graded in that run). Matching exchanges that are not
    usable model turns, and in session mode the unusable exchanges of the chosen sessions,
    are counted in `Plan.skipped` by reason: `not_model_turn` (other formats, unparsed),
    `not_parsed` (parse_status error), `failed` (upstream error or status >= 400).

per="exchange"
    One item per matching turn (`item_id` = exchange id), one `Step` holding the whole
    request as Chat messages.

per="session"
    One item per session that has a matching turn, holding *all* usable turns of that
    session (a session is replayed whole), steps in time order (`started_at`, then
    exchange id). Step 1's `messages` is the whole first request. Step k's `messages` hold
    only what the agent added after step k-1's reply: with P the previous request's Chat
    messages and M this one's, M must start with P (compared as role, text, tool calls
    with canonical arguments, tool_call_id), followed by one assistant message that is
    the previous reply (the same tool call ids, or names when ids are missing; text is
    not compared); step k gets M after that assistant message (tool results, new user
    turns). A replayer that sends step 1, appends its own reply, then step 2's messages,
    and so on, rebuilds the conversation with its own replies in place of the recorded
    ones. A Responses request chained by `previous_response_id` to the previous step's
    response, or going on with the stored `conversation` the previous step went on with,
    carries only the new items already: step k gets them as converted (leading system
    messages from `instructions` left out). When a request does not extend the
    previous one that way (the agent rewrote history, re-sent a request, or started over
    under the same session id), a new item starts at that turn.

Item ids are stable across runs (resuming depends on them): the exchange id; the session
id for a session's first item and `<session id>@<exchange id of its first step>` for
each later one; the case id for cases.

Each `Step` carries the turn's `tools` and `params` (converted), `stream` as recorded,
`recorded_calls` (its `tool_calls` rows in index order), `recorded_text` (the assistant
text) and `recorded_results`: for each recorded call, the result that answered that very
call (the `call_results` view: what the agent sent back after it, linked through the
conversation, so a call id the model reused later finds its own result), in call order.

`plan_from_cases(cases, capture)`: a case with `exchange_id` becomes that exchange as one
step (kind "case", `case_id` set, recorded calls attached; a missing or unusable exchange
is skipped and counted); a case with its own `messages`/`tools` is converted from its
`wire_format` (default openai_chat) through the capture's own request parser, then
`convert.to_chat`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import dropwhile
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from toolproxy import store
from toolproxy.errors import UserError
from toolproxy.grade.model import Case
from toolproxy.records import ParsedRequest, ToolCall, canonical_json
from toolproxy.replay.convert import ChatRequest, to_chat
from toolproxy.replay.model import RecordedResult, ReplayItem, Step
from toolproxy.store.filters import MODEL_FORMATS, ExchangeFilter
from toolproxy.store.queries import exchanges, turns
from toolproxy.store.rows import ModelTurn, ResultRow
from toolproxy.wire import anthropic, bedrock, gemini, ollama, openai_chat, openai_responses
from toolproxy.wire.common import decoded, parse_arguments

_PARSERS: dict[str, Callable[[dict[str, Any]], ParsedRequest]] = {
    "openai_chat": openai_chat.parse_request,
    "openai_responses": openai_responses.parse_request,
    "anthropic_messages": anthropic.parse_request,
    "ollama_chat": ollama.parse_request,
    "gemini": gemini.parse_request,
    "bedrock_converse": bedrock.parse_request,
}
# A first step that continues a response stored at the provider lacks that conversation.
STATEFUL_NOTE = (
    "previous_response_id: replayed without the stored conversation it continues "
    "(its earlier turns are not in the capture's request)"
)
CONVERSATION_NOTE = (
    "conversation: replayed without what the stored conversation held before it "
    "(not in the capture's request)"
)
Row = dict[str, Any]
Results = dict[str, list[ResultRow]]  # exchange id -> its calls' answering results, in call order
_BODY_KEY = {
    "openai_chat": "messages",
    "openai_responses": "input",
    "anthropic_messages": "messages",
    "ollama_chat": "messages",
    "gemini": "contents",
    "bedrock_converse": "messages",
}


class PlanFilters(ExchangeFilter):
    """Which captured turns are replayed: the store's filter (replayed exchanges are never
    planned again), plus the unit of an item."""

    origin: Literal["captured", "replayed", "any"] = Field(
        default="captured", description="exchanges written by replays are never planned"
    )
    per: Literal["session", "exchange"] = Field(default="session", description="unit of an item")


class Plan(list[ReplayItem]):
    """The planned items, plus what was left out (a list, so it iterates as the items)."""

    def __init__(self, items: Iterable[ReplayItem] = ()) -> None:
        super().__init__(items)
        self.skipped: Counter[str] = Counter()  # reason -> exchanges skipped
        self.notes: Counter[str] = Counter()  # conversion note -> how many turns had it

    def describe(self) -> list[str]:
        """One line per skip reason and per conversion note, for the command's output."""
        lines = [f"skipped {n} exchange(s): {why}" for why, n in sorted(self.skipped.items())]
        return lines + [f"{note} ({n} turn(s))" for note, n in sorted(self.notes.items())]


def _children(
    capture: Path, ids: list[str]
) -> tuple[dict[str, list[ToolCall]], dict[str, list[Row]], Results]:
    """(calls by exchange, offered tools by exchange, answering results by exchange)."""
    calls: dict[str, list[ToolCall]] = {}
    offered: dict[str, list[dict[str, Any]]] = {}
    results: Results = {}
    if not ids:
        return calls, offered, results
    with store.reading(capture) as r:
        for c in exchanges.tool_calls(r, ids):
            calls.setdefault(c.exchange_id, []).append(
                ToolCall(
                    index=c.index,
                    call_id=c.call_id,
                    name=c.name,
                    arguments_raw=c.arguments_raw or "",
                    arguments=c.arguments,
                    parse_error=c.parse_error,
                )
            )
        for o in exchanges.offered_tools(r, ids):
            offered.setdefault(o.exchange_id, []).append(o._asdict())
        for res in exchanges.call_results(r, ids):
            if res.call_id:
                results.setdefault(res.exchange_id, []).append(res)
    return calls, offered, results


def _results(row: ModelTurn, results: Results) -> list[RecordedResult]:
    """The results that answered this turn's calls (`call_results`), in call order."""
    return [
        RecordedResult(call_id=r.call_id, content=r.result or "", is_error=r.result_is_error)
        for r in results.get(row.exchange_id, [])
    ]


def _convert(
    row: ModelTurn, params: Any, offered: list[dict[str, Any]], notes: Counter[str]
) -> ChatRequest:
    """`row` as Chat Completions; `params`: its request_params decoded (read, not changed)."""
    chat = to_chat(
        row.wire_format,
        decoded(row.messages),
        row.system,
        offered,
        params,
        owned=True,  # decoded here, for this conversion alone
    )
    notes.update(set(chat.notes))
    return chat


def _norm(message: dict[str, Any]) -> tuple[Any, ...]:
    """A message in a form that ignores representation (null vs "" content, JSON spacing)."""
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(
            str(p.get("text", "")) if isinstance(p, dict) and "text" in p else canonical_json(p)
            for p in content
        )
    calls = []
    for call in _calls_of(message):
        function = _function(call)
        raw = function.get("arguments") or ""
        value, error = parse_arguments(raw)
        calls.append(
            (call.get("id"), function.get("name"), raw if error else canonical_json(value))
        )
    return message.get("role"), content or "", tuple(calls), message.get("tool_call_id")


def _calls_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A Chat message's tool calls that are objects (an agent may send anything)."""
    calls = message.get("tool_calls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _function(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function")
    return function if isinstance(function, dict) else {}


def _is_reply(message: dict[str, Any], calls: list[ToolCall]) -> bool:
    if message.get("role") != "assistant":
        return False
    sent = [_function(c) | {"id": c.get("id")} for c in _calls_of(message)]
    if all(c.call_id for c in calls):
        return [s.get("id") for s in sent] == [c.call_id for c in calls]
    return [s.get("name") for s in sent] == [c.name for c in calls]


def _chain(params: Any) -> tuple[str | None, str | None]:
    """The Responses turn a request chained to and the stored conversation it went on
    with (`previous_response_id` and `conversation` of its decoded request_params)."""
    if not isinstance(params, dict):
        return None, None
    conversation = params.get("conversation")
    if isinstance(conversation, dict):
        conversation = conversation.get("id")
    chained = params.get("previous_response_id")
    return (
        chained if isinstance(chained, str) else None,
        conversation if isinstance(conversation, str) else None,
    )


def _added(
    prev: dict[str, Any], chat: ChatRequest, chain: tuple[str | None, str | None]
) -> list[Row] | None:
    """What the agent added after the previous step's reply, or None: not a continuation
    (`chain`: the turn's `previous_response_id` and `conversation`)."""
    chained, conversation = chain
    stored = chained and chained == prev["row"].response_id
    if stored or (conversation and conversation == prev["conversation"]):
        # only the new items were sent; `instructions` came again as leading system messages
        return list(dropwhile(lambda m: m.get("role") == "system", chat.messages))
    before: list[dict[str, Any]] = prev["messages"]
    now = chat.messages
    n = len(before)
    if len(now) <= n or [_norm(m) for m in now[:n]] != [_norm(m) for m in before]:
        return None
    return now[n + 1 :] if _is_reply(now[n], prev["calls"]) else None


def _step(
    row: ModelTurn, chat: ChatRequest, messages: list[Row], calls: list[ToolCall], results: Results
) -> Step:
    return Step(
        exchange_id=row.exchange_id,
        messages=messages,
        tools=chat.tools,
        params=chat.params,
        stream=bool(row.streamed),
        recorded_calls=calls,
        recorded_text=row.assistant_text,
        recorded_results=_results(row, results),
    )


def _skip_reason(row: ModelTurn) -> str:
    if row.wire_format not in MODEL_FORMATS or row.parse_status == "unparsed":
        return "not_model_turn"
    if row.parse_status not in ("ok", "partial"):
        return "not_parsed"
    return "failed"


def _item(
    row: ModelTurn, item_id: str, kind: Literal["exchange", "session"], step: Step
) -> ReplayItem:
    return ReplayItem(
        item_id=item_id,
        kind=kind,
        session_id=row.session_id,
        model=row.model,
        wire_format=row.wire_format,
        steps=[step],
    )


def plan_from_capture(capture: Path, filters: PlanFilters) -> Plan:
    """The items to replay from captured traffic (rules in the module docstring)."""
    with store.reading(capture) as r:
        rows = turns.model_turns(r, filters, whole_sessions=filters.per == "session")
    plan = Plan()
    usable = [r for r in rows if r.usable]
    plan.skipped.update(_skip_reason(r) for r in rows if not r.usable)
    calls, offered, results = _children(capture, [r.exchange_id for r in usable])
    open_items: dict[str | None, tuple[ReplayItem, dict[str, Any]]] = {}
    for row in usable:
        params = decoded(row.request_params)  # once a row: the conversion reads it too
        chat = _convert(row, params, offered.get(row.exchange_id, []), plan.notes)
        chain = _chain(params)
        made = calls.get(row.exchange_id, [])
        session = row.session_id
        current = open_items.get(session) if filters.per == "session" else None
        added = _added(current[1], chat, chain) if current else None
        if current is not None and added is not None:
            current[0].steps.append(_step(row, chat, added, made, results))
        else:
            if chain[0]:
                plan.notes[STATEFUL_NOTE] += 1
            elif chain[1]:
                plan.notes[CONVERSATION_NOTE] += 1
            step = _step(row, chat, chat.messages, made, results)
            if filters.per == "exchange":
                plan.append(_item(row, row.exchange_id, "exchange", step))
                continue
            item_id = session if session not in open_items else f"{session}@{row.exchange_id}"
            current = (_item(row, item_id, "session", step), {})
            plan.append(current[0])
        current[1].update(row=row, messages=chat.messages, calls=made, conversation=chain[1])
        open_items[session] = current
    return plan


def plan_from_cases(cases: Sequence[Case], capture: Path | None) -> Plan:
    """One single-step item per case (rules in the module docstring)."""
    plan = Plan()
    wanted = [c.exchange_id for c in cases if c.exchange_id]
    recorded: Plan = Plan()
    if wanted:
        if capture is None:
            raise UserError("cases with an exchange_id need a capture to read the exchange from")
        recorded = plan_from_capture(capture, PlanFilters(exchanges=wanted, per="exchange"))
        plan.notes, plan.skipped = recorded.notes, recorded.skipped
    by_id = {item.item_id: item for item in recorded}
    uses = Counter(c.exchange_id for c in cases if c.exchange_id)
    for case in cases:
        if case.exchange_id:
            found = by_id.get(case.exchange_id)
            if found is None:
                plan.skipped["case_exchange_missing_or_unusable"] += 1
                continue
            uses[case.exchange_id] -= 1
            if uses[case.exchange_id]:  # another case replays this exchange too: a copy
                found = found.model_copy()
            found.item_id, found.kind, found.case_id = case.id, "case", case.id
            plan.append(found)
            continue
        fmt = case.wire_format or "openai_chat"
        if fmt not in _PARSERS:
            raise UserError(f"case {case.id!r}: cannot replay wire_format {fmt!r}")
        parsed = _PARSERS[fmt]({_BODY_KEY[fmt]: case.messages, "tools": case.tools or []})
        rows = [t.model_dump() for t in parsed.tools]
        chat = to_chat(fmt, parsed.messages, parsed.system, rows, parsed.params)
        plan.notes.update(set(chat.notes))
        step = Step(messages=chat.messages, tools=chat.tools, params=chat.params)
        plan.append(
            ReplayItem(item_id=case.id, kind="case", wire_format=fmt, steps=[step], case_id=case.id)
        )
    return plan
