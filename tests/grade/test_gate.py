"""The CI gate: strict threshold parsing, regressions with epsilon, exit code, JUnit XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from toolproxy.errors import UserError
from toolproxy.grade.gate import (
    AMOUNT_EPS,
    DEFAULT_REGRESSION,
    KNOWN,
    RATE_EPS,
    GateError,
    GateResult,
    Threshold,
    check_regression,
    evaluate,
    exit_code,
    junit_xml,
    parse_threshold,
)


@pytest.mark.parametrize(
    ("text", "metric", "op", "value"),
    [
        ("selection_accuracy>=0.95", "selection_accuracy", ">=", 0.95),
        (" hallucination_rate <= .05 ", "hallucination_rate", "<=", 0.05),
        ("avg_ttft_ms<=1500", "avg_ttft_ms", "<=", 1500.0),
        ("irf_score>=+1.", "irf_score", ">=", 1.0),
    ],
)
def test_parse_threshold(text: str, metric: str, op: str, value: float) -> None:
    assert parse_threshold(text) == Threshold(metric=metric, op=op, value=value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    ["pass_rate>0.9", "pass_rate=>0.9", "pass_rate>=", "pass_rate>=0.9x", ">=0.9", "pass_rate"],
)
def test_parse_threshold_is_strict(text: str) -> None:
    with pytest.raises(GateError, match="METRIC>=NUMBER"):
        parse_threshold(text)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        # 95 meant as a percentage: a gate that can never pass
        (
            "selection_accuracy>=95",
            r"selection_accuracy is a rate from 0 to 1 \(for 95 %, write 0\.95",
        ),
        # 5 meant as a percentage: a gate that can never fail
        ("hallucination_rate<=5", "a rate from 0 to 1"),
        ("each_tool.selection_accuracy>=95", "a rate from 0 to 1"),
        ("pass_rate>=-0.1", "a rate from 0 to 1"),
        ("avg_ttft_ms<=-1", "never negative"),
        ("avg_ttft_ms<=1500%", "avg_ttft_ms is not a rate; only rates take a percentage"),
        ("pass_rate>=101%", "a rate from 0 to 1"),
    ],
)
def test_a_threshold_no_run_could_fail_or_pass_is_refused(text: str, says: str) -> None:
    with pytest.raises(GateError, match=says) as info:
        parse_threshold(text)
    assert repr(text) in str(info.value)


def test_a_rate_takes_a_percentage_and_prints_as_written() -> None:
    t = parse_threshold("selection_accuracy>=95%")
    assert (t.metric, t.op, t.value) == ("selection_accuracy", ">=", 0.95)
    assert str(t) == "selection_accuracy>=95%"
    assert str(parse_threshold("pass_rate>=1")) == "pass_rate>=1"
    assert parse_threshold("hallucination_rate <= 0.5 %").value == 0.005
    assert parse_threshold("pass_rate>=0").value == 0.0  # the bounds themselves are fine


def test_unknown_metric_lists_the_known_ones_and_is_a_user_error() -> None:
    with pytest.raises(GateError) as info:
        parse_threshold("selection>=0.95")
    message = str(info.value)
    assert "unknown metric 'selection'" in message
    for name in ("selection_accuracy", "hallucination_rate", "trigger_f1", "irf_score"):
        assert name in message
    assert isinstance(info.value, UserError)  # the CLI turns it into exit code 2


def test_per_tool_thresholds_parse_and_print_as_written() -> None:
    one = parse_threshold("tool:get_order_status.selection_accuracy>=0.95")
    assert (one.tool, one.each_tool, one.metric) == (
        "get_order_status",
        False,
        "selection_accuracy",
    )
    assert str(one) == "tool:get_order_status.selection_accuracy>=0.95"
    each = parse_threshold(" each_tool.pass_rate >= 0.9 ")
    assert each.each_tool and each.tool is None and str(each) == "each_tool.pass_rate>=0.9"
    assert str(each.for_tool("get_weather")) == "tool:get_weather.pass_rate>=0.9"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("tool:get_weather.irf_score>=0.5", "per-tool gates take the per-run metrics"),
        ("each_tool.trigger_f1>=0.5", "per-tool gates take the per-run metrics"),
        ("tool:.pass_rate>=0.5", "bad threshold"),
        ("tools:x.pass_rate>=0.5", "bad threshold"),
        ("each_tools.pass_rate>=0.5", "bad threshold"),
    ],
)
def test_per_tool_thresholds_are_strict(text: str, says: str) -> None:
    with pytest.raises(GateError, match=says):
        parse_threshold(text)


def test_per_tool_gates_on_each_run_fail_closed() -> None:
    tools = {
        "r1": {"get_weather": {"selection_accuracy": 1.0}, "get_time": {"selection_accuracy": 0.0}},
        "r2": {"get_weather": {"selection_accuracy": None}},
    }
    values = {"r1": {}, "r2": {}}
    each = parse_threshold("each_tool.selection_accuracy>=0.95")
    got = [(r.run, r.name, r.status) for r in evaluate(values, [each], tool_values=tools)]
    assert got == [
        ("r1", "tool:get_time.selection_accuracy>=0.95", "failed"),
        ("r1", "tool:get_weather.selection_accuracy>=0.95", "passed"),
        ("r2", "tool:get_weather.selection_accuracy>=0.95", "failed"),  # n/a fails
    ]
    named = parse_threshold("tool:get_time.selection_accuracy<=0.5")
    results = evaluate(values, [named], tool_values=tools)
    assert [(r.run, r.status) for r in results] == [("r1", "passed"), ("r2", "failed")]
    assert results[1].message == "no case of this run expects 'get_time'"


def test_every_default_regression_metric_is_known() -> None:
    assert set(DEFAULT_REGRESSION) <= set(KNOWN)


def test_thresholds_pass_fail_and_fail_closed_on_missing_values() -> None:
    values = {"a": {"pass_rate": 0.95, "hallucination_rate": 0.1}, "b": {"pass_rate": None}}
    ts = [parse_threshold("pass_rate>=0.95"), parse_threshold("hallucination_rate<=0.05")]
    results = evaluate(values, ts)
    assert [(r.run, r.name, r.status) for r in results] == [
        ("a", "pass_rate>=0.95", "passed"),  # the bound is inclusive
        ("a", "hallucination_rate<=0.05", "failed"),
        ("b", "pass_rate>=0.95", "failed"),
        ("b", "hallucination_rate<=0.05", "failed"),
    ]
    assert "0.1" in results[1].message and "n/a" in results[2].message
    assert exit_code(results) == 1
    assert exit_code(results[:1]) == 0 and exit_code([]) == 0


def test_regression_respects_direction_and_epsilon() -> None:
    # rates: absolute epsilon
    assert check_regression("r", "pass_rate", 0.90, 0.90 + RATE_EPS * 0.9, "b").status == "passed"
    assert check_regression("r", "pass_rate", 0.90, 0.90 + RATE_EPS * 1.1, "b").status == "failed"
    assert check_regression("r", "pass_rate", 0.99, 0.90, "b").status == "passed"
    assert check_regression("r", "hallucination_rate", 0.2, 0.1, "b").status == "failed"
    assert check_regression("r", "hallucination_rate", 0.0, 0.1, "b").status == "passed"
    # amounts: relative epsilon of the baseline's value
    base = 1000.0
    ok = check_regression("r", "avg_ttft_ms", base * (1 + AMOUNT_EPS * 0.9), base, "b")
    bad = check_regression("r", "avg_ttft_ms", base * (1 + AMOUNT_EPS * 1.1), base, "b")
    assert (ok.status, bad.status) == ("passed", "failed")
    assert check_regression("r", "tps", 80.0, 100.0, "b").status == "failed"
    skipped = check_regression("r", "recovery_rate", None, 0.5, "b")
    assert skipped.status == "skipped" and "n/a" in skipped.message


def test_evaluate_regressions_only_for_non_baseline_runs() -> None:
    values = {
        "base": {m: 0.5 for m in KNOWN},
        "worse": {**{m: 0.5 for m in KNOWN}, "selection_accuracy": 0.4},
        "better": {**{m: 0.5 for m in KNOWN}, "selection_accuracy": 0.6},
    }
    results = evaluate(values, baseline="base", fail_on_regression=True)
    assert {r.run for r in results} == {"worse", "better"}
    assert len(results) == 2 * len(DEFAULT_REGRESSION)
    failed = [(r.run, r.name) for r in results if r.status == "failed"]
    assert failed == [("worse", "regression:selection_accuracy")]
    # thresholds name the gated metrics
    ts = [parse_threshold("avg_tokens<=1")]
    results = evaluate(values, ts, baseline="base", fail_on_regression=True)
    assert [r.name for r in results if r.run == "worse"] == [
        "avg_tokens<=1",
        "regression:avg_tokens",
    ]


def test_fail_on_regression_needs_a_reported_baseline() -> None:
    with pytest.raises(GateError):
        evaluate({"a": {}}, fail_on_regression=True)
    with pytest.raises(GateError):
        evaluate({"a": {}}, baseline="b", fail_on_regression=True)


def test_junit_xml_parses_with_one_suite_per_run() -> None:
    results = [
        GateResult(run="a", name="pass_rate>=0.9", status="passed", message="pass_rate = 0.95"),
        GateResult(run="a", name="regression:x", status="skipped", message="x is n/a"),
        GateResult(run="b", name="pass_rate>=0.9", status="failed", message="pass_rate = 0.5 <&>"),
    ]
    root = ET.fromstring(junit_xml(["a", "b", "c"], results))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures")) == ("3", "1")
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert list(suites) == ["a", "b", "c"]
    assert (suites["a"].get("tests"), suites["a"].get("skipped")) == ("2", "1")
    assert suites["c"].get("tests") == "0"
    (case,) = suites["b"].iter("testcase")
    assert case.get("name") == "pass_rate>=0.9" and case.get("classname") == "toolproxy.gate.b"
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "pass_rate = 0.5 <&>"
    assert suites["a"].find("testcase/skipped") is not None
    assert suites["a"].find("testcase/failure") is None
