"""`toolproxy report`: metrics of graded runs as terminal tables, CSV, JSON and Markdown.

Reads the latest grades (with their exchanges' usage and tools) through the store's read
API (`toolproxy.store.queries.grades`); the numbers come from the pure
`metrics`, `vendor` and `gate` modules. A run graded again under the same name keeps, per
case, its latest `graded_at`. Outputs with `--out DIR`:

* report.csv: one row per run x metric (`run, baseline, section, metric, value`;
  sections `run`, `label`, `vendor`, `cost` (dollars), `family` (`<tag>.pass_rate`, ...);
  empty value = n/a);
* report.json: everything (`Report`);
* report.md: the tables, then the failure-transcript gallery: per label, up to
  GALLERY_LIMIT cases per run that earned it, each with the user's last message, the
  expected and actual calls, the per-argument buckets and the errors.

Exit code: 1 when a gate failed, 0 otherwise; 2 for usage errors (unknown run, bad
threshold).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from toolproxy.errors import UserError
from toolproxy.grade import gate
from toolproxy.grade.confusionfold import shown_confusion
from toolproxy.grade.cost import ResultSize, RunCost, call_of, extra_calls, run_costs
from toolproxy.grade.families import FamilyScore, family_scores, matrix_rows
from toolproxy.grade.gallery import Transcript, transcript_of
from toolproxy.grade.labels import PRECEDENCE
from toolproxy.grade.metrics import (
    CaseRecord,
    RunMetrics,
    SessionCall,
    compute_run,
    grade_of,
    observed_of,
    tags_of,
    tool_values,
)
from toolproxy.grade.prices import Pricer
from toolproxy.grade.rows import GradeRow
from toolproxy.grade.sections import Table, cost_tables, lost_in_text, na, verdict_table
from toolproxy.grade.vendor import IRF_METRICS, VendorMetrics, compare_runs
from toolproxy.grade.verdict import MetricVerdict, verdicts

if TYPE_CHECKING:
    from toolproxy.store.queries.grades import CaseRow

GALLERY_LIMIT = 10
RUN_ROWS = (
    "cases", "observed", "graded", "not_graded", "passed", "pass_rate", "selection_accuracy",
    "graded_args", "hallucination_rate", "omission_rate", "format_error_rate",
    "judged_args", "judge_score",
    "extra_calls", "over_tooling", "calls_checked", "nonexistent_calls", "nonexistent_rate",
    "retry_chains", "retries", "retries_per_case", "recovery_rate",
)  # fmt: skip
COST_ROWS = (
    "priced_cases", "unpriced_cases", "cost_total", "cost_per_case", "cost_per_passed",
    "cost_delta", "over_tooling_tokens", "over_tooling_cost",
)  # fmt: skip
FAMILY_ROWS = ("cases", "graded", "passed", "pass_rate")
VENDOR_ROWS = (
    "trigger_precision", "trigger_recall", "trigger_f1", "success_rate", "calls",
    "schema_accuracy", "avg_tokens", "avg_ttft_ms", "tps", "irf_score",
)  # fmt: skip


class Report(BaseModel):
    """Everything `toolproxy report` computed."""

    runs: list[str] = Field(description="reported runs, in order")
    baseline: str | None = Field(description="the baseline run, if any")
    metrics: dict[str, RunMetrics] = Field(description="per-run metrics")
    vendor: dict[str, VendorMetrics] = Field(description="vendor metrics and IRF")
    gates: list[gate.GateResult] = Field(description="every gate evaluated")
    families: dict[str, dict[str, FamilyScore]] = Field(
        default_factory=dict, description="per run, per case tag (task family): pass rates"
    )
    gallery: dict[str, list[Transcript]] = Field(
        default_factory=dict, description="label -> failing cases that earned it"
    )
    costs: dict[str, RunCost] = Field(
        default_factory=dict, description="per run: cost in dollars (toolproxy.grade.cost)"
    )
    prices: str | None = Field(default=None, description="where the prices came from")
    verdicts: list[MetricVerdict] = Field(
        default_factory=list, description="with a baseline: each run's bootstrap verdicts"
    )


# --- reading the store -----------------------------------------------------------------


def list_runs(capture: Path) -> list[str]:
    """Every run in the capture, oldest first."""
    from toolproxy import store
    from toolproxy.store.queries.runs import run_names

    with store.reading(capture) as r:
        return run_names(r)


def held_run_names(capture: Path) -> set[str]:
    """Every run in the capture, in no order, without reading their grades."""
    from toolproxy import store
    from toolproxy.store.queries.runs import held_runs

    with store.reading(capture) as r:
        return held_runs(r)


def select_runs(capture: Path, wanted: Sequence[str], baseline: str | None) -> list[str]:
    """The runs to report: `wanted` (else all, oldest first), plus the baseline; unknown
    ones are errors. Named runs are checked without reading any run's grades."""
    asked = list(dict.fromkeys([*wanted, *([baseline] if baseline else [])]))
    every = [] if wanted else list_runs(capture)
    known = held_run_names(capture) if wanted else set(every)
    if not known:
        raise UserError(f"no graded runs in {capture}; run `toolproxy grade` first")
    if missing := [n for n in asked if n not in known]:
        runs = ", ".join(every or list_runs(capture))  # oldest first, as without --run
        raise UserError(f"unknown run(s) {', '.join(missing)}; runs: {runs}")
    return asked if wanted else every


