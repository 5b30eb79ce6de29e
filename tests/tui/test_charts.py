"""toolproxy.tui.charts: a session's and a run's distributions, drawn by plotext."""

from __future__ import annotations

from textual_plotext import PlotextPlot

from tests.tui.drive import keys, pinned_app, settle
from toolproxy import store
from toolproxy.grade.grades import CaseGrade
from toolproxy.grade.metrics import CaseRecord
from toolproxy.store.queries import exchanges
from toolproxy.tui.app import ToolproxyApp
from toolproxy.tui.charts import ChartsScreen, Series, run_charts, session_charts, summary


def test_a_sessions_charts(seeded_capture):
    with store.reading(seeded_capture) as r:
        turns = exchanges.details(r, ["a-0", "a-1", "a-2"])
    latency, ttfb, tokens_in, tokens_out = session_charts(turns)
    assert latency.values == [] and summary(latency) == "no values recorded"
    assert ttfb.values == [100.0, 100.0, 100.0] and ttfb.kind == "hist"
    assert (tokens_in.labels, tokens_in.values) == (["1", "2", "3"], [10.0, 10.0, 10.0])
    assert tokens_out.kind == "bars"


def test_a_runs_charts_leave_out_turns_not_observed():
    def record(ttfb, observed=True):
        return CaseRecord(
            grade=CaseGrade(case_id="c", passed=True), observed=observed, ttfb_ms=ttfb,
            decode_tps=40.0, input_tokens=10, output_tokens=3,
        )  # fmt: skip

    ttfb, tps, tokens_in, _ = run_charts([record(80.0), record(120.0), record(900.0, False)])
    assert ttfb.values == [80.0, 120.0] and tps.values == [40.0, 40.0]
    assert summary(ttfb) == "n 2 · min 80 · median 120 · max 120"
    assert summary(Series("x", "hist", [3.0, 1.0, 2.0], [], "")) == (
        "n 3 · min 1 · median 2 · max 3"
    )


async def test_c_draws_a_sessions_charts_and_a_runs(seeded_capture):
    app = ToolproxyApp(seeded_capture, session="s-a")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, ChartsScreen)
        assert len(app.screen.query(PlotextPlot)) == 4
        assert app.screen.heading == "session s-a"
        await pilot.press("escape", "escape", "g", "enter")
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, ChartsScreen) and app.screen.heading == "run g1"


def test_snapshot_session_charts(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch, session="s-a")
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys("c"))
