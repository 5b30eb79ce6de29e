"""Recorded vs replayed, per call: `CallDiff` rows for one finished cell. Pure.

For every step the candidate reached, its first attempt (attempt 0: what the model did
before any closed-loop correction, the same turn the grades attach to) is paired with
the calls the production model made at that step, by position. Each pair says whether the
tool is the same (names compared as the grader does, so a server prefix does not count
as a change) and whether the arguments are equal by value (parsed JSON; the raw text when
either side did not parse). The label is the grader's, with the recorded calls as the
expectation accepted as they were made (`recorded_case`): a replayed call the grader
accepts has no label.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from toolproxy.grade.checker import ServerTool, grade_case
from toolproxy.grade.grades import CallGrade, CaseGrade
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation
from toolproxy.records import ToolCall
from toolproxy.replay.model import CallDiff, CellResult, ReplayItem, Step, TurnRecord
from toolproxy.wire.common import parse_arguments
from toolproxy.wire.structured import OUTPUT, output_call, output_spec, with_output
from toolproxy.wire.toolnames import same_tool


def recorded_case(step: Step, case_id: str = "recorded") -> Case:
    """The step's recorded calls as an expectation that accepts them as made (every parsed
    argument exact; unparsed arguments leave the tool's arguments unchecked); a recorded
    structured output, its fields exact (`expect: output`)."""
    spec = output_spec(step.params.get("response_format"), step.params.get("text"))
    if spec is not None and not step.recorded_calls and step.recorded_text:
        parsed = output_call(step.recorded_text).arguments
        fields = parsed if isinstance(parsed, dict) else {}
        output = ExpectedCall(tool=OUTPUT, args={k: Matcher(value=v) for k, v in fields.items()})
        return Case(id=case_id, expect="output", calls=[output], tools=step.tools)
    calls = [
        ExpectedCall(
            tool=c.name or "(unnamed)",
            args={k: Matcher(value=v) for k, v in parsed.items()}
            if isinstance(parsed := arguments_of(c), dict)
            else {},
        )
        for c in step.recorded_calls
    ]
    return Case(
        id=case_id,
        expect="call" if calls else "no_call",
        calls=calls,
        order="unordered" if len(calls) > 1 else "ordered",
        tools=step.tools,
    )


def parsed_calls(turn: TurnRecord) -> list[ToolCall]:
    """A turn's calls as `ToolCall`s: arguments parsed as the wire parser would, or the
    parse error kept (the one reading the store rows and the grader share)."""
    calls = []
    for index, call in enumerate(turn.calls):
        parsed, error = parse_arguments(call.arguments_raw)
        calls.append(
            ToolCall(
                index=index,
                call_id=call.call_id,
                name=call.name,
                arguments_raw=call.arguments_raw,
                arguments=parsed if error is None else None,
                parse_error=error,
            )
        )
    return calls


def observe_turn(turn: TurnRecord, step: Step) -> Observation:
    """A replayed turn as the grader's Observation (offered tools: the step's; a reply to
    a request for structured output is its one call to `OUTPUT`, as when captured)."""
    calls = [ToolCall(**call.model_dump()) for call in parsed_calls(turn)]
    offered = [
        {"name": t["name"], "parameters": t.get("parameters")}
        for t in (_function(tool) for tool in step.tools)
        if isinstance(t.get("name"), str)
    ]
    params = step.params
    calls, offered = with_output(
        calls, offered, turn.text, params.get("response_format"), params.get("text")
    )
    return Observation(
        exchange_id=turn.exchange_id,
        finish_reason=turn.finish_reason,
        complete=turn.error_kind is None,
        calls=calls,
        text=turn.text if not calls else None,  # a call the candidate's server lost in it
        offered=offered,
    )


def arguments_of(call: ToolCall) -> Any:
    """A call's arguments by value: the parsed ones, else parsed from the raw text, else
    None (the raw text did not parse)."""
    if call.arguments is not None:
        return call.arguments
    parsed, error = parse_arguments(call.arguments_raw)
    return parsed if error is None else None


def first_attempts(result: CellResult) -> dict[int, TurnRecord]:
    """Per step, the turn of its first attempt (the lowest attempt number recorded)."""
    found: dict[int, TurnRecord] = {}
    for turn in result.turns:
        if turn.step not in found or turn.attempt < found[turn.step].attempt:
            found[turn.step] = turn
    return found


def diff_cell(
    item: ReplayItem, result: CellResult, server_tools: Sequence[ServerTool] = ()
) -> list[CallDiff]:
    """One CallDiff per call position of every step the candidate answered (see module doc).

    A step answered with an error and no calls gives no rows; a step where neither side
    called a tool gives none either (there is no call to compare).
    """
    diffs: list[CallDiff] = []
    servers = {server for server, _, _ in server_tools}
    turns = first_attempts(result)
    for index, step in enumerate(item.steps):
        turn = turns.get(index)
        if turn is None or (turn.error_kind is not None and not turn.calls):
            continue
        grade = grade_case(recorded_case(step), observe_turn(turn, step), None, server_tools)
        recorded, replayed = step.recorded_calls, turn.calls
        for i in range(max(len(recorded), len(replayed))):
            rec = recorded[i] if i < len(recorded) else None
            rep = replayed[i] if i < len(replayed) else None
            diffs.append(_diff(result, index, i, rec, rep, _label(grade, rep, i), servers))
    return diffs


def _diff(
    result: CellResult,
    step: int,
    index: int,
    rec: ToolCall | None,
    rep: ToolCall | None,
    label: str | None,
    servers: Collection[str],
) -> CallDiff:
    tool_same = rec is not None and rep is not None and same_tool(rep.name, rec.name, servers)
    return CallDiff(
        run=result.run,
        candidate=result.candidate,
        item_id=result.item_id,
        repeat=result.repeat,
        step=step,
        index=index,
        recorded_tool=rec.name if rec else None,
        replayed_tool=rep.name if rep else None,
        recorded_arguments=_shown(rec),
        replayed_arguments=_shown(rep),
        same_tool=tool_same,
        same_arguments=tool_same and _same_arguments(rec, rep),
        label=label,
    )


def _shown(call: ToolCall | None) -> Any:
    """Arguments as stored in a diff: by value when they parse, else the raw text."""
    if call is None:
        return None
    parsed = arguments_of(call)
    return parsed if parsed is not None else call.arguments_raw


def _same_arguments(rec: ToolCall | None, rep: ToolCall | None) -> bool:
    if rec is None or rep is None:
        return False
    a, b = arguments_of(rec), arguments_of(rep)
    if a is None or b is None:
        return rec.arguments_raw == rep.arguments_raw
    return bool(a == b) and _same_types(a, b)


def _same_types(a: Any, b: Any) -> bool:
    """`==` says 1 == 1.0 == True; a replay that sends "true" or 1 for true differs."""
    if type(a) is not type(b) and not (_number(a) and _number(b)):
        return False
    if isinstance(a, dict):
        return all(_same_types(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return all(_same_types(x, y) for x, y in zip(a, b, strict=True))
    return True


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _label(grade: CaseGrade, call: ToolCall | None, position: int) -> str | None:
    """The grader's label for one replayed call: its CallGrade's label (found by call id,
    else by position among the graded calls that have an actual tool); the case's label
    when the call has no grade of its own; None when accepted."""
    if grade.passed:
        return None
    if call is None:
        missing = [c for c in grade.calls if c.actual_tool is None and c.label is not None]
        return missing[0].label if missing else grade.label
    own: CallGrade | None = None
    if call.call_id:
        own = next((c for c in grade.calls if c.call_id == call.call_id), None)
    if own is None:
        actual = [c for c in grade.calls if c.actual_tool is not None]
        own = actual[position] if position < len(actual) else None
    if own is not None and own.label is not None:
        return own.label
    if own is not None:
        return None
    return grade.label


def _function(tool: Any) -> dict[str, Any]:
    """`{"type": "function", "function": {...}}` -> the inner spec; other shapes as given."""
    if isinstance(tool, dict):
        inner = tool.get("function")
        return inner if isinstance(inner, dict) else tool
    return {}
