"""`toolproxy grade --jobs N`: JSONL cut into parts graded by forked workers gives what one
process gives (rows, summary, errors), through the installed command on a real capture."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.grade.test_runner import BASIC, WEATHER_PARIS, capture  # noqa: F401 - the fixture
from tests.store.helpers import summed_runs
from toolproxy import store
from toolproxy.grade.fanout import Part, cut

TOOLPROXY = [sys.executable, "-m", "toolproxy.cli"]

lines_text = st.lists(
    st.one_of(st.just(""), st.just("  "), st.text(alphabet="ab:{}\u2028 ", max_size=8)),
    max_size=30,
).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(lines_text, min_size=1, max_size=3), st.integers(1, 5))
def test_parts_are_whole_lines_that_cover_each_file(texts: list[str], jobs: int) -> None:
    parts = cut(texts, jobs)
    for f, text in enumerate(texts):
        mine = [p for p in parts if p.file == f]
        assert 1 <= len(mine) <= jobs
        assert "".join(text[p.start : p.end] for p in mine) == text
        for p in mine:
            assert p.start == 0 or text[p.start - 1] == "\n"  # starts a line
            assert p.first_line == text.count("\n", 0, p.start) + 1


def test_a_file_is_cut_near_equal_sizes() -> None:
    text = "".join(json.dumps({"id": f"c{i}"}) + "\n" for i in range(1000))
    parts = cut([text], 3)
    sizes = [p.end - p.start for p in parts]
    assert len(parts) == 3 and max(sizes) - min(sizes) < 40
    lines_before = text[: parts[0].end].splitlines()
    assert parts[1] == Part(0, parts[0].end, parts[1].end, len(lines_before) + 1)
    assert lines_before[-1] == json.dumps({"id": f"c{len(lines_before) - 1}"})


def many_cases(n: int) -> list[dict]:
    """`n` cases over the fixture's exchanges: passes, failures, not graded ones."""
    out = []
    for i in range(n):
        base = dict(BASIC[i % len(BASIC)])
        base["id"] = f"{base['id']}-{i}"
        if i % 7 == 3 and "calls" in base:
            base["calls"] = [{"tool": "get_weather", "args": {"city": f"Town {i}"}}]
        out.append(base)
    return out


def write_jsonl(path: Path, cases: list[dict], blank_every: int = 0) -> Path:
    lines = []
    for i, case in enumerate(cases):
        lines.append(json.dumps(case))
        if blank_every and i % blank_every == 0:
            lines.append("")
    path.write_text("\n".join(lines) + "\n")
    return path


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TOOLPROXY, *argv], capture_output=True, text=True, timeout=120)


def stored(cap: Path, name: str) -> list[tuple]:
    _, rows = store.query(
        cap,
        "SELECT case_id, exchange_id, session_id, model, passed, label, not_graded, reason, "
        "calls, expected_tools, called_tools, leaked_format, leaked_label FROM grades "
        "WHERE run = ? ORDER BY case_id",
        [name],
    )
    return rows


def test_parts_grade_as_one_process_does(capture, tmp_path) -> None:  # noqa: F811
    cases = write_jsonl(tmp_path / "cases.jsonl", many_cases(400), blank_every=9)
    outputs = {}
    for jobs in ("1", "2", "3"):
        done = run("grade", str(cases), "-c", str(capture), "--run", f"j{jobs}", "-j", jobs)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        first, _, rest = done.stdout.partition("\n")
        by = f" by {jobs} processes" if jobs != "1" else ""
        assert first == f"run j{jobs}: 400 cases graded into {capture}{by}"
        outputs[jobs] = rest
    assert outputs["2"] == outputs["1"] and outputs["3"] == outputs["1"]
    assert "not graded:" in outputs["1"] and "hallucinated_param" in outputs["1"]
    one = stored(capture, "j1")
    assert len(one) == 400
    assert stored(capture, "j2") == one and stored(capture, "j3") == one
    # one segment file per run, as from one process: whole or absent
    grade_files = sorted(p.parent.name for p in capture.glob("segments/grade-*/grades.*.jsonl"))
    assert len(grade_files) == len(set(grade_files)) == 3
    # the workers' lines came through files of their own, joined into that one and removed
    assert not list(capture.glob("segments/*/*.tmp"))
    assert len(list(capture.glob("segments/grade-*"))) == 3
    # each with the summary `runs` counts it by (the parts' summaries added up)
    summed = summed_runs(capture)
    assert sorted(summed) == ["j1", "j2", "j3"]
    passed = sum(1 for row in one if row[4])
    assert summed["j1"][:2] == summed["j2"][:2] == summed["j3"][:2] == (400, passed)


def test_json_output_is_the_same_in_parts(capture, tmp_path) -> None:  # noqa: F811
    cases = write_jsonl(tmp_path / "cases.jsonl", many_cases(60))
    outs = []
    for jobs in ("1", "2"):
        done = run("grade", str(cases), "-c", str(capture), "--run", "r" + jobs, "-j", jobs)
        again = run("grade", str(cases), "-c", str(capture), "--run", "s" + jobs, "-j", jobs)
        assert done.returncode == again.returncode == 0
        done = run(
            "grade", str(cases), "-c", str(capture), "--run", "t" + jobs, "-j", jobs, "--json"
        )
        out = json.loads(done.stdout)
        for row in out["grades"]:
            row.pop("run"), row.pop("graded_at")
        outs.append(out | {"run": None})
    assert outs[0] == outs[1] and len(outs[0]["grades"]) == 60


