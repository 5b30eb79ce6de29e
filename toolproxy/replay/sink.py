"""Replay results into the capture, as rows shaped exactly like captured traffic.

`StoreSink` is the engine's `Sink`: `write_turn` turns one candidate turn into an
`exchanges` row (with `tools_offered`, `tool_calls`, `tool_results`) and keeps it with its
cell; `write_cell` queues the cell's rows, its `replay_diffs` and, last, its
`replay_cells` row. A background thread writes what is queued as one `SegmentWriter`
write (fsynced; `replay_cells` is renamed into place after everything else), so a cell
is in the store whole, with its turns, or not at all, and a killed run re-sends exactly
the cells without a `replay_cells` row. Under load several cells share a write (group
commit): a write per cell would cost ~2 ms of fsync each on the event loop.

Rows: `proxy_id = "replay:<run>"`, `session_id = "replay:<run>:<candidate>:<item>:<repeat>"`,
`session_source = "new"`, `wire_format = "openai_chat"`, the request as sent (parsed by the
same Chat parser the proxy uses), the reply's text, finish reason, usage, `ttfb_ms` (time
to the first content delta, or to a whole reply's first body byte) and `decode_tps`.
Failures carry `status_code`, `error_kind` and `error_message`; `parse_status` is `ok`,
`partial` (cut after output started) or `error` (nothing usable). Every row is scrubbed
of the candidates' keys.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from toolproxy.capture.redact import Redactor
from toolproxy.grade.checker import ServerTool
from toolproxy.records import MAX_BODY, Exchange, ParseStatus
from toolproxy.replay.compare import diff_cell, parsed_calls
from toolproxy.replay.model import Candidate, CellResult, ReplayItem, Step, TurnRecord
from toolproxy.replay.reply import build_body
from toolproxy.store.segments import SegmentWriter, child_rows
from toolproxy.wire.body import body_text, one_encoding
from toolproxy.wire.openai_chat import parse_request

Rows = dict[str, list[dict[str, Any]]]
FLUSH_INTERVAL_S = 0.02  # how long a finished cell may wait to share its write
_STATUS = re.compile(r"\b(?:HTTP|status)\s*(\d{3})\b", re.IGNORECASE)
# error kinds (reply.ReplyErrorKind) after which output may have begun but did not complete
_PARTIAL = frozenset({"cut_stream", "timeout", "connection"})
# the status an error kind implies when the reply did not say
_STATUS_OF = {"rate_limited": 429, "cut_stream": 200, "bad_response": 200}


def proxy_id(run: str) -> str:
    """The `proxy_id` of a replay run's exchanges."""
    return f"replay:{run}"


def session_id(run: str, candidate: str, item_id: str, repeat: int) -> str:
    """The session of one cell: every turn of the cell shares it."""
    return f"replay:{run}:{candidate}:{item_id}:{repeat}"


def writer_id(run: str) -> str:
    """A segment-folder name for a run (the writer adds uniqueness per process)."""
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", run)[:80] or "run"
    return f"replay-{slug}"


