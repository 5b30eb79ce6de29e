"""Cost in money per case and per run, the delta against a baseline, and what
over-tooling cost. Pure: prices come from a `prices.Pricer`, sizes from the capture.

* A case costs what its exchange (the model call graded) cost: `Pricer.price`. A case
  without an exchange (not observed) costs nothing and is not counted; an observed case
  the pricer cannot price is *unpriced*, counted with its reason, never guessed.
* Per run: cost_total (sum over priced cases), cost_per_case (cost_total / priced cases),
  cost_per_passed (cost_total / passed priced cases), and against the baseline
  cost_delta = cost_per_case / baseline's - 1.
* Over-tooling (calls beyond the expected count; `metrics` counts them): their share of
  the exchange's output tokens (by count of calls, the tokens themselves are measured)
  plus their results' input tokens, estimated from the result's length at the
  tokens-per-character of the request that carried it (input_tokens / its messages'
  length); a result not recorded (a replayed turn) adds nothing. Priced at the model's
  own rates.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from pydantic import BaseModel, Field

from toolproxy.grade.metrics import CaseRecord, MetricSpec, ratio
from toolproxy.grade.prices import Call, Pricer

SPECS: dict[str, MetricSpec] = {
    "cost_per_case": MetricSpec("lower", False, "dollars per priced case"),
    "cost_total": MetricSpec("lower", False, "dollars over the run's priced cases"),
    "cost_per_passed": MetricSpec("lower", False, "dollars per passed case"),
}


class ResultSize(NamedTuple):
    """A call's result as the capture holds it (`store.queries.grades.result_sizes`)."""

    exchange_id: str  # the exchange whose response made the call
    call_id: str | None
    result_chars: int | None  # None: no result recorded
    carrier_input_tokens: int | None  # the request that carried the result
    carrier_chars: int | None  # its messages' length


class PriceUse(BaseModel):
    """How one model at one endpoint was priced in a run."""

    model: str | None
    endpoint: str
    how: str = Field(description="genai-prices provider/model, a price file rule, or why not")
    input_per_mtok: float | None = None
    output_per_mtok: float | None = None
    cases: int = 0
    cost: float | None = None


class RunCost(BaseModel):
    """A run's cost."""

    run: str
    priced_cases: int = 0
    unpriced_cases: int = 0
    unpriced: dict[str, int] = Field(default_factory=dict, description="reason -> cases")
    cost_total: float | None = None
    cost_per_case: float | None = None
    cost_per_passed: float | None = None
    cost_delta: float | None = Field(default=None, description="per case, vs the baseline")
    over_tooling_tokens: int | None = Field(
        default=None, description="extra calls' output tokens + their results' (estimated)"
    )
    over_tooling_cost: float | None = None
    prices: list[PriceUse] = Field(default_factory=list)
    case_costs: dict[str, float | None] = Field(
        default_factory=dict, exclude=True, description="case id -> dollars (None: unpriced)"
    )

    def values(self) -> dict[str, float | None]:
        """The gateable cost metrics (SPECS) by name."""
        return {name: getattr(self, name) for name in SPECS}


def extra_calls(record: CaseRecord) -> list[str | None]:
    """The call ids of the case's calls beyond the expected count (metrics' over-tooling):
    the calls paired with no expectation, at most that many."""
    g = record.grade
    n = len(g.called_tools) - len(g.expected_tools)
    if n <= 0:
        return []
    unpaired = [c.call_id for c in g.calls if c.expected_tool is None and c.actual_tool]
    return (unpaired + [None] * n)[:n]


def over_tooling_tokens(
    record: CaseRecord, sizes: Mapping[tuple[str, str | None], ResultSize]
) -> int:
    """Tokens attributable to the case's extra calls (module docstring)."""
    extra = extra_calls(record)
    called = len(record.grade.called_tools)
    if not extra or not called:
        return 0
    tokens = (record.output_tokens or 0) * len(extra) / called
    for call_id in extra:
        size = sizes.get((record.grade.exchange_id or "", call_id)) if call_id else None
        if size and size.result_chars and size.carrier_input_tokens and size.carrier_chars:
            tokens += size.result_chars * size.carrier_input_tokens / size.carrier_chars
    return round(tokens)


