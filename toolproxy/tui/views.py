"""What the TUI's screens show, as text (pure): table cells and transcripts from store rows."""

from __future__ import annotations

import base64
import csv
import io
import json
import shlex
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from toolproxy.store.rows import ExchangeDetail, FailureRow, RunRow, SessionRow
from toolproxy.util.table import call_text
from toolproxy.wire.common import decoded
from toolproxy.wire.eventstream import is_eventstream, messages
from toolproxy.wire.sse import iter_sse_events

if TYPE_CHECKING:  # annotations only: the sessions screen loads without the grader
    from toolproxy.grade.metrics import RunMetrics
    from toolproxy.grade.model import Case

SESSION_COLUMNS = (
    "session",
    "models",
    "first seen",
    "last seen",
    "turns",
    "calls",
    "errors",
    "parse fails",
    "tokens in",
    "tokens out",
    "latency ms",
)
# the store's order (exchanges.SESSION_ORDERS) behind each of SESSION_COLUMNS
SESSION_SORTS = (
    "session_id",
    "models",
    "first_seen",
    "last_seen",
    "exchanges",
    "tool_calls",
    "errors",
    "parse_failures",
    "input_tokens",
    "output_tokens",
    "mean_latency_ms",
)
TURN_COLUMNS = (
    "time",
    "model",
    "format",
    "status",
    "parse",
    "TTFB ms",
    "latency ms",
    "calls",
    "tokens in/out",
    "expected",
)


def when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else ""


def number(value: float | int | None) -> str:
    if value is None:
        return ""
    return f"{value:,.0f}" if isinstance(value, float) else f"{value:,}"


def session_cells(s: SessionRow) -> tuple[str, ...]:
    return (
        s.session_id,
        ", ".join(s.models or ()),
        when(s.first_seen),
        when(s.last_seen),
        number(s.exchanges),
        number(s.tool_calls),
        number(s.errors),
        number(s.parse_failures),
        number(s.input_tokens),
        number(s.output_tokens),
        number(s.mean_latency_ms),
    )


def expected_cell(case: Case | None) -> str:
    """What a turn's case expects: its tools, `no call`, or nothing when it has no case."""
    if case is None:
        return ""
    if case.expect == "no_call":
        return "no call"
    return "+".join(c.tool for c in case.calls)


def turn_cells(d: ExchangeDetail, case: Case | None = None) -> tuple[str, ...]:
    x = d.exchange
    status = x.error_kind or (str(x.status_code) if x.status_code is not None else "")
    return (
        when(x.started_at),
        x.model or "",
        x.wire_format or "",
        status,
        x.parse_status or "",
        number(x.ttfb_ms),
        number(x.latency_ms),
        number(x.tool_calls),
        f"{number(x.input_tokens)}/{number(x.output_tokens)}",
        expected_cell(case),
    )