class StoreSink:
    """Writes a replay run into a capture (see module doc). Call `close()` at the end."""

    def __init__(
        self,
        capture: Path | str,
        run: str,
        writer_name: str,
        *,
        candidates: Iterable[Candidate] = (),
        items: Iterable[ReplayItem] = (),
        secrets: Iterable[str] = (),
        server_tools: Sequence[ServerTool] = (),
        stream: Literal["as_recorded", "always", "never"] = "as_recorded",
        flush_interval_s: float = FLUSH_INTERVAL_S,
    ) -> None:
        """`writer_name` must be unique among live writers of the capture (one folder per
        process); `candidates` give models and endpoints for rows that name a candidate;
        `items` let `write_cell` find the item of a cell for its diffs; `secrets` are
        scrubbed from every row (the candidates' keys); `stream` is the config's."""
        self.capture = Path(capture)
        self.run = run
        self._writer = SegmentWriter(capture, writer_name)
        self._candidates = {c.name: c for c in candidates}
        self._items = {i.item_id: i for i in items}
        self._redactor = Redactor()
        for secret in secrets:
            if secret:
                self._redactor.found[secret] = None
        self._server_tools = tuple(server_tools)
        self._stream = None if stream == "as_recorded" else stream == "always"
        self._interval = flush_interval_s
        self._open: dict[tuple[str, str, int], Rows] = {}  # turns of unfinished cells
        self._queue: list[Rows] = []
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self._error: BaseException | None = None
        self.cells_written = 0
        self._thread = threading.Thread(target=self._loop, name="replay-sink", daemon=True)
        self._thread.start()

    def scrub(self, text: str | None) -> str | None:
        """`text` without the candidates' keys (what every stored row gets)."""
        return self._redactor.scrub(text)

    def write_turn(
        self,
        run: str,
        candidate: Candidate | str,
        item: ReplayItem,
        repeat: int,
        step_index: int,
        step: Step,
        turn: TurnRecord,
        request_messages: Sequence[Mapping[str, Any]],
        reply: Any = None,
    ) -> None:
        """Keep one turn's rows with its cell until the cell is written (`reply`: the
        `CandidateReply` it came from, when the engine has it; see `turn_rows`)."""
        cand = self._candidate(candidate)
        self._items.setdefault(item.item_id, item)
        rows = turn_rows(run, cand, item, repeat, step, turn, request_messages, self._stream, reply)
        key = (cand.name, item.item_id, repeat)
        with self._lock:
            cell = self._open.setdefault(key, {})
            for table, found in rows.items():
                cell.setdefault(table, []).extend(found)

    def write_cell(self, result: CellResult) -> None:
        """Queue a finished cell with its turns and diffs; written within the flush interval."""
        item = self._items.get(result.item_id)
        diffs = diff_cell(item, result, self._server_tools) if item is not None else []
        with self._lock:
            self._raise()
            rows = self._open.pop((result.candidate, result.item_id, result.repeat), {})
            rows["replay_diffs"] = [d.model_dump(mode="json") for d in diffs]
            rows["replay_cells"] = [result.model_dump(mode="json")]
            self._queue.append(rows)
            self._wake.notify()

    def flush(self) -> None:
        """Write everything queued now (blocking)."""
        with self._lock:
            batch, self._queue = self._queue, []
        self._write(batch)
        self._raise()

    def close(self) -> None:
        """Write what is queued and stop the writer thread. Unfinished cells are dropped:
        they are not done, so the next run re-sends them."""
        with self._lock:
            self._closed = True
            self._wake.notify()
        self._thread.join()
        self.flush()

    def __enter__(self) -> StoreSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _candidate(self, candidate: Candidate | str) -> Candidate:
        if isinstance(candidate, Candidate):
            return candidate
        found = self._candidates.get(candidate)
        return found or Candidate(name=candidate, base_url="http://unknown/v1", model=candidate)

    def _loop(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
            # let cells that finish meanwhile share this write
            threading.Event().wait(self._interval)
            with self._lock:
                batch, self._queue = self._queue, []
            try:
                self._write(batch)
            except BaseException as exc:  # noqa: BLE001 - surfaced to the caller's thread
                with self._lock:
                    self._error = exc
                return

    def _write(self, batch: list[Rows]) -> None:
        if not batch:
            return
        merged: Rows = {}
        for rows in batch:
            for table, found in rows.items():
                merged.setdefault(table, []).extend(found)
        if self._redactor.mentions_secret(merged):
            merged = {t: [self._redactor.scrub_value(r) for r in rs] for t, rs in merged.items()}
        self._writer.write(merged)
        self.cells_written += len(merged.get("replay_cells", []))

    def _raise(self) -> None:
        if self._error is not None:
            raise RuntimeError(f"writing replay results failed: {self._error}") from self._error


def turn_rows(
    run: str,
    candidate: Candidate,
    item: ReplayItem,
    repeat: int,
    step: Step,
    turn: TurnRecord,
    request_messages: Sequence[Mapping[str, Any]],
    stream: bool | None = None,
    reply: Any = None,
) -> Rows:
    """The store rows of one candidate turn, as the proxy would have recorded it. Pure.

    `reply` (`CandidateReply`, optional) adds what a TurnRecord does not hold: the body
    sent (`request`), the body received, HTTP `status`, the `model` that answered,
    `latency_ms`, `stream`. Bodies are kept as captured ones are: UTF-8 text or base64, cut
    at `records.MAX_BODY`, secrets scrubbed when the rows are written.
    Without it the body is rebuilt as `reply.build_body` builds it, and `stream` says whether
    it was streamed (None: as the step was recorded).
    """
    streamed = getattr(reply, "stream", None)
    if streamed is None:
        streamed = step.stream if stream is None else stream
    body: dict[str, Any] = dict(getattr(reply, "request", None) or {}) or build_body(
        candidate, [dict(m) for m in request_messages], step.tools, step.params, streamed
    )
    body["stream"] = bool(streamed)
    request = parse_request(body)
    sent = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
    read = getattr(reply, "response_body", None)
    received = read() if callable(read) else b""
    sent_text, received_text, encoding = one_encoding(
        body_text(sent[:MAX_BODY]), body_text(received[:MAX_BODY])
    )
    status, parse_status = _status(turn, getattr(reply, "status", None))
    latency = getattr(reply, "latency_ms", None)
    ended = datetime.now(UTC)
    started = ended - timedelta(milliseconds=latency or 0.0)
    target = candidate.target()
    session = session_id(run, candidate.name, item.item_id, repeat)
    exchange = Exchange(
        exchange_id=turn.exchange_id,
        proxy_id=proxy_id(run),
        session_id=session,
        session_source="new",
        started_at=started,
        ended_at=ended,
        ttfb_ms=turn.ttft_ms,
        latency_ms=latency,
        method="POST",
        scheme=target.scheme,
        host=target.host,
        port=target.port,
        path=target.path,
        wire_format="openai_chat",
        streamed=bool(streamed),
        status_code=status,
        error_kind=turn.error_kind,
        error_message=turn.error,
        parse_status=parse_status,
        parse_error=turn.error if parse_status != "ok" else None,
        model_requested=candidate.model,
        model_returned=getattr(reply, "model", None),
        request_params=request.params,
        messages=request.messages,
        assistant_text=turn.text,
        finish_reason=turn.finish_reason,
        input_tokens=turn.input_tokens,
        output_tokens=turn.output_tokens,
        total_tokens=_sum(turn.input_tokens, turn.output_tokens),
        decode_tps=turn.tps,
        request_body=sent_text,
        response_body=received_text,
        body_encoding=encoding,  # type: ignore[arg-type]  # "utf-8" or "base64"
        request_bytes=len(sent),
        response_bytes=len(received),
        truncated=max(len(sent), len(received)) > MAX_BODY,
    )
    return {
        "exchanges": [exchange.model_dump(mode="json")],
        "tools_offered": child_rows(exchange, request.tools),
        "tool_calls": child_rows(exchange, parsed_calls(turn)),
        "tool_results": child_rows(exchange, request.tool_results),
    }


def _status(turn: TurnRecord, given: int | None = None) -> tuple[int | None, ParseStatus]:
    """(HTTP status, parse_status) of a turn, from the reply's status or the error text."""
    kind = turn.error_kind
    if kind is None:
        return (given or 200), "ok"
    found = _STATUS.search(turn.error or "")
    status = given or (int(found.group(1)) if found else None)
    if status is None and kind in _STATUS_OF:
        status = _STATUS_OF[kind]
    if status is not None and status >= 400:
        return status, "ok"  # an error answer, parsed as one (like the proxy's http_4xx/5xx)
    if kind in _PARTIAL and (turn.calls or turn.text):
        return status or 200, "partial"  # cut after the model began: graded as truncation
    return status, "error"  # no usable reply


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)
