"""Every benchmark under `bench/` still runs: each at a small size, as a user would run it.

`mypy bench` (in `.ci/run`) catches a bench calling what no longer exists; this catches
the rest (a bench that raises, or one that stops printing). A bench too slow to run here
is listed in `NOT_RUN` with where what it drives is tested instead. No timings are
asserted: the numbers a bench prints at these sizes mean nothing.
"""

import subprocess
import sys

import pytest

from tests.paths import REPO

BENCH = REPO / "bench"

SMALL = {  # bench script -> its arguments for a run of a few seconds
    "bench_catalog.py": ["--exchanges", "200", "--live-files", "3", "--compact-files", "3"],
    "bench_cost.py": ["--cases", "200"],
    "bench_grade.py": ["--skip-bfcl", "--calls", "2000", "--naive-calls", "100"],
    "bench_html.py": ["--cases", "50", "--rounds", "1"],
    "bench_import.py": ["--flows", "100", "--rounds", "1"],
    "bench_mcp.py": ["--calls", "20", "--checks", "20"],
    "bench_otlp.py": ["--flows", "100", "--rounds", "1"],
    "bench_replay.py": ["--cases", "20", "--rounds", "1"],
    "bench_store.py": ["--files", "3", "--rows-per-file", "100"],
}

NOT_RUN = {
    "bench_capture.py": "35 s at --quick; tests/e2e drives the same mitmdump + addon paths",
    "bench_grade_e2e.py": "25 s at its smallest; tests/cli/test_grade.py runs `toolproxy grade`",
    "bench_tui.py": "needs ~700 exchanges for a second page (40 s); tests/tui drive the app",
}


def test_every_bench_is_listed():
    benches = {p.name for p in BENCH.glob("bench_*.py")}
    assert benches == SMALL.keys() | NOT_RUN.keys()
    assert not SMALL.keys() & NOT_RUN.keys()


@pytest.mark.parametrize("script", sorted(SMALL))
def test_bench_runs_small(script, tmp_path):
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *SMALL[script]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert any(ch.isdigit() for ch in done.stdout), done.stdout
