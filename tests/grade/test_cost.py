"""Cost per case and per run, the delta against the baseline, unpriced cases counted with
their reasons, and the tokens and dollars of over-tooling."""

from __future__ import annotations

import pytest

from toolproxy.grade.cost import (
    ResultSize,
    extra_calls,
    over_tooling_tokens,
    run_cost,
    run_costs,
    sizes_by_call,
    unpriced_note,
)
from toolproxy.grade.grades import CallGrade, CaseGrade
from toolproxy.grade.metrics import CaseRecord
from toolproxy.grade.prices import Call, Pricer, PriceRule

RULE = PriceRule(model="m*", input_per_mtok=2.0, output_per_mtok=8.0)
PRICER = Pricer([RULE], source="p.yaml")


def case(
    cid: str,
    tokens: tuple[int, int] | None = (1000, 100),
    *,
    model: str = "m1",
    passed: bool = True,
    expected: list[str] = ["t"],  # noqa: B006
    called: list[str] = ["t"],  # noqa: B006
    calls: list[CallGrade] = [],  # noqa: B006
    observed: bool = True,
) -> CaseRecord:
    tin, tout = tokens or (None, None)
    grade = CaseGrade(
        case_id=cid, passed=passed, exchange_id=f"x-{cid}", model=model,
        label=None if passed else "wrong_tool", expected_tools=expected, called_tools=called,
        calls=calls,
    )  # fmt: skip
    return CaseRecord(
        grade=grade,
        observed=observed,
        input_tokens=tin,
        output_tokens=tout,
        call=Call(model=model, host="h", input_tokens=tin, output_tokens=tout)
        if observed
        else None,
    )


def dollars(tin: int, tout: int) -> float:
    return (tin * 2.0 + tout * 8.0) / 1e6


def test_a_run_costs_its_priced_cases_and_counts_the_unpriced_with_why() -> None:
    records = [
        case("a"),
        case("b", (500, 50), passed=False),
        case("c", None),  # no usage reported
        case("d", model="other"),  # no rule, endpoint h unknown to the database
        case("e", observed=False),  # no model turn: not a cost, not unpriced
    ]
    rc = run_cost("r", records, PRICER)
    total = dollars(1000, 100) + dollars(500, 50)
    assert rc.priced_cases == 2 and rc.unpriced_cases == 2
    assert rc.cost_total == pytest.approx(total)
    assert rc.cost_per_case == pytest.approx(total / 2)
    assert rc.cost_per_passed == pytest.approx(total / 1)
    assert rc.unpriced == {
        "unpriced: no token usage reported": 1,
        "unpriced: endpoint h is not a provider genai-prices knows; add a rule to a price "
        "file (--prices)": 1,
    }
    uses = {(u.model, u.how): (u.cases, u.cost) for u in rc.prices}
    assert uses[("m1", "p.yaml rule 1 (per token)")] == (2, pytest.approx(total))
    assert uses[("m1", "unpriced: no token usage reported")] == (1, None)
    assert unpriced_note({"r": rc})[0].startswith("1 case(s) unpriced: ")


def test_nothing_priced_leaves_the_money_unknown_not_zero() -> None:
    rc = run_cost("r", [case("a", model="other")], PRICER)
    assert rc.cost_total is None and rc.cost_per_case is None and rc.cost_per_passed is None
    assert rc.over_tooling_cost is None


def test_delta_per_case_against_the_baseline() -> None:
    runs = {
        "base": [case("a"), case("b")],
        "cand": [case("a", (500, 50)), case("b", (500, 50)), case("c", (500, 50))],
    }
    costs = run_costs(runs, PRICER, baseline="base")
    assert costs["base"].cost_delta is None
    assert costs["cand"].cost_delta == pytest.approx(-0.5)
    assert costs["cand"].values()["cost_per_case"] == pytest.approx(dollars(500, 50))
    assert run_costs(runs, PRICER)["cand"].cost_delta is None  # no baseline, no delta


def test_over_tooling_takes_the_extra_calls_share_of_output_and_their_results() -> None:
    extra = CallGrade(expected_tool=None, actual_tool="t", call_id="k2")
    paired = CallGrade(expected_tool="t", actual_tool="t", call_id="k1")
    record = case(
        "a", (1000, 90), called=["t", "t", "t"], calls=[paired, extra],
    )  # fmt: skip
    assert extra_calls(record) == ["k2", None]
    sizes = sizes_by_call(
        [
            ResultSize("x-a", "k1", 400, 2000, 8000),
            ResultSize("x-a", "k2", 400, 2000, 8000),  # 400 chars at 0.25 tokens/char
            ResultSize("x-a", "k2", 9999, 1, 1),  # a reused id: the first one counts
        ]
    )
    # 2 of 3 calls are extra: 60 output tokens; k2's result 100 tokens; the None one: none
    assert over_tooling_tokens(record, sizes) == 160
    rc = run_cost("r", [record], PRICER, sizes)
    assert rc.over_tooling_tokens == 160
    assert rc.over_tooling_cost == pytest.approx(dollars(1000, 90) * 160 / 1090)


def test_no_extra_calls_no_over_tooling() -> None:
    assert extra_calls(case("a", called=[])) == []
    assert over_tooling_tokens(case("a"), {}) == 0
    assert run_cost("r", [case("a")], PRICER).over_tooling_tokens == 0
