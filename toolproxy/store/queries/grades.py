"""What grading and the report read: observations, latest grades, verdicts, the judge's
cache, sessions' calls, the gallery's transcripts and the cases of a label (which runs
there are, and their counts: `queries.runs`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from toolproxy.store import gradefile
from toolproxy.store.filters import in_ids
from toolproxy.store.queries.runs import grades_of, latest_of, standing_runs
from toolproxy.store.reader import Reader
from toolproxy.store.rows import ExchangeGradeRow, FailureRow, GradedExchange

GRADE_COLUMNS = gradefile.COLUMNS  # the `grades` table's, in its order


class ObservationRows(NamedTuple):
    """Everything `grade.observe` needs of some exchanges, read in one batch."""

    exchanges: list[GradedExchange]
    # exchange_id, index, call_id, name, arguments_raw, arguments (as stored, JSON text: the
    # grader decodes them), parse_error: plain tuples, 100,000 of them for a large run
    calls: list[tuple[str, int, str | None, str | None, str | None, Any, str | None]]
    offered: list[tuple[str, int, str, str]]  # exchange, position, name, schema_hash
    schemas: list[tuple[str, Any]]  # schema_hash, parameters (JSON text)


def observation_rows(r: Reader, exchange_ids: list[str]) -> ObservationRows:
    """Four queries whatever the number of ids (kept once, as a temporary table, for all
    four); each distinct offered schema once, by its hash."""
    where = f"WHERE exchange_id {r.id_table('graded_ids', exchange_ids)}"
    return ObservationRows(
        exchanges=r.typed(
            GradedExchange,
            "SELECT exchange_id, session_id, coalesce(model_returned, model_requested), "
            "finish_reason, assistant_text, parse_status, parse_error, wire_format, "
            "status_code, error_kind, error_message, request_params->'response_format', "
            f"request_params->'text' FROM exchanges {where}",
        ),
        calls=r.rows(
            "SELECT exchange_id, index, call_id, name, arguments_raw, arguments, parse_error "
            f'FROM tool_calls {where} ORDER BY exchange_id, "index"',
        ),
        offered=r.rows(
            f"SELECT exchange_id, position, name, schema_hash FROM tools_offered {where} "
            "ORDER BY exchange_id, position",
        ),
        schemas=r.rows(
            f"SELECT schema_hash, any_value(parameters) FROM tools_offered {where} "
            "GROUP BY schema_hash",
        ),
    )


def schema_verdicts(r: Reader, checker: str) -> list[tuple[str, bool | None, str | None]]:
    """(schema_hash, valid, error) of the metaschema checks made by `checker`."""
    return r.rows(
        "SELECT DISTINCT schema_hash, valid, error FROM schema_checks WHERE checker = ?",
        [checker],
    )


def judge_cache(r: Reader, model: str) -> list[tuple[str, bool | None, float | None, str | None]]:
    """(key, verdict, score, reason) of `model`'s cached verdicts, oldest first (score NULL:
    cached before graded scores)."""
    return r.rows(
        "SELECT key, verdict, score, reason FROM judge_cache WHERE model = ? ORDER BY judged_at",
        [model],
    )


class CaseRow(NamedTuple):
    """A case's latest grade in a run (`GRADE_COLUMNS` values) with its exchange's numbers."""

    grade: tuple[Any, ...]
    recorded: bool
    input_tokens: int | None
    output_tokens: int | None
    ttfb_ms: float | None
    decode_tps: float | None
    finish_reason: str | None
    session_id: str | None
    offered: list[str] | None
    # what pricing reads (toolproxy.grade.cost.call_of)
    cached_input_tokens: int | None = None
    scheme: str | None = None
    host: str | None = None
    port: int | None = None
    path: str | None = None
    latency_ms: float | None = None
    started_at: Any = None
    model: str | None = None  # the model that answered (returned, else requested)


def latest_grades(r: Reader, runs: list[str]) -> list[CaseRow]:
    """Each case's latest grade in each of `runs`, by case id then run, with its exchange's
    usage, timing, offered tool names and what pricing needs (endpoint, duration, start).
    A run whose summary stands for it is read from its file (`store.gradefile`: its JSON
    columns come decoded), the others through DuckDB (their JSON columns as text)."""
    standing, _ = standing_runs(r)
    filed: list[tuple[Any, ...]] = []
    rest = []
    for run in dict.fromkeys(runs):  # each run once, as `IN` reads it
        read = gradefile.read_rows(standing[run][0], run) if run in standing else None
        if read is None:
            rest.append(run)
        else:
            filed += read
    rows = _latest_of_each(_joined(r, rest)) if rest else []
    if filed:
        rows += _with_exchanges(r, filed)
    n = len(GRADE_COLUMNS)
    # the start time (last but one) comes as microseconds, made a UTC datetime here:
    # DuckDB's own conversion (through pytz) cost 0.5 s over 90,969 rows
    return [
        CaseRow._make((row[:n], *row[n:-2], None if row[-2] is None else _utc(row[-2]), row[-1]))
        for row in sorted(rows, key=_case_order)
    ]


# the exchange's columns a CaseRow takes after the grade's (`_with_exchanges` reads them
# alone); `_SESSION_SLOT` stands for the session's column, which the grade's own may override
_SESSION_SLOT = "{session}"
_EXCHANGE_COLUMNS = (
    "e.input_tokens", "e.output_tokens", "e.ttfb_ms", "e.decode_tps", "e.finish_reason",
    _SESSION_SLOT, "o.names", "e.cached_input_tokens", "e.scheme", "e.host", "e.port", "e.path",
    "e.latency_ms", "epoch_us(e.started_at)", "coalesce(e.model_returned, e.model_requested)",
)  # fmt: skip
_EXCHANGE = ", ".join(_EXCHANGE_COLUMNS)
_AT_SESSION = 1 + _EXCHANGE_COLUMNS.index(_SESSION_SLOT)  # in a row of `_with_exchanges`' query
_NAMES = "SELECT exchange_id, list(name ORDER BY position) AS names FROM tools_offered"


def _joined(r: Reader, runs: list[str]) -> list[tuple[Any, ...]]:
    """Every grade of `runs` (re-grades too) with its exchange's columns, through DuckDB."""
    cols = ", ".join(f"g.{c}" for c in GRADE_COLUMNS)
    exchange = _EXCHANGE.format(session="coalesce(g.session_id, e.session_id)")
    return r.rows(
        f"SELECT {cols}, e.exchange_id IS NOT NULL, {exchange} "
        f"FROM {grades_of(r, runs)} g LEFT JOIN exchanges e USING (exchange_id) "
        f"LEFT JOIN ({_NAMES} GROUP BY exchange_id) o USING (exchange_id) "
        f"WHERE {in_ids('g.run', 'runs')}",
        {"runs": runs},
    )