def test_problems_across_parts_are_reported_as_one_process_reports_them(
    capture,  # noqa: F811
    tmp_path,
) -> None:
    cases = many_cases(300)
    cases[20]["calls"] = "not a list"
    cases[250]["id"] = cases[10]["id"]  # a duplicate id, in another part
    cases[260]["id"] = cases[255]["id"]  # and one inside the same part
    del cases[200]["exchange_id"]
    path = write_jsonl(tmp_path / "cases.jsonl", cases, blank_every=50)
    text = path.read_text().splitlines()
    text[150] = '{"id": "broken", '  # not JSON, mid-file
    path.write_text("\n".join(text) + "\n")
    errs = {}
    for jobs in ("1", "2", "3"):
        done = run("grade", str(path), "-c", str(capture), "--run", "bad" + jobs, "-j", jobs)
        assert done.returncode == 2 and done.stdout == ""
        assert "Traceback" not in done.stderr
        errs[jobs] = done.stderr
    assert errs["2"] == errs["1"] and errs["3"] == errs["1"]
    for wanted in ("cases.jsonl:151: not valid JSON", "duplicate id", "calls", "needs exchange_id"):
        assert wanted in errs["1"]
    assert errs["1"].count("duplicate id") == 2
    assert not list(capture.glob("segments/grade-*"))  # nothing written, no folder left


def test_a_taken_run_name_is_refused_before_anything_is_written(capture, tmp_path) -> None:  # noqa: F811
    cases = write_jsonl(tmp_path / "cases.jsonl", many_cases(100))
    assert run("grade", str(cases), "-c", str(capture), "--run", "x", "-j", "2").returncode == 0
    files = sorted(capture.glob("segments/grade-*/*"))
    done = run("grade", str(cases), "-c", str(capture), "--run", "x", "-j", "2")
    assert done.returncode == 2
    assert done.stderr.startswith("toolproxy: run 'x' already has 100 grades")
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert sorted(capture.glob("segments/grade-*/*")) == files
    assert {f.parent for f in files} == set(capture.glob("segments/grade-*"))  # no new folder


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_path_that_is_no_capture_is_refused_and_left_as_it_was(tmp_path, jobs) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", many_cases(100))
    for missing in (tmp_path / "typo", tmp_path / "empty"):
        if missing.name == "empty":
            missing.mkdir()
        done = run("grade", str(cases), "-c", str(missing), "--run", "x", "-j", jobs)
        assert done.returncode == 2 and done.stdout == ""
        assert (
            done.stderr
            == f"toolproxy: {missing} is not a toolproxy capture: no capture.duckdb in it\n"
        )
        assert not missing.exists() or not list(missing.iterdir())  # no capture made of it


def test_yaml_files_and_a_judge_grade_in_one_process(capture, tmp_path) -> None:  # noqa: F811
    path = tmp_path / "cases.yaml"
    path.write_text(json.dumps([{"id": "a", "exchange_id": "ex-good", "calls": WEATHER_PARIS}]))
    done = run("grade", str(path), "-c", str(capture), "--run", "y", "-j", "2")
    assert done.returncode == 0 and done.stdout.startswith(f"run y: 1 case graded into {capture}\n")


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def grading_in_workers(cap: Path, tmp_path: Path) -> tuple[subprocess.Popen[str], list[int]]:
    """`toolproxy grade -j 2` on 40,000 cases, once both its workers run: (it, them)."""
    cases = write_jsonl(tmp_path / "cases.jsonl", many_cases(40_000))
    argv = [*TOOLPROXY, "grade", str(cases), "-c", str(cap), "--run", "stop", "-j", "2"]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while len(children(proc.pid)) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    workers = children(proc.pid)
    assert len(workers) >= 2, "the workers never started"
    return proc, workers


def gone(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "zombie" in status.read_text()


@pytest.mark.parametrize("how", ["ctrl-c", "kill"])
def test_stopping_midway_leaves_no_worker_and_no_run(capture, tmp_path, how) -> None:  # noqa: F811
    proc, workers = grading_in_workers(capture, tmp_path)
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends the whole group
    else:
        proc.terminate()  # the parent alone
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == (130 if how == "ctrl-c" else 143)
    assert "Traceback" not in err
    assert all(gone(pid) for pid in workers)
    assert not list(capture.glob("segments/grade-*"))  # staged lines removed with their folder


def test_a_worker_killed_by_the_system_fails_the_run_clearly(capture, tmp_path) -> None:  # noqa: F811
    proc, workers = grading_in_workers(capture, tmp_path)
    os.kill(workers[0], signal.SIGKILL)  # what the out-of-memory killer does
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and out == ""
    assert err.startswith("toolproxy: a grading worker died") and err.count("\n") == 1
    assert not list(capture.glob("segments/grade-*"))
    assert all(gone(pid) for pid in workers)
