"""`report --html` opened in a real headless Chromium (Debian's package, driven by
Playwright; setup installs it): no console error, no request leaves the page, every chart
drawn by plotly.js, the baseline marked, the gallery there. The screenshot is kept in
test-artifacts/ (or $TOOLPROXY_TEST_ARTIFACTS)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from tests.paths import REPO
from toolproxy.cli.demo import run_demo
from toolproxy.cli.main import main

CHROMIUM = os.environ.get("TOOLPROXY_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(os.environ.get("TOOLPROXY_TEST_ARTIFACTS", REPO / "test-artifacts"))
FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--disable-background-networking", "--disable-extensions", "--no-first-run",
]  # fmt: skip
PRICES = """prices:
  - model: "*"
    host: "127.0.0.1:*"
    input_per_mtok: 1.0
    output_per_mtok: 4.0
"""


@pytest.fixture(scope="module")
def page_file(tmp_path_factory) -> Path:
    """The demo's capture graded twice: `base` as labeled, `cand` with a hallucination
    planted (Tokyo -> Osaka), reported with base as the baseline and prices."""
    home = tmp_path_factory.mktemp("html")
    capture, cases = home / "cap", home / "cases.yaml"
    run_demo(capture, out=lambda line: None)
    assert main(["label", "-c", str(capture), "--out", str(cases), "--no-calls"]) == 0
    assert main(["grade", str(cases), "-c", str(capture), "--run", "base"]) == 0
    cases.write_text(cases.read_text().replace("city: Tokyo", "city: Osaka"))
    assert main(["grade", str(cases), "-c", str(capture), "--run", "cand"]) == 0
    (home / "prices.yaml").write_text(PRICES)
    out = home / "report.html"
    argv = ["report", "-c", str(capture), "--baseline", "base", "--html", str(out)]
    assert main([*argv, "--prices", str(home / "prices.yaml")]) == 0
    return out


def test_the_page_renders_in_chromium(page_file):
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: scripts/setup.sh installs chromium"
    problems: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: m.type in ("error", "warning") and problems.append(
                f"console {m.type}: {m.text}"))  # fmt: skip
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_file.as_uri())
            page.wait_for_function(
                "[...document.querySelectorAll('.plot')].every(d => d.dataset.drawn === 'yes')",
                timeout=60_000,
            )
            charts = page.evaluate(
                """[...document.querySelectorAll('.plot')].map(d => ({
                    id: d.id,
                    svg: d.querySelectorAll('svg.main-svg').length,
                    traces: d.data.length,
                    marks: d.querySelectorAll('g.trace, g.hm image, g.heatmaplayer image').length,
                    bars: d.querySelectorAll('g.point path').length,
                    annotations: d.querySelectorAll('g.annotation').length,
                }))"""
            )
            baseline = page.inner_text("th.baseline")
            gallery = page.inner_text("#failures")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shot = ARTIFACTS / "report-html.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()

    assert problems == []
    assert requests == [page_file.as_uri()]  # plotly.js and all data are in the page
    ids = [c["id"] for c in charts]
    assert ids == [
        "chart-rates", "chart-labels", "chart-confusion-0", "chart-confusion-1", "chart-ttfb",
        "chart-latency", "chart-cost",
    ]  # fmt: skip
    for c in charts:  # every chart drew its data, not an empty frame
        assert c["svg"] >= 1 and c["traces"] >= 1 and c["marks"] >= 1, c
    by_id = {c["id"]: c for c in charts}
    assert by_id["chart-cost"]["bars"] == 2  # both runs priced
    assert by_id["chart-cost"]["annotations"] == 0
    assert baseline.startswith("base")
    assert "hallucinated_param" in gallery and "truncation" in gallery
    assert shot.stat().st_size > 50_000
