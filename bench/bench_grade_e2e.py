"""`toolproxy grade` end to end on 100,000 recorded calls, and what else loads the cases.

    .venv/bin/python bench/bench_grade_e2e.py [--calls 100000] [--rounds 3]

Two captures (`grade_capture.py`: written as a proxy writes them, then compacted), each with
its cases file (JSONL, one case per exchange):

- 20 schemas         every call to one of 20 tools
- schema per case    every case its own tool schema

For each, interleaved over --rounds rounds (median, and the range):

1. grade     `toolproxy grade CASES --run NAME` in a process of its own: load and check
             the cases, read the capture, grade, write the run (interpreter start
             included), into a fresh copy of the capture each time. The copy is opened
             once before the clock starts: a capture's first open in a new folder rewrites
             its views for that folder (0.3-0.5 s, timed and printed apart), which a
             capture graded where it was recorded never pays; and written back to disk
             (`os.sync`), or the kernel writes the copy's pages during the timed run (1.5 s
             more for a copy of 700 MB)
   grade, 10 runs held  the same into a copy already holding 10 earlier runs of these
             cases (one graded, nine copies of it under other names): what re-grading
             into the same capture meets (the run-name check once read every held grade)
   grade -j1 the same in one process (`--jobs 1`; `grade` forks one worker per core)
   grade, pure core  `grade` on the pure Python core (`TOOLPROXY_PURE=1`), when the
             compiled one (`toolproxy/util/compiled.py`) is in use
2. label     `toolproxy label --import CASES --out FILE`: the same cases checked and
             written back (bulk import)
3. plan      replay planning of the same cases (`load_cases` + `plan_from_cases` against
             the capture, timed inside its process), what `toolproxy replay --cases` does
             before it sends anything
4. report    `toolproxy report --run held-0` in the capture holding 10 runs: the metrics,
             costs and tables of one run, what a user reads after grading (its reads
             once parsed every held run's grades)
5. runs      the runs of that capture listed with their counts (`queries.runs.runs`,
             timed inside its process): what the TUI's runs screen and `report` without
             `--run` read first (it parsed every held run's grades; now each run's summary,
             written beside its grades, stands for them)

and prints cases per second against the goal (10,000 cases/s for `grade`). With
`--before SRC` (a checkout of an earlier commit, e.g. `git worktree add /tmp/before REV`)
every arm also runs that code, interleaved, and the ratio is printed. The venv's compiled
core is built from this tree's sources, so SRC runs on the pure core unless
`--before-python PY` names a Python whose venv holds SRC's own build:

    cp -a .venv /tmp/before-venv
    PYTHONPATH=/tmp/before /tmp/before-venv/bin/python /tmp/before/scripts/compile_core.py
    .venv/bin/python bench/bench_grade_e2e.py --before /tmp/before \
        --before-python /tmp/before-venv/bin/python

(the copy's scripts still name this venv's Python: each is run through PY here).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grade_capture  # type: ignore[import-not-found]

from toolproxy.util.compiled import PURE_ENV, core, in_use

TOOLPROXY = str(Path(sys.executable).with_name("toolproxy"))
# a script run with -c: -P keeps the working folder off sys.path (from a checkout's root it
# would import that checkout's toolproxy, not --before's)
SCRIPT = ("-P", "-c")
GOAL = 10_000
HELD = 10  # earlier runs in the capture of the `grade, 10 runs held` arm
PLAN = """
import sys, time
from pathlib import Path
try:
    from toolproxy.util.gctools import paused_gc
except ImportError:  # a --before checkout from before the tree was regrouped
    from toolproxy.gctools import paused_gc
from toolproxy.grade.expectations import load_cases
from toolproxy.replay.plan import plan_from_cases
t0 = time.perf_counter()
with paused_gc():
    plan = plan_from_cases(load_cases([Path(sys.argv[2])]), Path(sys.argv[1]))
took = time.perf_counter() - t0
assert len(plan) > 0, "planning found nothing to replay"
print(took)
"""


RUNS = f"""
import sys, time
from toolproxy import store
try:
    from toolproxy.store.queries.runs import runs
except ImportError:  # a --before checkout from before runs had a module of their own
    from toolproxy.store.queries.grades import runs
with store.reading(sys.argv[1]) as r:
    t0 = time.perf_counter()
    found = runs(r)
    took = time.perf_counter() - t0
assert len(found) == {HELD}, found
print(took)
"""


def timed(argv: list[str], src: str | None) -> float:
    """Seconds `argv` takes in a process of its own (`src`: a checkout whose toolproxy it
    runs instead of this one); a `-c` script (planning, a first open) reports its own
    time (imports excluded)."""
    env = dict(os.environ, PYTHONPATH=src) if src else None
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    took = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return float(done.stdout) if argv[1] == "-P" else took


SETTLE = """
import sys, time
from toolproxy import store
t0 = time.perf_counter()
with store.reading(sys.argv[1]):
    pass