def load_cases(capture: Path, runs: Sequence[str]) -> dict[str, list[CaseRecord]]:
    """Each run's cases with their exchange's usage, timing and offered tool names."""
    from toolproxy import store
    from toolproxy.store.queries.grades import latest_grades

    with store.reading(capture) as r:
        return case_records(latest_grades(r, list(runs)), runs)


def case_records(rows: Sequence[CaseRow], runs: Sequence[str]) -> dict[str, list[CaseRecord]]:
    """`load_cases` of the rows `latest_grades` read (pure)."""
    from toolproxy.store.queries.grades import GRADE_COLUMNS

    out: dict[str, list[CaseRecord]] = {r: [] for r in runs}
    for row in rows:
        # a wrongly typed value reads as NULL: such a field takes its default, and a
        # NULL `passed` is never counted as passed
        fields = {k: v for k, v in zip(GRADE_COLUMNS, row.grade, strict=True) if v is not None}
        if "case_id" not in fields:  # an unreadable row (hand-edited segment line)
            continue
        fields |= {"passed": bool(fields.get("passed")), "graded_at": fields.get("graded_at", "")}
        fields["session_id"] = row.session_id
        recorded, tin, tout = row.recorded, row.input_tokens, row.output_tokens
        stored = GradeRow(**fields)  # every key a column of it
        grade = grade_of(stored)
        out[fields["run"]].append(
            CaseRecord(
                run=fields["run"],
                grade=grade,
                source=stored.source,
                observed=observed_of(stored),
                offered=(list(row.offered or []) if recorded else None),
                input_tokens=tin,
                output_tokens=tout,
                ttfb_ms=row.ttfb_ms,
                decode_tps=row.decode_tps,
                finish_reason=row.finish_reason,
                tags=tags_of(stored),
                call=call_of(
                    row.model or stored.model,
                    (row.scheme, row.host, row.port, row.path),
                    (tin, tout, row.cached_input_tokens),
                    row.latency_ms,
                    row.started_at,
                )
                if recorded
                else None,
            )
        )
    return out


def load_sessions(capture: Path, session_ids: Sequence[str]) -> dict[str, list[SessionCall]]:
    """Each session's tool calls in order, each with the result that answered it (the
    `call_results` view: linked by the conversation, so a reused call id finds its own)."""
    from toolproxy import store

    if not session_ids:
        return {}
    from toolproxy.store.queries.grades import session_calls

    with store.reading(capture) as r:
        return session_records(session_calls(r, list(session_ids)))


