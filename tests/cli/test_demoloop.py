"""`toolproxy demo`, the whole loop for real: mcp-server-time, the local model (or the
scripted one), mitmdump + toolproxy, the `openai` SDK agent, grading. What is asserted is
the pipeline and that the labels agree with what was recorded, not the model's quality."""

from __future__ import annotations

import pytest

from toolproxy import store
from toolproxy.cli.demoloop import DEMO_KEY, TASKS, one_line, run_demo, summary_line
from toolproxy.grade.expectations import load_cases

pytestmark = pytest.mark.e2e
SELECTION = {"no_call", "spurious_call", "wrong_tool", "parallel_collapse"}


def rows(capture, sql):
    return store.query(capture, sql)[1]


def recorded_calls(capture) -> dict[str, list[str]]:
    """Each demo session's first turn's tool names."""
    found = rows(
        capture,
        "WITH first AS (SELECT session_id, exchange_id FROM exchanges "
        "WHERE session_id LIKE 'demo-%' "
        "QUALIFY row_number() OVER (PARTITION BY session_id ORDER BY started_at) = 1) "
        "SELECT f.session_id, list(c.name ORDER BY c.index) FILTER (WHERE c.name IS NOT NULL) "
        "FROM first f LEFT JOIN tool_calls c USING (exchange_id) GROUP BY f.session_id",
    )
    return {sid: names or [] for sid, names in found}


def graded(capture, run) -> dict[str, tuple[bool, str | None]]:
    sql = f"SELECT case_id, passed, label FROM grades WHERE run = '{run}'"
    return {case: (passed, label) for case, passed, label in rows(capture, sql)}


def test_the_loop_with_the_real_local_model(tmp_path):
    capture = tmp_path / "demo"
    lines: list[str] = []
    assert run_demo(capture, out=lines.append) == 0
    text = "\n".join(lines)
    assert "local model smollm2-135m-instruct at http://127.0.0.1:" in text
    assert rows(capture, "SELECT count(DISTINCT name) FROM mcp_tools") == [(2,)]
    captured = "SELECT DISTINCT session_id FROM exchanges WHERE proxy_id NOT LIKE 'replay:%'"
    assert {s for (s,) in rows(capture, captured)} == {f"demo-{t.id}" for t in TASKS}
    cases = load_cases([capture / "expectations.yaml"])
    assert [c.id for c in cases] == [t.id for t in TASKS]
    grades = graded(capture, "demo-smollm2-135m-instruct")
    assert set(grades) == {t.id for t in TASKS}
    calls = recorded_calls(capture)
    for task in TASKS:
        passed, label = grades[task.id]
        made = calls[f"demo-{task.id}"]
        assert passed == (label is None), (task.id, passed, label)
        if task.tool is None:  # nothing should be called
            assert (label == "spurious_call") == bool(made), (task.id, made, label)
        elif not made:
            assert label == "no_call"
        elif made != [task.tool]:
            assert label in SELECTION, (task.id, made, label)
        else:
            assert label not in SELECTION, (task.id, made, label)
    # each first-turn call was run on the MCP server and its result went back, linked to it
    linked = rows(
        capture,
        "SELECT count(*) FROM tool_results r JOIN exchanges e "
        "ON e.exchange_id = r.call_exchange_id WHERE e.session_id LIKE 'demo-%'",
    )[0][0]
    unlinked = rows(capture, "SELECT count(*) FROM tool_results WHERE call_exchange_id IS NULL")
    assert linked >= sum(len(v) for v in calls.values()) and unlinked == [(0,)]
    assert f"browse:  toolproxy tui {capture} --run demo-smollm2-135m-instruct" in text
    # replayed against the second candidate (the same model, warmer), graded the same way
    warm = graded(capture, "demo-replay:smollm2-warm")
    assert set(warm) == {f"{t.id}#0" for t in TASKS}
    assert all(passed == (label is None) for passed, label in warm.values())
    assert rows(capture, "SELECT count(*), count(*) FILTER (WHERE status = 'completed') "
                "FROM replay_cells WHERE run = 'demo-replay'") == [(6, 6)]  # fmt: skip
    assert f"diffs:   toolproxy replay-diff demo-replay -c {capture} --changed" in text
    for path in capture.rglob("*"):
        if path.is_file():
            assert DEMO_KEY.encode() not in path.read_bytes()


def test_the_scripted_model_gets_every_task_right(tmp_path):
    capture = tmp_path / "demo"
    lines: list[str] = []
    assert run_demo(capture, scripted=True, out=lines.append) == 0
    assert "the local model is not used: asked for (--scripted)" in lines
    assert "\n(the replay against a second candidate needs the local model: skipped)" in lines
    assert graded(capture, "demo-scripted-strong") == {t.id: (True, None) for t in TASKS}
    assert f"{len(TASKS)} of {len(TASKS)} passed" in lines  # nothing after it


def test_the_summary_line_names_labels_only_when_some_failed():
    assert summary_line({"passed": 6, "cases": 6, "by_label": {}}) == "6 of 6 passed"
    both = {"passed": 3, "cases": 6, "by_label": {"wrong_tool": 2, "no_call": 1}}
    assert summary_line(both) == "3 of 6 passed; wrong_tool 2, no_call 1"


def test_one_line():
    assert one_line("a\n  b\tc", 10) == "a b c"
    assert one_line("abcdefghijk", 5) == "abcd…"


def test_the_walkthrough_s_scripted_model_is_the_demo_s():
    from pathlib import Path

    from toolproxy.cli.demoloop import scripted_model
    from toolproxy.scripted.script import Script

    shipped = Script.load(Path(__file__).resolve().parents[2] / "examples" / "time-model.yaml")
    assert shipped.replies["default"] == scripted_model().replies["scripted-strong"]


def descendants(root: int) -> list[int]:
    """Every process below `root`, from /proc."""
    from pathlib import Path

    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            found.append(kid)
            todo.append(kid)
    return found


def cmdline(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/cmdline").read().replace("\0", " ")
    except OSError:
        return ""


def running(pid: int) -> bool:
    from pathlib import Path

    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize(("stop", "code"), [("ctrl-c", 130), ("kill", 143)], ids=["ctrl-c", "kill"])
def test_stopping_the_demo_midway_stops_all_it_started(stop, code, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    toolproxy = os.path.join(os.path.dirname(sys.executable), "toolproxy")
    demo = subprocess.Popen(
        [toolproxy, "demo", "-c", str(tmp_path / "cap")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert demo.stdout is not None
    seen = []
    for line in demo.stdout:  # the model, the proxy and the MCP server are all up
        seen.append(line)
        if line.startswith("running 6 tasks"):
            break
    wanted = ("localmodel.server", "mitmdump", "mcp_server_time")
    deadline = time.monotonic() + 30  # the agent starts the MCP server right after
    while True:
        started = descendants(demo.pid)
        names = " ".join(cmdline(p) for p in started)
        if all(w in names for w in wanted) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert all(w in names for w in wanted), names
    if stop == "ctrl-c":  # a terminal sends it to the whole foreground process group
        os.killpg(demo.pid, signal.SIGINT)
    else:
        demo.send_signal(signal.SIGTERM)
    rest = demo.stdout.read()
    assert demo.wait(timeout=60) == code, "".join(seen) + rest
    assert "Traceback" not in rest, rest
    deadline = time.monotonic() + 10
    while [p for p in started if running(p)] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [p for p in started if running(p)] == []