def pretty(value: Any) -> str:
    """JSON (or JSON text) indented; other text as it is."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def exchange_text(d: ExchangeDetail) -> list[str]:
    """One exchange: status, parse result, headers (already redacted) and bodies."""
    q = d.request
    lines = [
        f"{q.get('method')} {q.get('scheme')}://{q.get('host')}:{q.get('port')}{q.get('path')}",
        f"status {q.get('status_code')}  parse {q.get('parse_status')}"
        + (f" ({q.get('parse_error')})" if q.get("parse_error") else "")
        + (
            f"  error {q.get('error_kind')}: {q.get('error_message')}"
            if q.get("error_kind")
            else ""
        ),
        "",
        "request headers:",
        pretty(q.get("request_headers")),
        "",
        "request body:",
        pretty(q.get("request_body") or ""),
        "",
        "response headers:",
        pretty(q.get("response_headers")),
        "",
        *sse_lines(q.get("response_body"), q.get("body_encoding"), decoded(q.get("sse_times"))),
        "response body:",
        pretty(q.get("response_body") or ""),
    ]
    return [line for chunk in lines for line in str(chunk).split("\n")]


SSE_DATA_SHOWN = 160  # characters of an event's data on its line


def sse_lines(body: str | None, encoding: str | None, times: Any) -> list[str]:
    """An event-stream body as one line per event: its arrival (ms after the request
    started, when recorded), its type and its data; nothing for a body that is no stream.
    An AWS event stream (Bedrock's, stored as base64: it is binary) is read message by
    message, its `:event-type` (or exception type) and payload shown the same way."""
    if not body:
        return []
    if encoding == "base64":
        shown, ended = _aws_events(base64.b64decode(body))
        title = "AWS event-stream messages"
    else:
        events, ended = iter_sse_events(body.encode("utf-8"))
        shown, title = [(e.event, e.data) for e in events], "SSE events"
    if not shown:
        return []
    timed = isinstance(times, list) and len(times) == len(shown)
    lines = [f"{title} ({len(shown)}{'' if ended else ', cut short'}):"]
    for n, (event, data) in enumerate(shown):
        at = f"+{times[n]:>9,.1f} ms" if timed else f"#{n + 1:>5}"
        data = data if len(data) <= SSE_DATA_SHOWN else data[:SSE_DATA_SHOWN] + "…"
        lines.append(f"  {at}  {event:<22} {data}")
    return [*lines, ""]


def _aws_events(raw: bytes) -> tuple[list[tuple[str, str]], bool]:
    """(event type, payload text) of each message of an AWS event stream (none for a body
    that is not one), and whether the body ended on a message's end."""
    if not is_eventstream(None, raw):
        return [], True
    shown, end = [], 0
    for message in messages(raw):
        headers = message.headers or {}
        kind = headers.get(":event-type") or headers.get(":exception-type") or "unreadable"
        shown.append(
            (str(kind), message.payload.decode("utf-8", "replace") or message.problem or "")
        )
        end = message.end
    return shown, end == len(raw)


RUN_COLUMNS = ("run", "cases", "passed", "pass rate", "first graded", "last graded")


def run_cells(run: RunRow) -> tuple[str, ...]:
    rate = f"{run.passed / run.cases:.1%}" if run.cases else ""
    return (
        run.run,
        number(run.cases),
        number(run.passed),
        rate,
        run.first_graded[:19].replace("T", " "),
        run.last_graded[:19].replace("T", " "),
    )


def failure_text(case: FailureRow) -> list[str]:
    """A failing case: each expected call beside the call made, each argument's bucket and
    why (and the judge's reason)."""
    lines = [
        f"case {case.case_id} · exchange {case.exchange_id or '-'} · model {case.model or '?'}"
        f" · {case.label}",
    ]
    if case.reason:
        lines.append(f"reason: {case.reason}")
    calls = case.calls
    if isinstance(calls, str):
        calls = json.loads(calls)
    for call in calls or []:
        expected = call.get("expected_tool") or "(no call expected)"
        actual = call.get("actual_tool") or "(not called)"
        verdict = call.get("label") or "ok"
        lines.append(f"expected {expected}  ·  called {actual}  ·  {verdict}")
        for arg in call.get("args") or []:
            detail = f" — {arg['detail']}" if arg.get("detail") else ""
            judge = f" (judge: {arg['judge_reason']})" if arg.get("judge_reason") else ""
            lines.append(f"  {arg.get('name')}: {arg.get('bucket')}{detail}{judge}")
        lines += [f"  ! {e}" for e in call.get("errors") or []]
    if not calls:
        lines.append(
            f"expected {_tools(case.expected_tools)}  ·  called {_tools(case.called_tools)}"
        )
    return lines


def _tools(value: Any) -> str:
    if isinstance(value, str):
        value = json.loads(value)
    return ", ".join(value) if value else "nothing"


REPLAY_COLUMNS = ("replay run", "candidates", "cells", "completed", "failed", "last finished")
DIFF_COLUMNS = ("candidate", "item", "repeat", "step", "call", "recorded", "replayed", "")


def replay_cells(run: tuple[Any, ...]) -> tuple[str, ...]:
    name, candidates, cells, completed, failed, _, last = run
    return (
        name,
        number(candidates),
        number(cells),
        number(completed),
        number(failed),
        str(last)[:19].replace("T", " "),
    )


def diff_cells(d: dict[str, Any]) -> tuple[str, ...]:
    same = (
        "same"
        if d["same_tool"] and d["same_arguments"]
        else ("tool" if not d["same_tool"] else "args")
    )
    verdict = f"{same} {d['label']}" if d.get("label") else same
    return (
        d["candidate"],
        d["item_id"],
        str(d["repeat"]),
        str(d["step"]),
        str(d["index"]),
        call_text(d["recorded_tool"], d["recorded_arguments"]),
        call_text(d["replayed_tool"], d["replayed_arguments"]),
        verdict,
    )


def calls_json(d: ExchangeDetail) -> str:
    """The turn's tool calls as JSON (name, id, arguments parsed where they parse)."""
    calls = [
        {
            "name": c.name,
            "call_id": c.call_id,
            "arguments": c.arguments if c.parse_error is None else c.arguments_raw,
        }
        for c in d.calls
    ]
    return json.dumps(calls, indent=2, ensure_ascii=False)


# Headers curl sets itself, or that would not match a re-sent body.
_CURL_SKIP = {"host", "content-length", "transfer-encoding", "connection", "accept-encoding"}


def curl_command(d: ExchangeDetail) -> str:
    """The request as a `curl` command. Headers are as stored: secrets already redacted, so
    the command needs the real key put back to run."""
    q = d.request
    port = q.get("port")
    default = (q.get("scheme"), port) in (("https", 443), ("http", 80))
    url = f"{q.get('scheme')}://{q.get('host')}{'' if default else f':{port}'}{q.get('path')}"
    parts = ["curl", "-X", str(q.get("method") or "POST"), shlex.quote(url)]
    headers = q.get("request_headers")
    headers = json.loads(headers) if isinstance(headers, str) else headers or {}
    for name, value in headers.items():
        if name.lower() not in _CURL_SKIP:
            parts += ["-H", shlex.quote(f"{name}: {value}")]
    body = q.get("request_body")
    if body and q.get("body_encoding") in (None, "utf-8", "text"):
        parts += ["--data-raw", shlex.quote(body)]
    return " ".join(parts)


def table_jsonl(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """The table as JSON lines, one object per row keyed by the column names."""
    return "".join(
        json.dumps(dict(zip(columns, row, strict=True)), ensure_ascii=False) + "\n" for row in rows
    )


def table_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue()


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def metrics_line(m: RunMetrics) -> str:
    """A run's headline metrics (the report's definitions), one line."""
    return (
        f"{m.cases} cases, {m.graded} graded · pass {_rate(m.pass_rate)} · selection "
        f"{_rate(m.selection_accuracy)} · hallucinated args {_rate(m.hallucination_rate)} · "
        f"missing {_rate(m.omission_rate)} · format errors {_rate(m.format_error_rate)} · "
        f"over-tooling {_rate(m.over_tooling)} · not offered {_rate(m.nonexistent_rate)}"
    )


def confusion_grid(
    confusion: dict[str, dict[str, int]],
) -> tuple[list[str], list[list[tuple[str, str]]]]:
    """The confusion matrix as (columns, rows of (text, style)): expected tools down,
    called tools across; the diagonal green, other cells red, darker with more calls (at
    most `confusionfold.KEEP` tools a side, the rest added up in one row and column)."""
    from toolproxy.grade.confusionfold import fold_confusion  # not on the first screen's path

    confusion = fold_confusion(confusion)
    called = sorted({got for row in confusion.values() for got in row})
    top = max((n for row in confusion.values() for n in row.values()), default=0)
    rows: list[list[tuple[str, str]]] = []
    for expected in sorted(confusion):
        cells: list[tuple[str, str]] = [(expected, "bold")]
        for got in called:
            n = confusion[expected].get(got, 0)
            if not n:
                cells.append(("·", "dim"))
                continue
            heat = "bold " if top and n * 2 >= top else ""
            cells.append((str(n), f"{heat}{'green' if got == expected else 'red'}"))
        rows.append(cells)
    return ["expected \\ called", *called], rows