def session_records(rows: Sequence[tuple[Any, ...]]) -> dict[str, list[SessionCall]]:
    """`load_sessions` of the rows `session_calls` read (pure)."""
    out: dict[str, list[SessionCall]] = defaultdict(list)
    for sid, xid, name, call_id, perr, content, is_error in rows:
        out[sid].append(
            SessionCall(
                session_id=sid,
                exchange_id=xid,
                name=name,
                call_id=call_id,
                parse_error=perr,
                result=content,
                result_is_error=is_error,
            )
        )
    return dict(out)


def load_result_sizes(
    capture: Path, cases: dict[str, list[CaseRecord]]
) -> dict[tuple[str, str | None], ResultSize]:
    """The results of over-tooled cases' calls, for what over-tooling cost."""
    from toolproxy import store
    from toolproxy.grade.cost import sizes_by_call
    from toolproxy.store.queries.grades import result_sizes

    over = [c for rs in cases.values() for c in rs if c.grade.exchange_id and extra_calls(c)]
    ids = sorted({c.grade.exchange_id for c in over if c.grade.exchange_id})
    if not ids:
        return {}
    with store.reading(capture) as r:
        return sizes_by_call([ResultSize(*row) for row in result_sizes(r, ids)])


def load_gallery(
    capture: Path, cases: dict[str, list[CaseRecord]], limit: int = GALLERY_LIMIT
) -> dict[str, list[Transcript]]:
    """Per label, up to `limit` failing cases per run with their transcripts."""
    from toolproxy import store

    picked: list[CaseRecord] = []
    for records in cases.values():
        seen: dict[str, int] = defaultdict(int)
        for c in records:
            if c.grade.label and seen[c.grade.label] < limit:
                seen[c.grade.label] += 1
                picked.append(c)
    ids = sorted({c.grade.exchange_id for c in picked if c.grade.exchange_id})
    messages: dict[str, tuple[Any, Any]] = {}
    calls: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    if ids:
        from toolproxy.store.queries.grades import transcripts

        with store.reading(capture) as r:
            found, rows = transcripts(r, ids)
        messages = {x: (json.loads(m) if m else None, text) for x, m, text in found}
        for x, *rest in rows:
            calls[x].append(tuple(rest))
    out: dict[str, list[Transcript]] = {}
    for label in PRECEDENCE:
        mine = [c for c in picked if c.grade.label == label]
        if mine:
            out[label] = [
                transcript_of(
                    c.run,
                    c.grade,
                    *messages.get(c.grade.exchange_id or "", (None, None)),
                    calls.get(c.grade.exchange_id or "", []),
                )
                for c in mine
            ]
    return out


# --- computing --------------------------------------------------------------------------


def build_report(
    cases: dict[str, list[CaseRecord]],
    sessions: dict[str, list[SessionCall]],
    baseline: str | None = None,
    thresholds: Sequence[gate.Threshold] = (),
    fail_on_regression: bool = False,
    pricer: Pricer | None = None,
    sizes: Mapping[tuple[str, str | None], ResultSize] | None = None,
) -> Report:
    """Per-run, vendor and cost metrics plus the gates, for runs in `cases`' order
    (prices from `pricer`, else genai-prices' database alone)."""
    per_run: dict[str, RunMetrics] = {}
    for run, records in cases.items():
        ids = {c.grade.session_id for c in records if c.grade.session_id}
        per_run[run] = compute_run(run, records, [sessions[s] for s in ids if s in sessions])
    vendor = {v.run: v for v in compare_runs(cases, baseline)}
    pricer = pricer or Pricer()
    costs = run_costs(cases, pricer, baseline, sizes)
    values = {
        run: per_run[run].values() | vendor[run].values() | costs[run].values() for run in cases
    }
    per_tool = None
    if any(t.tool or t.each_tool for t in thresholds):
        per_tool = {run: tool_values(records, sessions) for run, records in cases.items()}
    return Report(
        runs=list(cases),
        baseline=baseline,
        metrics=per_run,
        vendor=vendor,
        gates=gate.evaluate(values, thresholds, baseline, fail_on_regression, per_tool),
        families={run: family_scores(records) for run, records in cases.items()},
        costs=costs,
        prices=pricer.describe(),
        verdicts=_verdicts(cases, baseline, thresholds, costs),
    )


