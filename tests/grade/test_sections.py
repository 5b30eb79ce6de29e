"""The standalone report sections: money formatting, the cost tables, calls lost in text."""

from __future__ import annotations

from toolproxy.grade.cost import PriceUse, RunCost
from toolproxy.grade.metrics import compute_run
from toolproxy.grade.sections import cost_tables, lost_in_text, money


def test_money_keeps_sub_cent_digits_and_says_n_a() -> None:
    assert money(None) == "n/a"
    assert money(0.0000976) == "$0.000098"
    assert money(1234.5) == "$1,234.5000"


def test_cost_tables_show_the_delta_only_with_a_baseline() -> None:
    use = PriceUse(model="m", endpoint="h:1", how="p.yaml rule 1 (per token)",
                   input_per_mtok=0.5, output_per_mtok=None, cases=3, cost=0.25)  # fmt: skip
    costs = {
        "a": RunCost(run="a", priced_cases=3, cost_total=0.25, prices=[use]),
        "b": RunCost(run="b", unpriced_cases=2, unpriced={"unpriced: x": 2}, cost_delta=-0.5),
    }
    summary, priced = cost_tables(["a", "b"], ["a*", "b"], costs, "a", "p.yaml")
    rows = {r[0]: r[1:] for r in summary.rows}
    assert summary.title == "Cost (prices: p.yaml)" and summary.columns == ["metric", "a*", "b"]
    assert rows["per case vs a"] == ["n/a", "-50.0%"]
    assert rows["cost_total"] == ["$0.2500", "n/a"] and rows["unpriced cases"] == [0, 2]
    assert priced.rows == [["a", "m", "h:1", "p.yaml rule 1 (per token)", "0.5", "", 3, "$0.2500"]]
    no_base = cost_tables(["a"], ["a"], costs, None, "p.yaml")[0]
    assert not any(str(r[0]).startswith("per case vs") for r in no_base.rows)


def test_lost_in_text_lists_only_runs_with_such_cases() -> None:
    metrics = {"a": compute_run("a", []), "b": compute_run("b", [])}
    metrics["b"].leaked_no_calls, metrics["b"].leaked_would_pass = 2, 1
    metrics["b"].leaked_formats = {"hermes": 2}
    assert lost_in_text(["a", "b"], metrics).rows == [["b", 2, "hermes 2", 1]]


def test_the_verdict_table_shows_delta_interval_and_verdict() -> None:
    from toolproxy.grade.sections import verdict_table
    from toolproxy.grade.verdict import MetricVerdict

    rows = [
        MetricVerdict(run="b", metric="pass_rate", cases=40, baseline=0.5, value=0.525,
                      delta=0.025, low=-0.1, high=0.15, verdict="not significantly different"),
        MetricVerdict(run="b", metric="cost_per_case", cases=3, baseline=0.01, value=None,
                      delta=None, low=None, high=None, verdict="no verdict"),
    ]  # fmt: skip
    t = verdict_table(rows, "a")
    assert t.columns[3] == "a" and t.title.startswith("Verdict against a")
    assert t.rows[0] == ["b", "pass_rate", 40, "0.500", "0.525", "+0.025", "[-0.100, +0.150]",
                         "not significantly different"]  # fmt: skip
    assert t.rows[1][3:] == ["$0.0100", "n/a", "n/a", "n/a", "no verdict"]