print(time.perf_counter() - t0)
"""


def fresh_copy(capture: Path, src: str | None, python: str) -> float:
    """A fresh copy of `capture`, named `fresh`, beside it, opened once by the version under
    test (its views rewritten for the new folder): the seconds that first open took."""
    fresh = capture.with_name("fresh")
    shutil.rmtree(fresh, ignore_errors=True)
    shutil.copytree(capture, fresh)
    os.sync()  # the copy's pages written back now, not by the kernel during the timed run
    return timed([python, *SCRIPT, SETTLE, str(fresh)], src)


def holding_runs(capture: Path, cases: Path, runs: int) -> Path:
    """A copy of `capture` beside it, named `held`, holding `runs` runs of `cases`: one
    graded, the others its grades file under other run names (as a re-grade writes it)."""
    held = capture.with_name("held")
    shutil.copytree(capture, held)
    grade = [TOOLPROXY, "grade", str(cases), "-c", str(held), "--run", "held-0"]
    subprocess.run(grade, check=True, stdout=subprocess.DEVNULL)
    (graded,) = held.glob("segments/grade-*/grades.*.jsonl")
    # with the summary written beside it (`store.gradewrites`), when this version writes one
    summary = graded.with_name(graded.name.replace("grades.", "grade_writes.", 1))
    written = [summary] if summary.exists() else []
    for k in range(1, runs):
        folder = held / "segments" / f"grade-held-{k}"
        folder.mkdir()
        for path in [graded, *written]:
            renamed = path.read_bytes().replace(
                b'{"run":"held-0",', f'{{"run":"held-{k}",'.encode()
            )
            (folder / path.name).write_bytes(renamed)
    return held


def cli(python: str) -> list[str]:
    """The `toolproxy` command of `python`'s venv, run through that Python (a copied venv's
    scripts name the Python they were installed with)."""
    if python == sys.executable:
        return [TOOLPROXY]
    return [python, str(Path(python).with_name("toolproxy"))]


def arms(capture: Path, cases: Path, r: int, tag: str, python: str) -> dict[str, list[str]]:
    out = cases.with_name(f"labelled-{tag}-{r}.jsonl")
    toolproxy = cli(python)
    fresh = str(capture.with_name("fresh"))  # a copy of `capture` made before each grade
    grade = [*toolproxy, "grade", str(cases), "-c", fresh, "--run", f"{tag}-{r}"]
    one = {"grade -j1": [*grade, "--jobs", "1"]} if tag == "now" else {}  # before: no --jobs
    if tag == "now" and in_use():  # the same on the pure Python core
        one["grade, pure core"] = ["env", f"{PURE_ENV}=1", *grade]
    return {
        "grade": grade,
        f"grade, {HELD} runs held": grade,
        **one,
        "label --import": [*toolproxy, "label", "-c", str(capture), "--import", str(cases)]
        + ["-o", str(out)],
        "replay planning": [python, *SCRIPT, PLAN, str(capture), str(cases)],
        "report": [*toolproxy, "report", "-c", str(capture.with_name("held")), "-r", "held-0"],
        "runs listed": [python, *SCRIPT, RUNS, str(capture.with_name("held"))],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--before",
        metavar="SRC",
        help="also run a checkout of an earlier commit (its folder holding toolproxy/)",
    )
    parser.add_argument(
        "--before-python",
        metavar="PY",
        default=sys.executable,
        help="the Python --before runs with: one whose venv holds that checkout's own "
        "compiled core (default: this one, whose build is of this tree: the pure core)",
    )
    args = parser.parse_args()
    versions = {"now": (None, sys.executable)}
    if args.before:
        versions["before"] = (args.before, args.before_python)
    with tempfile.TemporaryDirectory() as tmp:
        shapes = {}
        for name, schemas in (("20 schemas", 20), ("schema per case", None)):
            folder = Path(tmp) / name.replace(" ", "-")
            folder.mkdir()
            t0 = time.perf_counter()
            shapes[name] = grade_capture.build(folder, args.calls, schemas)
            holding_runs(*shapes[name][:2], HELD)
            print(f"built {name}: {shapes[name][2]:,} cases in {time.perf_counter() - t0:.0f} s")
        times: dict[tuple[str, str, str], list[float]] = {}
        for r in range(args.rounds):
            for name, (capture, cases, _) in shapes.items():
                for version, (src, python) in versions.items():
                    for what, argv in arms(capture, cases, r, version, python).items():
                        if what.startswith("grade"):
                            held = capture.with_name("held") if "runs held" in what else capture
                            opened = fresh_copy(held, src, python)
                            times.setdefault((name, "first open", version), []).append(opened)
                        times.setdefault((name, what, version), []).append(timed(argv, src))
        cores = f"grading core: {core()}"
        if args.before:  # the core that checkout ran on, asked of its own Python
            asked = [args.before_python, *SCRIPT, "from toolproxy.util import compiled as c;"
                     " print(c.core())"]  # fmt: skip
            env = dict(os.environ, PYTHONPATH=args.before)
            before = subprocess.run(asked, capture_output=True, text=True, env=env).stdout
            cores += f"; before: {before.strip() or 'unknown'}"
        rounds = f"median of {args.rounds} interleaved rounds"
        print(f"\n{args.calls:,} recorded calls, {rounds}; {cores}")
        for (name, what, version), ts in times.items():
            if what == "first open":
                print(
                    f"  {name:16} {'first open':16} {version:6} {statistics.median(ts):6.2f} s"
                    "  (the copy's, before each grade; not counted)"
                )
                continue
            n = shapes[name][2]
            rate = n / statistics.median(ts)
            note = f"  {rate / GOAL:4.2f}x the goal" if what.startswith("grade") else ""
            if what == "grade" and (name, "grade -j1", version) in times:
                one = statistics.median(times[(name, "grade -j1", version)])
                note += f", {one / statistics.median(ts):3.1f}x one process"
            if version == "before":
                now = n / statistics.median(times[(name, what, "now")])
                note = f"  now {now / rate:.2f}x the rate before"
            print(
                f"  {name:16} {what:16} {version:6} {statistics.median(ts):6.2f} s"
                f"  {rate:>8,.0f} cases/s  ({n / max(ts):,.0f}-{n / min(ts):,.0f}){note}"
            )


if __name__ == "__main__":
    main()
