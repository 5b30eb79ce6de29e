"""`toolproxy report` on a real DuckDB capture: tables, files, gallery, gates, exit codes."""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.builders import HOSTED, chat_exchange
from tests.seeded import CaptureRows
from toolproxy import store
from toolproxy.cli.main import main
from toolproxy.grade.grades import ArgGrade, CallGrade
from toolproxy.grade.labels import PRECEDENCE
from toolproxy.grade.report import COST_ROWS, RUN_ROWS, VENDOR_ROWS, load_cases
from toolproxy.grade.rows import GradeRow
from toolproxy.records import ToolCall, ToolOffered, ToolResult
from toolproxy.store.segments import SegmentWriter

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
TOOLS = ["get_weather", "get_time"]


class Rows(CaptureRows):
    """Capture rows built the way the recorder writes them, plus grades."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def exchange(
        self,
        xid: str,
        session: str,
        user: str,
        calls: list[tuple[str, str]] = (),  # type: ignore[assignment]
        results: list[tuple[str, str]] = (),  # type: ignore[assignment]
        text: str | None = None,
        tokens: tuple[int, int] = (100, 10),
        ttfb: float = 200.0,
        tps: float = 50.0,
    ) -> None:
        self.n += 1
        at = T0 + timedelta(seconds=self.n)
        messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
        messages += [{"role": "tool", "tool_call_id": cid, "content": c} for cid, c in results]
        ex = chat_exchange(
            xid,
            session,
            at,
            **HOSTED,
            ttfb_ms=ttfb,
            model_requested="m",
            messages=messages,
            assistant_text=text,
            finish_reason="tool_calls" if calls else "stop",
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            decode_tps=tps,
        )
        self.turn(
            ex,
            offered=[
                ToolOffered(position=i, name=name, parameters={"type": "object"}, schema_hash="h")
                for i, name in enumerate(TOOLS)
            ],
            calls=[
                ToolCall(index=i, call_id=f"{xid}-c{i}", name=name, arguments_raw=raw)
                for i, (name, raw) in enumerate(calls)
            ],
            results=[
                ToolResult(message_index=i + 1, call_id=cid, content=content)
                for i, (cid, content) in enumerate(results)
            ],
        )

    def grade(
        self, run: str, cid: str, xid: str, exp: list[str], got: list[str], **kw: Any
    ) -> None:
        calls = kw.pop("calls", [])
        row = GradeRow(
            run=run,
            graded_at=kw.pop("at", "2024-05-01T13:00:00+00:00"),
            case_id=cid,
            exchange_id=xid,
            passed=kw.get("label") is None,
            calls=[c.model_dump(mode="json") for c in calls],
            expected_tools=exp,
            called_tools=got,
            **kw,
        )
        self.models("grades", [row])


def seed(cap: Path) -> None:
    r = Rows()
    # s1: a hallucinated city, an error result, a successful retry
    r.exchange("x1", "s1", "What's the weather in Paris?", [("get_weather", '{"city": "Pari"}')])
    r.exchange(
        "x2", "s1", "What's the weather in Paris?", [("get_weather", '{"city": "Paris"}')],
        results=[("x1-c0", "Error: unknown city Pari")],
    )  # fmt: skip
    r.exchange("x3", "s1", "What's the weather in Paris?", results=[("x2-c0", "sunny")], text="ok")
    r.exchange("x4", "s2", "hi there", text="hello!")
    r.exchange("x5", "s3", "what time is it?", [("get_tme", "{}")])
    hallucinated = CallGrade(
        expected_tool="get_weather",
        actual_tool="get_weather",
        call_id="x1-c0",
        stage_failed="semantic",
        label="hallucinated_param",
        args=[ArgGrade(name="city", bucket="hallucinated", detail="expected 'Paris'")],
        errors=["city: 'Pari' != 'Paris'"],
    )
    ok = CallGrade(
        expected_tool="get_weather",
        actual_tool="get_weather",
        args=[ArgGrade(name="city", bucket="ok")],
    )
    r.grade("base", "c1", "x1", ["get_weather"], ["get_weather"], label="hallucinated_param",
            calls=[hallucinated])  # fmt: skip
    r.grade("base", "c2", "x2", ["get_weather"], ["get_weather"], calls=[ok])
    r.grade("base", "c3", "x4", [], [])
    r.grade("base", "c4", "x5", ["get_time"], ["get_tme"], label="wrong_tool",
            calls=[CallGrade(expected_tool="get_time", actual_tool="get_tme",
                             stage_failed="selection", label="wrong_tool")])  # fmt: skip
    # cand: a replay of the same cases on other exchanges: faster, but calls on c3
    r.exchange("y1", "t1", "What's the weather in Paris?", [("get_weather", '{"city":"Paris"}')],
               tokens=(80, 5), ttfb=100.0, tps=90.0)  # fmt: skip
    r.exchange("y2", "t2", "What's the weather in Paris?", [("get_time", "{}")])
    r.exchange("y4", "t3", "hi there", [("get_time", "{}")], tokens=(80, 5), ttfb=100.0)
    r.exchange("y5", "t4", "what time is it?", [("get_time", "{}")], tokens=(80, 5), ttfb=100.0)
    for cid, xid, exp, got, kw in (
        ("c1", "y1", ["get_weather"], ["get_weather"], {"calls": [ok]}),
        ("c2", "y2", ["get_weather"], ["get_time"], {"label": "wrong_tool"}),
        ("c3", "y4", [], ["get_time"], {"label": "spurious_call"}),
        ("c4", "y5", ["get_time"], ["get_time"], {}),
    ):
        r.grade("cand", cid, xid, exp, got, source="replay:cand", **kw)
    SegmentWriter(cap, "test").write(r.rows)


@pytest.fixture
def cap(tmp_path: Path) -> Path:
    path = store.init_capture(tmp_path / "cap")
    seed(path)
    return path


def report(cap: Path, *args: str) -> int:
    return main(["report", "-c", str(cap), *args])


def test_terminal_tables_compare_runs_with_the_baseline_marked(
    cap: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert report(cap, "--baseline", "base") == 0
    out = capsys.readouterr().out
    for title in ("Per-run metrics", "Failing cases per label", "Vendor metrics (trigger",
                  "Confusion matrix: base", "Confusion matrix: cand", "Over-tooling",
                  "Calls to tools not offered", "* baseline: base"):  # fmt: skip
        assert title in out, title
    header = next(line for line in out.splitlines() if line.startswith("metric"))
    assert header.split() == ["metric", "base*", "cand"]
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()}
    assert rows["pass_rate"] == ["0.5", "0.5"]
    assert rows["selection_accuracy"] == ["0.75", "0.5"]
    assert rows["hallucination_rate"] == ["0.5", "0"]
    assert rows["trigger_f1"][0:2] == ["1", "(#1)"]


def test_json_holds_every_metric(cap: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert report(cap, "--json", "--baseline", "base") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runs"] == ["base", "cand"] and data["baseline"] == "base"
    base, cand = data["metrics"]["base"], data["metrics"]["cand"]
    assert (base["cases"], base["passed"], base["selection_correct"]) == (4, 2, 3)
    assert base["confusion"]["get_time"] == {"get_tme": 1}
    assert base["nonexistent_tools"] == {"get_tme": 1} and cand["nonexistent_calls"] == 0
    # x1 failed (error result), x2 retried get_weather and got "sunny": one recovered chain
    assert (base["retry_chains"], base["retries"], base["recovery_rate"]) == (1, 1, 1.0)
    assert base["retries_per_case"] == 0.25 and cand["recovery_rate"] is None
    assert cand["over_tooled_cases"] == {"c3": 1}
    v = data["vendor"]
    # base triggers on c1, c2, c4; cand also on c3: precision 3/4, recall 1
    assert v["cand"]["trigger"]["fp"] == 1 and v["cand"]["trigger_recall"] == 1.0
    assert v["cand"]["trigger_f1"] == pytest.approx(6 / 7)
    assert v["base"]["avg_tokens"] == pytest.approx(110.0)
    assert v["cand"]["avg_ttft_ms"] == pytest.approx(125.0)
    assert v["base"]["irf_score"] > 0 and v["cand"]["irf_score"] > 0
    assert set(data["gallery"]) == {"hallucinated_param", "wrong_tool", "spurious_call"}


def test_out_writes_csv_json_and_markdown_gallery(cap: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert report(cap, "--baseline", "base", "--out", str(out)) == 0
    with (out / "report.csv").open() as f:
        rows = list(csv.DictReader(f))
    per_run = len(RUN_ROWS) + len(PRECEDENCE) + len(VENDOR_ROWS) + len(COST_ROWS)
    assert len(rows) == 2 * per_run
    assert len({(r["run"], r["section"], r["metric"]) for r in rows}) == len(rows)
    cell = {(r["run"], r["metric"]): r for r in rows}
    assert cell[("base", "pass_rate")]["value"] == "0.5"
    assert cell[("base", "pass_rate")]["baseline"] == "true"
    assert cell[("cand", "recovery_rate")]["value"] == ""  # n/a
    assert cell[("cand", "spurious_call")]["section"] == "label"
    assert json.loads((out / "report.json").read_text())["metrics"]["base"]["cases"] == 4
    md = (out / "report.md").read_text()
    assert "## Per-run metrics" in md and "| metric | base* | cand |" in md
    gallery = md[md.index("## Failure transcripts") :]
    start = gallery.index("### `hallucinated_param`")
    section = gallery[start:]  # the last label in PRECEDENCE order
    assert "#### c1 (base)" in section
    assert "user: What's the weather in Paris?" in section
    assert 'actual `get_weather({"city": "Pari"})`' in section
    assert "expected `get_weather`" in section
    assert "`city` hallucinated: expected 'Paris'" in section
    assert "error: city: 'Pari' != 'Paris'" in section
    spurious = gallery[gallery.index("### `spurious_call`") : gallery.index("### `wrong_tool`")]
    assert "#### c3 (cand)" in spurious and "user: hi there" in spurious
    assert "actual `get_time({})`" in spurious


def test_threshold_gate_exit_code_and_junit(cap: Path, tmp_path: Path) -> None:
    junit = tmp_path / "ci" / "gate.xml"
    code = report(cap, "--threshold", "selection_accuracy>=0.7", "--junit", str(junit))
    assert code == 1  # base 3/4 passes, cand 2/4 fails
    root = ET.parse(junit).getroot()
    results = {
        (s.get("name"), c.get("name")): c.find("failure")
        for s in root.iter("testsuite")
        for c in s.iter("testcase")
    }
    assert set(results) == {
        ("base", "selection_accuracy>=0.7"),
        ("cand", "selection_accuracy>=0.7"),
    }
    assert results[("base", "selection_accuracy>=0.7")] is None
    failure = results[("cand", "selection_accuracy>=0.7")]
    assert failure is not None and "0.5" in (failure.get("message") or "")
    assert report(cap, "--threshold", "selection_accuracy>=0.5", "--junit", str(junit)) == 0
    assert ET.parse(junit).getroot().get("failures") == "0"


def test_per_tool_gates_hold_each_diagonal_cell_with_a_junit_case_per_tool(
    cap: Path, tmp_path: Path
) -> None:
    junit = tmp_path / "gate.xml"
    each = "each_tool.selection_accuracy>=0.95"
    assert report(cap, "--threshold", each, "--junit", str(junit)) == 1
    cases = {
        (s.get("name"), c.get("name")): c.find("failure") is None
        for s in ET.parse(junit).getroot().iter("testsuite")
        for c in s.iter("testcase")
    }
    # base: get_weather 2/2 selected right, get_time 0/1; cand: get_weather 1/2, get_time 1/1
    assert cases == {
        ("base", "tool:get_time.selection_accuracy>=0.95"): False,
        ("base", "tool:get_weather.selection_accuracy>=0.95"): True,
        ("cand", "tool:get_time.selection_accuracy>=0.95"): True,
        ("cand", "tool:get_weather.selection_accuracy>=0.95"): False,
    }
    one = "tool:get_weather.selection_accuracy>=0.95"
    assert report(cap, "-r", "base", "--threshold", one) == 0
    assert report(cap, "-r", "cand", "--threshold", one) == 1


def test_fail_on_regression_against_the_baseline(cap: Path) -> None:
    # cand is better on hallucination but worse on selection (c2 wrong tool, c3 spurious)
    assert report(cap, "--baseline", "base", "--fail-on-regression") == 1
    assert report(cap, "-r", "cand", "--baseline", "cand", "--fail-on-regression") == 0
    gated = ["--baseline", "base", "--fail-on-regression", "--threshold", "avg_ttft_ms<=1000"]
    assert report(cap, *gated) == 0  # only the thresholds' metrics are gated: cand is faster


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-r", "nope"], "unknown run(s) nope; runs: base, cand"),
        (["--threshold", "selection>=0.9"], "known metrics: "),
        (["--threshold", "pass_rate>0.9"], "expected METRIC>=NUMBER"),
        (["--fail-on-regression"], "needs --baseline"),
    ],
)
def test_usage_errors_exit_2(
    cap: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert report(cap, *args) == 2
    assert message in capsys.readouterr().err


def test_no_runs_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = store.init_capture(tmp_path / "empty")
    assert report(empty) == 2
    assert "no graded runs" in capsys.readouterr().err


def test_selected_runs_and_latest_grade_per_case(cap: Path) -> None:
    r = Rows()
    r.grade("base", "c4", "x5", ["get_time"], ["get_time"], at="2024-05-02T00:00:00+00:00")
    r.grade("base", "c9", "gone", ["get_time"], [], not_graded=True, reason="no_exchange: x")
    broken = {"run": "base", "case_id": "c8", "passed": "maybe", "graded_at": None}
    SegmentWriter(cap, "later").write({"grades": [*r.rows["grades"], broken, {"run": "base"}]})
    cases = load_cases(cap, ["base"])
    assert list(cases) == ["base"]
    by_id = {c.grade.case_id: c for c in cases["base"]}
    assert len(by_id) == 6 and by_id["c4"].grade.passed
    assert not by_id["c8"].grade.passed  # a wrongly typed value reads as NULL: not passed
    assert not by_id["c9"].observed and by_id["c9"].offered is None and by_id["c1"].observed
    assert by_id["c1"].offered == TOOLS and by_id["c1"].input_tokens == 100
    assert by_id["c1"].grade.session_id == "s1"  # from the exchange when the grade has none


def test_calls_lost_in_text_get_their_own_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cap = store.init_capture(tmp_path / "lost")
    r = Rows()
    hermes = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    r.exchange("z1", "u1", "Weather in Paris?", text=hermes)
    r.exchange("z2", "u2", "Weather in Paris?", text='[get_weather(city="Lyon")]')
    r.exchange("z3", "u3", "Weather in Paris?", text="It is sunny, I think.")
    r.exchange("z4", "u4", "Weather in Paris?", [("get_weather", '{"city": "Paris"}')])
    SegmentWriter(cap, "test").write(r.rows)
    cases = tmp_path / "cases.yaml"
    paris = "calls: [{tool: get_weather, args: {city: Paris}}]"
    cases.write_text("".join(f"- {{id: c{n}, exchange_id: z{n}, {paris}}}\n" for n in range(1, 5)))
    assert main(["grade", str(cases), "-c", str(cap), "--run", "lost"]) == 0
    capsys.readouterr()
    assert report(cap, "--json") == 0
    metrics = json.loads(capsys.readouterr().out)["metrics"]["lost"]
    assert metrics["label_counts"]["no_call"] == 3
    assert metrics["leaked_no_calls"] == 2
    assert metrics["leaked_formats"] == {"hermes": 1, "pythonic": 1}
    assert metrics["leaked_would_pass"] == 1  # Paris, as expected; Lyon is not
    assert report(cap) == 0
    out = capsys.readouterr().out
    section = out.split("Tool calls lost in text")[1]
    assert "lost  2              hermes 1, pythonic 1  1" in section, section
    assert store.query(cap, "SELECT case_id, leaked_format, leaked_label FROM grades ORDER BY 1")[
        1
    ] == [
        ("c1", "hermes", "passed"),
        ("c2", "pythonic", "hallucinated_param"),
        ("c3", None, None),
        ("c4", None, None),
    ]


def test_no_section_for_calls_lost_in_text_when_there_are_none(
    cap: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert report(cap) == 0
    assert "lost in text" not in capsys.readouterr().out


PRICES = """
prices:
  - model: "m"
    host: "api.example.com:*"
    input_per_mtok: 1.0
    output_per_mtok: 2.0
