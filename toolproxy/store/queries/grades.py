"""What grading and the report read: observations, runs, latest grades, verdicts, the
judge's cache, sessions' calls and the gallery's transcripts."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from toolproxy.store import gradewrites
from toolproxy.store.files import segment_folders
from toolproxy.store.filters import in_ids, latest_grades_sql
from toolproxy.store.reader import Reader
from toolproxy.store.rows import ExchangeGradeRow, FailureRow, GradedExchange, RunRow
from toolproxy.store.segments import SUFFIX, edge_lines
from toolproxy.store.tables import TABLES

GRADE_COLUMNS = list(TABLES["grades"])


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


def grade_count(r: Reader, run: str) -> int:
    """How many grades run `run` holds (0: the name is free)."""
    source = grades_of(r, [run])
    return int(r.scalar(f"SELECT count(*) FROM {source} WHERE run = ?", [run]) or 0)


def held_runs(r: Reader) -> set[str]:
    """The name of every run the capture holds grades of, without reading every grade: the
    run each grades segment file's first and last lines name (`segment_runs`), and the
    runs in the rest of the `grades` view's rows (its cache, its pending Parquet files and
    the files `segment_runs` says to read whole), by their `run` column. Each name
    `grade_count` finds is here: a re-grade into a capture of many runs checks its name
    without reading them."""
    named, whole = segment_runs(r.root)
    return set(named.values()) | _runs_in(r, r.rows_of("grades", whole))


def segment_runs(root: Path) -> tuple[dict[Path, str], list[Path]]:
    """Each grades segment file with the run its first and last lines name, and the files
    that must be read whole: whose two lines name different runs or do not parse. Every
    writer puts one run in a file (`grade.runner.write_run`, `replay.grading.write_grades`),
    so a file's edge lines name its run. A file compacted meanwhile is left out: its rows
    are in the Parquet files."""
    named: dict[Path, str] = {}
    whole: list[Path] = []
    for folder in segment_folders(root):
        for path in folder.glob(f"grades.*{SUFFIX}"):  # what the view's glob matches
            try:
                runs = {_run_of(line) for line in edge_lines(path)}
            except FileNotFoundError:
                continue
            run = runs.pop() if len(runs) == 1 else None
            if run is not None:
                named[path] = run
            else:
                whole.append(path)
    return named, whole


def grades_of(r: Reader, runs: Collection[str]) -> str:
    """A subquery of the `grades` view's rows that reads, of its segment files, only those
    that may hold `runs` (`segment_runs`): a report of one run in a capture of ten parses
    one run's grades, not ten. Filter it by run as you would the view. The files are named
    in the query, so each must still be there when it runs: `toolproxy compact` deletes
    segment files only once no reader is open, and a background round (`autocompact`)
    leaves the files it compacted until its next round (`defer`)."""
    named, whole = segment_runs(r.root)
    wanted = set(runs)
    return r.rows_of("grades", [*(f for f, run in named.items() if run in wanted), *whole])


def _runs_in(r: Reader, source: str) -> set[str]:
    """The distinct runs a table or table function names."""
    return {row[0] for row in r.rows(f"SELECT DISTINCT run FROM {source}") if row[0] is not None}


def _run_of(line: bytes) -> str | None:
    """The run a grades segment line names (None: not a JSON object holding one)."""
    try:
        row = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    run = row.get("run") if isinstance(row, dict) else None
    return run if isinstance(run, str) else None


def runs(r: Reader) -> list[RunRow]:
    """Every grading run, oldest first, with its latest-grade counts: a run whose grades are
    all in one file is counted by the summary written with them (`store.gradewrites`) while
    it stands for them, the others from their grades (reading only their files)."""
    standing, rest = _standing(r)
    found = [
        RunRow(run, s["cases"], s["passed"], s["first_graded"], s["last_graded"])
        for run, s in standing.items()
    ]
    if rest:
        found += r.typed(
            RunRow,
            "SELECT run, count(*), count(*) FILTER (WHERE passed), min(graded_at), "
            f"max(graded_at) FROM (SELECT * FROM {grades_of(r, rest)} "
            f"WHERE {in_ids('run', 'runs')} QUALIFY row_number() OVER "
            "(PARTITION BY run, case_id ORDER BY graded_at DESC) = 1) GROUP BY run",
            {"runs": sorted(rest)},
        )
    return sorted(found, key=lambda row: _oldest_first(row.first_graded, row.run))


def run_names(r: Reader) -> list[str]:
    """Every run's name, oldest first (by the first `graded_at` of any of its grades)."""
    standing, rest = _standing(r)
    firsts = [(s["first_graded"], run) for run, s in standing.items()]
    if rest:
        firsts += r.rows(
            f"SELECT min(graded_at), run FROM {grades_of(r, rest)} "
            f"WHERE {in_ids('run', 'runs')} GROUP BY run",
            {"runs": sorted(rest)},
        )
    return [run for _, run in sorted(firsts, key=lambda f: _oldest_first(*f))]


