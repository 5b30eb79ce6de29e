"""Per-run metrics from graded cases, their exchanges and their sessions. Pure: no I/O.

Inputs: one `CaseRecord` per case of a run (its `CaseGrade` plus what the capture knows
about the graded exchange) and the run's sessions as ordered `SessionCall`s. Definitions
(also in docs/grading.md); a rate whose denominator is 0 is None ("n/a"), never 0 or 1:

* cases: case rows of the run. graded: cases that are not `not_graded` (nothing to grade
  yet, or a field needed the LLM judge and none answered). passed: graded cases that
  passed. pass_rate = passed / graded. observed: cases whose model turn exists (all but
  the not-graded ones whose `reason` starts with an UNOBSERVED kind); the descriptive
  metrics below (confusion, over-tooling, nonexistent calls, retries) count only those,
  so a turn that never happened is not mistaken for "made no call".
* selection_accuracy = graded cases whose *set* of called tool names equals the set of
  expected tool names / graded cases. Order and multiplicity are ignored (counts are
  measured by over-tooling and the `parallel_collapse` label); a `no_call` case is correct
  exactly when nothing was called (both sets empty).
* Argument buckets, over every `ArgGrade` of every case whose bucket is not `not_graded`
  ("graded args"): hallucination_rate = hallucinated / graded args (confidently wrong
  values and invented arguments only), omission_rate = missing / graded args,
  format_error_rate = malformed / graded args. A missing field is only ever counted as an
  omission, never as a hallucination.
* label_counts: failing cases per label, every label listed (0 included), PRECEDENCE order.
* confusion: expected tool x called tool counts over observed cases. Each `CallGrade` is one
  cell (`expected_tool`, `actual_tool`), None written `(none)`: row `(none)` = a call
  nothing expected (spurious / extra), column `(none)` = an expected call not made. A case
  with no CallGrades pairs `expected_tools` with `called_tools` by position; a case where
  both are empty (correctly no call) is the cell `(none)` x `(none)`.
* over-tooling, over observed cases: extra calls of a case = max(0, len(called_tools) -
  len(expected_tools)) (a spurious call on a `no_call` case counts 1 per call);
  over_tooling = total extra calls / observed cases, plus the total and the cases with any.
* nonexistent calls: called names not among the tools offered in that case's exchange
  (`tools_offered`). Only cases whose exchange is recorded are checked (`offered` not None);
  nonexistent_rate = nonexistent calls / calls checked; counted per tool name too.
* retry cost, from the recorded sessions (see `find_chains`): retries_per_case = retries
  in chains that started in the run's exchanges / observed cases; recovery_rate = chains
  that ended with a successful call / those chains.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, Field

from toolproxy.grade.grades import CallGrade, CaseGrade
from toolproxy.grade.labels import PRECEDENCE
from toolproxy.grade.model import record_copy
from toolproxy.grade.prices import Call
from toolproxy.grade.rows import GradeRow, Row
from toolproxy.util.jsonfast import loads
from toolproxy.wire.structured import OUTPUT

NONE = "(none)"

# An error result's text: starts with one of these words (case-insensitive), the way tool
# runners and MCP servers report failures ("Error: ...", "Traceback (most recent ...").
ERROR_PATTERN = re.compile(
    r"^\s*[\[\(]?(?:error|exception|traceback|failed|failure|fatal|invalid)\b", re.IGNORECASE
)

Direction = Literal["higher", "lower"]

# `GradeRow.reason` prefixes meaning there was no model turn to grade (toolproxy.grade.observe
# `Ungradable.kind`); a judge that could not answer ("no_judge", "judge_failed") is not one.
UNOBSERVED = ("needs_replay", "no_exchange", "upstream_failed", "not_parsed")


class MetricSpec(NamedTuple):
    """A gateable metric: which way is better, and whether it is a rate in [0, 1]."""

    direction: Direction
    rate: bool
    description: str


SPECS: dict[str, MetricSpec] = {
    "pass_rate": MetricSpec("higher", True, "passed / graded cases"),
    "selection_accuracy": MetricSpec("higher", True, "called tool set == expected set"),
    "hallucination_rate": MetricSpec("lower", True, "hallucinated / graded args"),
    "omission_rate": MetricSpec("lower", True, "missing / graded args"),
    "format_error_rate": MetricSpec("lower", True, "malformed / graded args"),
    "judge_score": MetricSpec("higher", True, "mean judge score (1 / 0.5 / 0) of judged args"),
    "over_tooling": MetricSpec("lower", False, "extra calls per case"),
    "nonexistent_rate": MetricSpec("lower", True, "calls to tools not offered / calls"),
    "retries_per_case": MetricSpec("lower", False, "retries in recorded sessions per case"),
    "recovery_rate": MetricSpec("higher", True, "retry chains ending in success / chains"),
}


@dataclass(slots=True, kw_only=True)
class CaseRecord:
    """One graded case of one run with what the capture holds about its exchange. A slotted
    dataclass, not a pydantic model: `report` builds one a case from the store's typed
    columns, which pydantic checked again at ~20,000 instructions a case."""

    run: str = ""  # the run's name
    grade: CaseGrade  # the case's grade
    source: str = "capture"  # capture | replay:<candidate>
    observed: bool = True  # the model turn exists (see UNOBSERVED)
    offered: list[str] | None = None  # tool names offered in its exchange; None: not recorded
    input_tokens: int | None = None  # the exchange's input tokens
    output_tokens: int | None = None  # the exchange's output tokens
    ttfb_ms: float | None = None  # the exchange's time to first byte
    decode_tps: float | None = None  # the exchange's decode tokens/s
    finish_reason: str | None = None  # the exchange's finish reason
    tags: list[str] = field(default_factory=list)  # the case's tags
    call: Call | None = None  # its exchange as pricing sees it

    def model_copy(self, update: dict[str, Any] | None = None) -> CaseRecord:
        """A shallow copy with `update` applied (pydantic's verb, as the records have it)."""
        return record_copy(self, update)


@dataclass(slots=True, kw_only=True)
class SessionCall(Row):
    """A recorded tool call in session order, with the result the agent sent back (a row of
    plain values, as `rows.Row` has them: `report` reads one per recorded call)."""

    session_id: str  # the session
    exchange_id: str  # the exchange whose response made the call
    name: str | None = None  # tool name
    call_id: str | None = None  # the provider's call id
    parse_error: str | None = None  # argument parse error
    result: str | None = None  # result content; None: none recorded
    result_is_error: bool | None = None  # tool_results.is_error


Outcome = Literal["failed", "ok", "unknown"]


class Chain(BaseModel):
    """A failed call and the calls to the same tool that followed it in its session."""

    session_id: str = Field(description="the session")
    tool: str | None = Field(description="the tool retried")
    start_exchange: str = Field(description="exchange of the first failed call")
    retries: int = Field(description="calls after the first failed one")
    recovered: bool = Field(description="the last call succeeded")


class RunMetrics(BaseModel):
    """Every per-run metric; rates are None when their denominator is 0."""

    run: str
    cases: int = Field(description="case rows in the run")
    graded: int = Field(description="cases not marked not_graded")
    not_graded: int = Field(description="cases left ungraded (no turn yet, or no judge)")
    observed: int = Field(description="cases whose model turn exists")
    passed: int = Field(description="graded cases that passed")
    pass_rate: float | None = Field(description="passed / graded")
    selection_correct: int = Field(description="graded cases with the expected tool set")
    selection_accuracy: float | None = Field(description="selection_correct / graded")
    args: dict[str, int] = Field(description="graded args per bucket (ok ... malformed)")
    graded_args: int = Field(description="args whose bucket is not not_graded")
    hallucination_rate: float | None = Field(description="hallucinated / graded args")
    omission_rate: float | None = Field(description="missing / graded args")
    format_error_rate: float | None = Field(description="malformed / graded args")
    judged_args: int = Field(default=0, description="args an LLM judge scored")
    judge_score: float | None = Field(
        default=None, description="mean judge score (1 / 0.5 / 0) of the judged args"
    )
    label_counts: dict[str, int] = Field(description="failing cases per label")
    confusion: dict[str, dict[str, int]] = Field(description="expected -> called -> count")
    extra_calls: int = Field(description="calls beyond the expected count, all cases")
    over_tooled_cases: dict[str, int] = Field(description="case id -> extra calls (> 0)")
    over_tooling: float | None = Field(description="extra_calls / observed cases")
    calls_checked: int = Field(description="calls whose exchange's offered tools are known")
    nonexistent_calls: int = Field(description="calls to names not offered")
    nonexistent_tools: dict[str, int] = Field(description="name not offered -> calls")
    nonexistent_rate: float | None = Field(description="nonexistent_calls / calls_checked")
    retry_chains: int = Field(description="chains started in the run's exchanges")
    retries: int = Field(description="retries in those chains")
    recovered_chains: int = Field(description="chains whose last call succeeded")
    retries_per_case: float | None = Field(description="retries / observed cases")
    recovery_rate: float | None = Field(description="recovered_chains / retry_chains")
    leaked_no_calls: int = Field(
        default=0, description="no_call cases whose text held calls a server's parser lost"
    )
    leaked_formats: dict[str, int] = Field(
        default_factory=dict, description="those cases per format (toolproxy.wire.leaked)"
    )
    leaked_would_pass: int = Field(
        default=0, description="of those, cases whose lost calls would have passed"
    )

    def values(self) -> dict[str, float | None]:
        """The gateable metrics (SPECS) by name."""
        return {name: getattr(self, name) for name in SPECS}


def ratio(num: float, den: float) -> float | None:
    """num / den, or None when den is 0."""
    return num / den if den else None


def tags_of(row: GradeRow) -> list[str]:
    """A stored grade row's tags (a JSON column may arrive as text)."""
    tags = _loads(row.tags)
    return [str(t) for t in tags] if isinstance(tags, list) else []


def _loads(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return loads(value)  # json.loads's reading, via orjson where that is the same
        except ValueError:
            return None
    return value


def grade_of(row: GradeRow) -> CaseGrade:
    """A stored grade row back as a CaseGrade (JSON columns may arrive as text)."""
    calls = _loads(row.calls) or []
    # positional: keywords into the compiled class are parsed one by one (`report` reads a
    # row per case; 22 -> 15 µs a row with the calls as stored)
    return CaseGrade(
        row.case_id,
        row.passed,
        row.exchange_id,
        row.session_id,
        row.model,
        row.label if row.label in PRECEDENCE else None,  # type: ignore[arg-type]
        row.not_graded,
        [_call_grade(c) for c in calls if isinstance(c, dict)],
        [str(t) for t in _loads(row.called_tools) or []],
        [str(t) for t in _loads(row.expected_tools) or []],
        row.leaked_format,
        row.leaked_label,
    )


def _call_grade(stored: dict[str, Any]) -> CallGrade:
    """A call's grade as a run stored it (a partial one: both tools default to None)."""
    if "expected_tool" in stored and "actual_tool" in stored:
        return CallGrade.model_validate(stored)
    return CallGrade.model_validate({"expected_tool": None, "actual_tool": None} | stored)


def observed_of(row: GradeRow) -> bool:
    """False when the row says there was no model turn to grade (an UNOBSERVED reason)."""
    reason = (row.reason or "").split(":", 1)[0].strip()
    return not (row.not_graded and reason in UNOBSERVED)


def cells_of(grade: CaseGrade) -> list[tuple[str, str]]:
    """The confusion-matrix cells (expected, called) one case contributes."""
    if grade.calls:
        return [(c.expected_tool or NONE, c.actual_tool or NONE) for c in grade.calls]
    exp, got = grade.expected_tools, grade.called_tools
    if not exp and not got:
        return [(NONE, NONE)]
    n = max(len(exp), len(got))
    return [(exp[i] if i < len(exp) else NONE, got[i] if i < len(got) else NONE) for i in range(n)]


def outcome_of(call: SessionCall) -> Outcome:
    """failed: a parse error, or an error result (is_error true, or ERROR_PATTERN, or a
    JSON object with a non-null "error" or a true "isError"); ok: a result that is none of
    these; unknown: no result recorded."""
    if call.parse_error:
        return "failed"
    if call.result is None:
        return "failed" if call.result_is_error else "unknown"
    if call.result_is_error or ERROR_PATTERN.match(call.result):
        return "failed"
    body = _loads(call.result)
    if isinstance(body, dict) and (body.get("error") is not None or body.get("isError") is True):
        return "failed"
    return "ok"


def find_chains(calls: Sequence[SessionCall]) -> list[Chain]:
    """Retry chains of one session's calls (in order) with at least one retry.

    A chain opens at a failed call. The next call to the same tool name in a *later*
    exchange (its error result had to come back first) is a retry: if it failed too the
    chain stays open, if it is ok the chain closes recovered, if its outcome is unknown the
    chain closes unrecovered. A chain still open at the session's end is unrecovered. A
    failed call never retried is not a chain.
    """
    open_: dict[str | None, Chain] = {}
    last_exchange: dict[str | None, str] = {}
    done: list[Chain] = []
    for call in calls:
        state, chain = outcome_of(call), open_.get(call.name)
        if chain is not None and last_exchange[call.name] != call.exchange_id:
            chain.retries += 1
            if state != "failed":
                chain.recovered = state == "ok"
                done.append(open_.pop(call.name))
        elif chain is None and state == "failed":
            open_[call.name] = Chain(
                session_id=call.session_id,
                tool=call.name,
                start_exchange=call.exchange_id,
                retries=0,
                recovered=False,
            )
        last_exchange[call.name] = call.exchange_id
    done.extend(open_.values())
    return [c for c in done if c.retries > 0]


def compute_run(
    run: str, cases: Sequence[CaseRecord], sessions: Iterable[Sequence[SessionCall]] = ()
) -> RunMetrics:
    """The per-run metrics of one run's cases (module docstring: every definition)."""
    grades = [c.grade for c in cases]
    graded = [g for g in grades if not g.not_graded]
    seen = [c.grade for c in cases if c.observed]
    passed = sum(g.passed for g in graded)
    correct = sum(set(g.called_tools) == set(g.expected_tools) for g in graded)
    buckets = Counter(a.bucket for g in grades for c in g.calls for a in c.args)
    n_args = sum(n for b, n in buckets.items() if b != "not_graded")
    scores = [
        a.judge_score for g in grades for c in g.calls for a in c.args if a.judge_score is not None
    ]
    labels = Counter(g.label for g in grades if not g.passed and g.label)
    confusion: dict[str, dict[str, int]] = defaultdict(dict)
    for g in seen:
        for exp, got in cells_of(g):
            confusion[exp][got] = confusion[exp].get(got, 0) + 1
    extra = {g.case_id: len(g.called_tools) - len(g.expected_tools) for g in seen}
    over = {k: v for k, v in extra.items() if v > 0}
    checked, missing = 0, Counter[str]()
    for c in cases:
        if c.observed and c.offered is not None:
            called = [t for t in c.grade.called_tools if t != OUTPUT]  # not a tool
            checked += len(called)
            missing.update(t for t in called if t not in c.offered)
    exchanges = {g.exchange_id for g in seen if g.exchange_id}
    leaked = [g for g in grades if g.label == "no_call" and g.leaked_format]
    chains = [ch for s in sessions for ch in find_chains(s) if ch.start_exchange in exchanges]
    retries = sum(ch.retries for ch in chains)
    recovered = sum(ch.recovered for ch in chains)
    return RunMetrics(
        run=run,
        cases=len(grades),
        graded=len(graded),
        not_graded=len(grades) - len(graded),
        observed=len(seen),
        passed=passed,
        pass_rate=ratio(passed, len(graded)),
        selection_correct=correct,
        selection_accuracy=ratio(correct, len(graded)),
        args={b: buckets.get(b, 0) for b in ("ok", "hallucinated", "missing", "malformed")},
        graded_args=n_args,
        hallucination_rate=ratio(buckets["hallucinated"], n_args),
        omission_rate=ratio(buckets["missing"], n_args),
        format_error_rate=ratio(buckets["malformed"], n_args),
        judged_args=len(scores),
        judge_score=ratio(sum(scores), len(scores)),
        label_counts={label: labels.get(label, 0) for label in PRECEDENCE},
        confusion={k: dict(sorted(v.items())) for k, v in sorted(confusion.items())},
        extra_calls=sum(over.values()),
        over_tooled_cases=over,
        over_tooling=ratio(sum(over.values()), len(seen)),
        calls_checked=checked,
        nonexistent_calls=sum(missing.values()),
        nonexistent_tools=dict(missing.most_common()),
        nonexistent_rate=ratio(sum(missing.values()), checked),
        retry_chains=len(chains),
        retries=retries,
        recovered_chains=recovered,
        retries_per_case=ratio(retries, len(seen)),
        recovery_rate=ratio(recovered, len(chains)),
        leaked_no_calls=len(leaked),
        leaked_formats=dict(Counter(str(g.leaked_format) for g in leaked).most_common()),
        leaked_would_pass=sum(g.leaked_label == "passed" for g in leaked),
    )


def tool_values(
    records: Sequence[CaseRecord], sessions: dict[str, list[SessionCall]]
) -> dict[str, dict[str, float | None]]:
    """Per expected tool, the per-run metrics over the cases that expect it."""
    out = {}
    for tool in sorted({t for c in records for t in c.grade.expected_tools}):
        mine = [c for c in records if tool in c.grade.expected_tools]
        ids = {c.grade.session_id for c in mine if c.grade.session_id}
        out[tool] = compute_run(tool, mine, [sessions[s] for s in ids if s in sessions]).values()
    return out
