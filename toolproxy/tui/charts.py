"""Charts where people would rather look than read: a session's (or a run's) latency and
TTFB distributions and its tokens per turn, drawn in the terminal by plotext."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.screen import Screen
from textual.widgets import Footer, Header, Static
from textual_plotext import PlotextPlot

from toolproxy.grade.metrics import CaseRecord
from toolproxy.store.rows import ExchangeDetail

BINS = 20


@dataclass(frozen=True)
class Series:
    """One chart: a histogram of `values`, or bars of `values` over `labels`."""

    title: str
    kind: Literal["hist", "bars"]
    values: list[float]
    labels: list[str]
    xlabel: str


def _present(values: Sequence[float | int | None]) -> list[float]:
    return [float(v) for v in values if v is not None]


def session_charts(turns: Sequence[ExchangeDetail]) -> list[Series]:
    """Latency and TTFB distributions over a session's turns, and tokens per turn."""
    xs = [t.exchange for t in turns]
    labels = [str(n) for n in range(1, len(xs) + 1)]
    return [
        Series("latency (ms)", "hist", _present([x.latency_ms for x in xs]), [], "ms"),
        Series("TTFB (ms)", "hist", _present([x.ttfb_ms for x in xs]), [], "ms"),
        Series("input tokens per turn", "bars", [float(x.input_tokens or 0) for x in xs],
               labels, "turn"),
        Series("output tokens per turn", "bars", [float(x.output_tokens or 0) for x in xs],
               labels, "turn"),
    ]  # fmt: skip


def run_charts(records: Sequence[CaseRecord]) -> list[Series]:
    """TTFB and decode-speed distributions over a run's graded turns, and their tokens."""
    seen = [r for r in records if r.observed]
    return [
        Series("TTFB (ms)", "hist", _present([r.ttfb_ms for r in seen]), [], "ms"),
        Series("decode tokens/s", "hist", _present([r.decode_tps for r in seen]), [], "tok/s"),
        Series("input tokens per case", "hist", _present([r.input_tokens for r in seen]), [],
               "tokens"),
        Series("output tokens per case", "hist", _present([r.output_tokens for r in seen]), [],
               "tokens"),
    ]  # fmt: skip


def summary(series: Series) -> str:
    """`n 12 · min 80 · median 120 · max 900` (or that there is nothing to draw)."""
    if not series.values:
        return "no values recorded"
    ordered = sorted(series.values)
    mid = ordered[len(ordered) // 2]
    return f"n {len(ordered)} · min {ordered[0]:,.0f} · median {mid:,.0f} · max {ordered[-1]:,.0f}"


class ChartsScreen(Screen[None]):
    """Four charts in a grid, each with its summary as the title."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    ChartsScreen Grid { grid-size: 2 2; }
    ChartsScreen PlotextPlot { height: 1fr; }
    """

    def __init__(self, title: str, charts: list[Series]) -> None:
        super().__init__()
        self.heading = title
        self.charts = charts

    def compose(self) -> ComposeResult:
        yield Header()
        with Grid():
            for _ in self.charts:
                yield PlotextPlot()
        yield Static(self.heading, id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = self.heading
        for plot, series in zip(self.query(PlotextPlot), self.charts, strict=True):
            plt = plot.plt
            plt.title(f"{series.title}: {summary(series)}")
            plt.xlabel(series.xlabel)
            if series.values and series.kind == "hist":
                plt.hist(series.values, bins=BINS)
            elif series.values:
                plt.bar(series.labels, series.values)