"""


def test_prices_give_cost_per_case_run_and_the_delta_vs_baseline(
    cap: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    assert report(cap, "--baseline", "base", "--prices", str(prices), "--json") == 0
    costs = json.loads(capsys.readouterr().out)["costs"]
    # base: four exchanges of 100 in / 10 out; cand: three of 80/5 and one of 100/10
    base, cand = (100 + 2 * 10) / 1e6, (3 * (80 + 2 * 5) + (100 + 2 * 10)) / 1e6
    assert costs["base"]["cost_total"] == pytest.approx(4 * base)
    assert costs["base"]["cost_per_passed"] == pytest.approx(4 * base / 2)
    assert costs["cand"]["cost_per_case"] == pytest.approx(cand / 4)
    assert costs["cand"]["cost_delta"] == pytest.approx((cand / 4) / base - 1)
    # cand's c3 called get_time with nothing expected: its share of y4's 5 output tokens
    assert costs["cand"]["over_tooling_tokens"] == 5
    assert costs["cand"]["over_tooling_cost"] == pytest.approx((80 + 2 * 5) / 1e6 * 5 / 85)
    assert costs["base"]["prices"] == [
        {"model": "m", "endpoint": "api.example.com:443", "how": "prices.yaml rule 1 (per token)",
         "input_per_mtok": 1.0, "output_per_mtok": 2.0, "cases": 4,
         "cost": pytest.approx(4 * base)},
    ]  # fmt: skip
    assert report(cap, "--baseline", "base", "--prices", str(prices)) == 0
    out = capsys.readouterr().out
    assert "Cost (prices: prices.yaml (1 rule), then genai-prices" in out
    assert "per case vs base" in out and "-18.7%" in out  # -18.75 %
    # cost is gateable like any metric
    assert report(cap, "--prices", str(prices), "--threshold", "cost_per_case<=0.0001") == 1
    gates = capsys.readouterr().out
    assert "cost_per_case<=0.0001" in gates and "failed" in gates


def test_without_a_price_file_an_unknown_endpoint_is_unpriced_and_said(
    cap: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert report(cap) == 0
    out = capsys.readouterr().out
    assert "endpoint api.example.com:443 is not a provider genai-prices knows" in out
    assert report(cap, "--json") == 0
    costs = json.loads(capsys.readouterr().out)["costs"]
    assert costs["base"]["unpriced_cases"] == 4 and costs["base"]["cost_total"] is None
    # a cost gate on a run nothing could price fails closed
    assert report(cap, "--threshold", "cost_per_case<=1") == 1


def test_a_baseline_report_ends_with_the_verdict_per_candidate(
    cap: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert report(cap, "--baseline", "base", "--threshold", "pass_rate>=0") == 0
    out = capsys.readouterr().out
    last = out[out.index("Verdict against base") :]
    assert "Gates" not in last  # the decision comes last
    assert re.search(r"cand +pass_rate +4 +0\.500 +0\.500 .* no verdict", last)  # too few cases
    assert report(cap, "--baseline", "base", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert {(v["run"], v["metric"]) for v in data["verdicts"]} == {
        ("cand", m) for m in ("pass_rate", "selection_accuracy", "hallucination_rate",
                              "omission_rate", "format_error_rate", "cost_per_case")
    }  # fmt: skip
    assert report(cap) == 0
    assert "Verdict against" not in capsys.readouterr().out  # no baseline, no verdict