def _verdicts(
    cases: dict[str, list[CaseRecord]],
    baseline: str | None,
    thresholds: Sequence[gate.Threshold],
    costs: Mapping[str, RunCost],
) -> list[MetricVerdict]:
    """With a baseline: the bootstrap verdicts on the gated metrics (those the thresholds
    name, else the default regression set), plus cost per case when anything is priced."""
    if baseline is None or baseline not in cases:
        return []
    named = [t.metric for t in thresholds if not (t.tool or t.each_tool)]
    metrics = list(dict.fromkeys([*(named or gate.DEFAULT_REGRESSION), "cost_per_case"]))
    return verdicts(cases, baseline, metrics, {run: c.case_costs for run, c in costs.items()})


# --- rendering --------------------------------------------------------------------------


def run_heads(report: Report) -> list[str]:
    return [f"{r}*" if r == report.baseline else r for r in report.runs]


def build_tables(report: Report) -> list[Table]:
    """The report's sections as tables (runs as columns; the baseline marked `*`)."""
    from toolproxy.util.table import cell

    heads, runs = run_heads(report), report.runs
    m, v = report.metrics, report.vendor
    tables = [
        Table(
            title="Per-run metrics",
            columns=["metric", *heads],
            rows=[[k, *(na(getattr(m[r], k)) for r in runs)] for k in RUN_ROWS],
        ),
        Table(
            title="Failing cases per label",
            columns=["label", *heads],
            rows=[[k, *(m[r].label_counts[k] for r in runs)] for k in PRECEDENCE],
        ),
    ]
    vendor_rows = []
    for k in VENDOR_ROWS:
        cells = []
        for r in runs:
            val, rank = getattr(v[r], k), v[r].ranks.get(k)
            shown = "n/a" if val is None else cell(val)
            cells.append(f"{shown} (#{rank})" if k in IRF_METRICS and rank else shown)
        vendor_rows.append([k, *cells])
    against = f"trigger against {report.baseline}" if report.baseline else "no baseline"
    tables.append(
        Table(title=f"Vendor metrics ({against})", columns=["metric", *heads], rows=vendor_rows)
    )
    if report.costs:
        tables.extend(cost_tables(runs, heads, report.costs, report.baseline, report.prices))
    for r in runs:
        expected, called, counts = shown_confusion(m[r].confusion)  # at most KEEP tools a side
        tables.append(
            Table(
                title=f"Confusion matrix: {r} (rows expected, columns called)",
                columns=["expected \\ called", *called],
                rows=[[e, *row] for e, row in zip(expected, counts, strict=True)],
            )
        )
    over = [[r, case, n] for r in runs for case, n in m[r].over_tooled_cases.items()]
    if over:
        tables.append(Table(title="Over-tooling", columns=["run", "case", "extra"], rows=over))
    ghost = [[r, t, n] for r in runs for t, n in m[r].nonexistent_tools.items()]
    if ghost:
        tables.append(
            Table(title="Calls to tools not offered", columns=["run", "tool", "calls"], rows=ghost)
        )
    if any(report.families.values()):
        tables.append(
            Table(
                title="Pass rate per task family (case tag): passed/graded, top failure",
                columns=["family", *heads],
                rows=matrix_rows(report.families, runs),
            )
        )
    if any(m[r].leaked_no_calls for r in runs):
        tables.append(lost_in_text(runs, m))
    if report.gates:
        rows = [[g.run, g.name, g.status, g.message] for g in report.gates]
        tables.append(Table(title="Gates", columns=["run", "gate", "result", "why"], rows=rows))
    if report.verdicts:  # the decision comes last
        tables.append(verdict_table(report.verdicts, report.baseline or ""))
    return tables