_RUN, _AT, _CASE, _EXCHANGE_ID, _SESSION = (
    GRADE_COLUMNS.index(c) for c in ("run", "graded_at", "case_id", "exchange_id", "session_id")
)


def _with_exchanges(r: Reader, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Grade rows (each its case's latest) with their exchange's columns as `_joined` gives
    them, the exchanges read in one query."""
    ids = list({row[_EXCHANGE_ID] for row in rows if row[_EXCHANGE_ID] is not None})
    where = r.id_table("reported_ids", ids)
    found = r.rows(
        f"SELECT e.exchange_id, {_EXCHANGE.format(session='e.session_id')} FROM exchanges e "
        f"LEFT JOIN ({_NAMES} WHERE exchange_id {where} GROUP BY exchange_id) o "
        f"USING (exchange_id) WHERE e.exchange_id {where}"
    )
    by_id = {x[0]: x for x in found}
    unknown = (None,) * (1 + len(_EXCHANGE_COLUMNS))  # no exchange: its id and columns
    joined = []
    for row in rows:
        x = by_id.get(row[_EXCHANGE_ID], unknown)
        session = row[_SESSION] if row[_SESSION] is not None else x[_AT_SESSION]
        joined.append((*row, x[0] is not None, *x[1:_AT_SESSION], session, *x[_AT_SESSION + 1 :]))
    return joined


def _latest_of_each(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Of each (run, case id), the row graded last (a NULL time oldest): the window in SQL
    made DuckDB hand the rows over in 1.6-3.0 s instead of 0.8-2.1 s (90,818 cases)."""
    latest: dict[tuple[Any, Any], tuple[Any, ...]] = {}
    for row in rows:
        key = (row[_RUN], row[_CASE])
        held = latest.get(key)
        if held is None or (row[_AT] is not None and (held[_AT] is None or row[_AT] > held[_AT])):
            latest[key] = row
    return list(latest.values())


def _case_order(row: tuple[Any, ...]) -> tuple[bool, str, str]:
    """By case id (NULL last), then run."""
    return row[_CASE] is None, row[_CASE] or "", row[_RUN]


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _utc(us: int) -> datetime:
    """The instant `us` microseconds after the Unix epoch, in UTC (exact)."""
    return _EPOCH + timedelta(microseconds=us)


def exchange_grades(
    r: Reader, exchange_ids: list[str], runs: list[str] | None = None
) -> list[ExchangeGradeRow]:
    """The latest grade of each (run, case) whose case is one of these exchanges, in all
    runs or in `runs`, by exchange, run and case."""
    params: dict[str, Any] = {"ids": exchange_ids}
    only, source = "", "grades"
    if runs is not None:
        params["runs"] = runs
        only, source = f"AND {in_ids('run', 'runs')} ", grades_of(r, runs)
    return r.typed(
        ExchangeGradeRow,
        "SELECT exchange_id, run, case_id, passed, label, not_graded, reason, expected_tools, "
        f"called_tools, graded_at FROM {source} WHERE {in_ids('exchange_id', 'ids')} {only}"
        "QUALIFY row_number() OVER (PARTITION BY run, case_id ORDER BY graded_at DESC) = 1 "
        "ORDER BY exchange_id, run, case_id",
        params,
    )


def result_sizes(r: Reader, exchange_ids: list[str]) -> list[tuple[Any, ...]]:
    """Per call of these exchanges: (exchange, call id, result length, the input tokens and
    messages' length of the request that carried the result); NULLs when none did."""
    return r.rows(
        "SELECT c.exchange_id, c.call_id, length(c.result), e.input_tokens, "
        "length(CAST(e.messages AS VARCHAR)) FROM call_results c "
        "LEFT JOIN exchanges e ON e.exchange_id = c.result_exchange_id "
        f'WHERE {in_ids("c.exchange_id", "ids")} ORDER BY c.exchange_id, c."index"',
        {"ids": exchange_ids},
    )


class SessionCallRow(NamedTuple):
    """A session's tool call with the result that answered it."""

    session_id: str
    exchange_id: str
    name: str | None
    call_id: str | None
    parse_error: str | None
    result: str | None
    result_is_error: bool | None


def session_calls(r: Reader, session_ids: list[str]) -> list[SessionCallRow]:
    """Each session's calls in order, each with the result that answered it (`call_results`:
    linked by the conversation, so a reused call id finds its own)."""
    return r.typed(
        SessionCallRow,
        "SELECT c.session_id, c.exchange_id, c.name, c.call_id, c.parse_error, r.result, "
        "r.result_is_error FROM tool_calls c LEFT JOIN call_results r "
        'ON r.exchange_id = c.exchange_id AND r."index" = c."index" '
        f"WHERE {in_ids('c.session_id', 'ids')} "
        "ORDER BY c.session_id, c.started_at, c.exchange_id, c.index",
        {"ids": session_ids},
    )


def transcripts(
    r: Reader, exchange_ids: list[str]
) -> tuple[list[tuple[str, Any, str | None]], list[tuple[str, Any, Any, Any, Any]]]:
    """For the gallery: (exchange, messages, assistant text) rows and (exchange, call id,
    name, raw arguments, answering result) rows in call order."""
    ids = {"ids": exchange_ids}
    messages = r.rows(
        "SELECT exchange_id, messages, assistant_text FROM exchanges "
        f"WHERE {in_ids('exchange_id', 'ids')}",
        ids,
    )
    calls = r.rows(
        "SELECT c.exchange_id, c.call_id, c.name, c.arguments_raw, r.result "
        "FROM tool_calls c LEFT JOIN call_results r "
        'ON r.exchange_id = c.exchange_id AND r."index" = c."index" '
        f"WHERE {in_ids('c.exchange_id', 'ids')} ORDER BY c.exchange_id, c.index",
        ids,
    )
    return messages, calls


def cases_with_label(r: Reader, run: str, label: str, limit: int = 1_000) -> list[FailureRow]:
    """The cases whose latest grade in `run` earned `label`, by case id (up to `limit`): of
    a run whose summary stands for it, the lines of its file that hold the label, parsed
    (`gradefile.label_needle`; its JSON columns decoded), while they are as many as its
    summary counts; else through DuckDB (its JSON columns as text)."""
    standing, _ = standing_runs(r)
    if run in standing and label not in ("passed", "not_graded"):
        path, summary = standing[run]
        found = gradefile.read_rows(path, run, gradefile.label_needle(label))
        if found is not None:
            hits = [row for row in found if row[_LABEL] == label]
            if len(hits) == summary["outcomes"].get(label, 0):
                return [FailureRow._make(row[i] for i in _FAILURE) for row in
                        sorted(hits, key=_case_order)[:limit]]  # fmt: skip
    return r.typed(
        FailureRow,
        "SELECT case_id, exchange_id, session_id, model, label, reason, calls, "
        f"expected_tools, called_tools FROM ({latest_of(r, run)}) WHERE label = $label "
        "ORDER BY case_id LIMIT $limit",
        {"run": run, "label": label, "limit": limit},
    )


_LABEL = GRADE_COLUMNS.index("label")
_FAILURE = [GRADE_COLUMNS.index(c) for c in FailureRow._fields]  # a FailureRow's columns
