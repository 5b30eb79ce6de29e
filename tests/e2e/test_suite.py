"""The conformance suite, end to end: `toolproxy upstream --personas` and the real local
model as candidates, `toolproxy replay --suite conformance`, `toolproxy report`'s matrix of
candidates × task families. Every command is the installed one, in a process of its own."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from toolproxy.capture.proxy import free_port
from toolproxy.grade.expectations import load_cases
from toolproxy.suites import suite_path

ROOT = Path(__file__).resolve().parents[2]
TOOLPROXY = str(Path(sys.executable).with_name("toolproxy"))
CASES = load_cases([suite_path("conformance")])
FAMILIES = sorted({t for c in CASES for t in c.tags})
PER_FAMILY = {f: sum(f in c.tags for c in CASES) for f in FAMILIES}


@contextmanager
def serving(argv: list[str], url: str, timeout: float = 120) -> Iterator[None]:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(url, timeout=2)
                break
            except OSError as exc:
                if "HTTP Error" in str(exc):  # it answers
                    break
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, f"{argv} never answered"
                time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def config_at(tmp_path: Path, source: str, port: int) -> Path:
    config = yaml.safe_load((ROOT / "replays" / source).read_text())
    for candidate in config["candidates"]:
        candidate["base_url"] = f"http://127.0.0.1:{port}/v1"
    path = tmp_path / source
    path.write_text(yaml.safe_dump(config))
    return path


def report(capture: Path) -> dict:
    done = subprocess.run(
        [TOOLPROXY, "report", "-c", str(capture), "--json"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_personalities_fill_the_matrix_as_they_should(tmp_path) -> None:
    port, capture = free_port(), tmp_path / "cap"
    config = config_at(tmp_path, "personas.yaml", port)
    upstream = [TOOLPROXY, "upstream", "--personas", "conformance", "--port", str(port)]
    with serving(upstream, f"http://127.0.0.1:{port}/v1/models"):
        done = subprocess.run(
            [TOOLPROXY, "replay", str(config), "--suite", "conformance", "-c", str(capture),
             "--run", "suite", "--no-progress"],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"{len(CASES)} item(s) x 4 candidate(s) x k=3" in done.stderr
    data = report(capture)
    families = data["families"]
    assert set(families) == {f"suite:{p}" for p in ("perfect", "leaky", "sloppy", "silent")}
    for family, n in PER_FAMILY.items():
        perfect, leaky = families["suite:perfect"][family], families["suite:leaky"][family]
        sloppy, silent = families["suite:sloppy"][family], families["suite:silent"][family]
        assert perfect["cases"] == perfect["graded"] == perfect["passed"] == 3 * n
        if family == "no_call":
            assert leaky["passed"] == silent["passed"] == 3 * n
            assert sloppy["passed"] == 0 and sloppy["labels"] == {"spurious_call": 3 * n}
        else:
            assert leaky["passed"] == silent["passed"] == sloppy["passed"] == 0
            assert leaky["labels"] == silent["labels"] == {"no_call": 3 * n}
    calls = 3 * (len(CASES) - PER_FAMILY["no_call"])
    leaky_metrics = data["metrics"]["suite:leaky"]
    assert leaky_metrics["leaked_no_calls"] == leaky_metrics["leaked_would_pass"] == calls
    assert leaky_metrics["leaked_formats"] == {"hermes": calls}
    assert data["metrics"]["suite:silent"]["leaked_no_calls"] == 0


def test_the_suite_against_the_real_local_model(tmp_path) -> None:
    port, capture = free_port(), tmp_path / "cap"
    config = config_at(tmp_path, "smollm2.yaml", port)
    with serving([TOOLPROXY, "model", "serve", "--port", str(port)],
                 f"http://127.0.0.1:{port}/v1/models"):  # fmt: skip
        done = subprocess.run(
            [TOOLPROXY, "replay", str(config), "--suite", "conformance", "-k", "1",
             "-c", str(capture), "--run", "local", "--no-progress"],
            capture_output=True, text=True, timeout=3600,  # a hang guard: ~100 s idle
        )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr  # 1: some of its cells failed (said why)
    assert f"{len(CASES)} item(s) x 1 candidate(s) x k=1" in done.stderr
    assert "Traceback" not in done.stderr
    families = report(capture)["families"]["local:smollm2"]
    assert set(families) == set(FAMILIES)  # every family in its column
    for family, n in PER_FAMILY.items():
        score = families[family]
        assert score["cases"] == n  # one grade per task, whatever the model did
        assert score["passed"] + sum(score["labels"].values()) == score["graded"]