def _oldest_first(first: str | None, run: str) -> tuple[bool, str, str]:
    """SQL's `ORDER BY min(graded_at), run` (NULLs last) as a sort key."""
    return first is None, first or "", run


def _standing(r: Reader) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """Each run's summary that stands for it (`gradewrites.stands_for`: the run's grades in
    one segment file and nowhere else), and the names of the other runs the capture holds."""
    named, whole = segment_runs(r.root)
    elsewhere = _runs_in(r, r.rows_of("grades", whole))  # cache, Parquet, files of many runs
    files: dict[str, list[Path]] = {}
    for path, run in named.items():
        files.setdefault(run, []).append(path)
    standing: dict[str, dict[str, Any]] = {}
    for run, paths in files.items():
        if run not in elsewhere and len(paths) == 1:
            if (summary := gradewrites.standing(paths[0], run)) is not None:
                standing[run] = summary
    return standing, (set(files) | elsewhere) - set(standing)


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
    usage, timing, offered tool names and what pricing needs (endpoint, duration, start)."""
    cols = ", ".join(f"g.{c}" for c in GRADE_COLUMNS)
    rows = r.rows(
        f"SELECT {cols}, e.exchange_id IS NOT NULL, e.input_tokens, e.output_tokens, "
        "e.ttfb_ms, e.decode_tps, e.finish_reason, coalesce(g.session_id, e.session_id), "
        "o.names, e.cached_input_tokens, e.scheme, e.host, e.port, e.path, e.latency_ms, "
        "epoch_us(e.started_at), coalesce(e.model_returned, e.model_requested) "
        f"FROM {grades_of(r, runs)} g LEFT JOIN exchanges e USING (exchange_id) "
        "LEFT JOIN (SELECT exchange_id, list(name ORDER BY position) AS names "
        "FROM tools_offered GROUP BY exchange_id) o USING (exchange_id) "
        f"WHERE {in_ids('g.run', 'runs')}",
        {"runs": runs},
    )
    n = len(GRADE_COLUMNS)
    # the start time (last but one) comes as microseconds, made a UTC datetime here:
    # DuckDB's own conversion (through pytz) cost 0.5 s over 90,969 rows
    return [
        CaseRow._make((row[:n], *row[n:-2], None if row[-2] is None else _utc(row[-2]), row[-1]))
        for row in _latest_by_case(rows)
    ]


_RUN, _AT, _CASE = (GRADE_COLUMNS.index(c) for c in ("run", "graded_at", "case_id"))


def _latest_by_case(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Of each (run, case id), the row graded last (a NULL time oldest), by case id (NULL
    last), then run: the window and ORDER BY in SQL made DuckDB hand the rows over in 1.6-3.0 s
    instead of 0.8-2.1 s (90,818 cases)."""
    latest: dict[tuple[Any, Any], tuple[Any, ...]] = {}
    for row in rows:
        key = (row[_RUN], row[_CASE])
        held = latest.get(key)
        if held is None or (row[_AT] is not None and (held[_AT] is None or row[_AT] > held[_AT])):
            latest[key] = row
    return sorted(latest.values(), key=_case_order)


def _case_order(row: tuple[Any, ...]) -> tuple[bool, str, str]:
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


def label_counts(r: Reader, run: str) -> list[tuple[str, int]]:
    """(label, cases) over each case's latest grade in `run`, most frequent first
    (`passed` and `not_graded` count as labels of their own): by the run's summary while it
    stands for the run (`gradewrites`), else from its grades."""
    standing, _ = _standing(r)
    if run in standing:
        counted = standing[run]["outcomes"].items()
        return sorted(((str(k), int(n)) for k, n in counted), key=lambda kn: (-kn[1], kn[0]))
    return r.rows(
        "SELECT CASE WHEN passed THEN 'passed' WHEN label IS NULL THEN 'not_graded' "
        f"ELSE label END AS l, count(*) FROM ({_latest_of(r, run)}) GROUP BY l "
        "ORDER BY 2 DESC, 1",
        {"run": run},
    )


def cases_with_label(r: Reader, run: str, label: str, limit: int = 1_000) -> list[FailureRow]:
    """The cases whose latest grade in `run` earned `label`, by case id (up to `limit`)."""
    return r.typed(
        FailureRow,
        "SELECT case_id, exchange_id, session_id, model, label, reason, calls, "
        f"expected_tools, called_tools FROM ({_latest_of(r, run)}) WHERE label = $label "
        "ORDER BY case_id LIMIT $limit",
        {"run": run, "label": label, "limit": limit},
    )


def _latest_of(r: Reader, run: str) -> str:
    """The latest grade of each case in `run` (parameter `$run`), reading only its files."""
    return latest_grades_sql("run", grades_of(r, [run]))