def run_cost(
    run: str,
    records: Sequence[CaseRecord],
    pricer: Pricer,
    sizes: Mapping[tuple[str, str | None], ResultSize] | None = None,
) -> RunCost:
    """One run's cost (module docstring)."""
    total, priced, passed = 0.0, 0, 0
    unpriced: Counter[str] = Counter()
    uses: dict[tuple[str | None, str, str], PriceUse] = {}
    over_tokens, over_cost = 0, 0.0
    case_costs: dict[str, float | None] = {}
    for c in records:
        if not c.observed or c.call is None:
            continue
        p = pricer.price(c.call)
        key = (c.call.model, c.call.hostport, p.how)
        use = uses.get(key)
        if use is None:
            use = uses[key] = PriceUse(
                model=c.call.model,
                endpoint=c.call.hostport,
                how=p.how,
                input_per_mtok=p.input_per_mtok,
                output_per_mtok=p.output_per_mtok,
            )
        use.cases += 1
        case_costs[c.grade.case_id] = p.cost
        if p.cost is None:
            unpriced[p.how] += 1
            continue
        use.cost = (use.cost or 0.0) + p.cost
        total += p.cost
        priced += 1
        passed += c.grade.passed
        n = over_tooling_tokens(c, sizes or {})
        if n:
            over_tokens += n
            over_cost += _share(c, n, p.cost)
    return RunCost(
        run=run,
        priced_cases=priced,
        unpriced_cases=sum(unpriced.values()),
        unpriced=dict(unpriced.most_common()),
        cost_total=total if priced else None,
        cost_per_case=ratio(total, priced),
        cost_per_passed=ratio(total, passed),
        over_tooling_tokens=over_tokens if priced else None,
        over_tooling_cost=over_cost if priced else None,
        prices=sorted(uses.values(), key=lambda u: (-u.cases, u.model or "", u.endpoint)),
        case_costs=case_costs,
    )


def _share(record: CaseRecord, tokens: int, whole: float) -> float:
    """What `tokens` of the case's extra calls cost: the case's cost (`whole`) in
    proportion to its tokens (so a per-hour price splits by tokens too)."""
    used = (record.input_tokens or 0) + (record.output_tokens or 0)
    if not used:
        return 0.0
    return whole * tokens / used


def run_costs(
    cases: Mapping[str, Sequence[CaseRecord]],
    pricer: Pricer,
    baseline: str | None = None,
    sizes: Mapping[tuple[str, str | None], ResultSize] | None = None,
) -> dict[str, RunCost]:
    """Every run's cost, with the per-case delta against `baseline`."""
    out = {run: run_cost(run, records, pricer, sizes) for run, records in cases.items()}
    base = out.get(baseline or "")
    for run, rc in out.items():
        if base is not None and run != baseline and rc.cost_per_case is not None:
            if base.cost_per_case:
                rc.cost_delta = rc.cost_per_case / base.cost_per_case - 1
    return out


def call_of(
    model: str | None,
    endpoint: tuple[str | None, str | None, int | None, str | None],
    tokens: tuple[int | None, int | None, int | None],
    duration_ms: float | None,
    at: object,
) -> Call:
    """A `Call` from an exchange's columns (scheme, host, port, path; input, output, cached
    tokens; duration; start time)."""
    scheme, host, port, path = endpoint
    return Call(
        model=model,
        scheme=scheme or "https",
        host=host or "",
        port=port,
        path=path or "",
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        cached_input_tokens=tokens[2],
        duration_ms=duration_ms,
        at=at if isinstance(at, datetime) else None,
    )


def sizes_by_call(rows: Sequence[ResultSize]) -> dict[tuple[str, str | None], ResultSize]:
    """Result sizes keyed by (exchange, call id); the first of a reused id wins."""
    out: dict[tuple[str, str | None], ResultSize] = {}
    for row in rows:
        out.setdefault((row.exchange_id, row.call_id), row)
    return out


def unpriced_note(costs: Mapping[str, RunCost]) -> list[str]:
    """One line per reason some cases are unpriced, with their count over all runs."""
    reasons: dict[str, int] = defaultdict(int)
    for rc in costs.values():
        for why, n in rc.unpriced.items():
            reasons[why] += n
    return [f"{n} case(s) {why}" for why, n in sorted(reasons.items(), key=lambda kv: -kv[1])]
