"""`toolproxy replay` end to end: sessions recorded through real mitmdump by the real
`openai` SDK, replayed to scripted candidates (one upstream per personality, k = 3),
graded and reported; a run killed with `kill -9` and resumed; live tools on a real MCP
server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import openai
import pytest

from toolproxy import store
from toolproxy.cli.main import main
from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream

from .conftest import rows, wait_rows

pytestmark = pytest.mark.e2e

KEY_ENV = "REPLAY_E2E_KEY"
KEY = "sk-replay-e2e-SECRET-4242424242"
WEATHER_SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "weather.py"
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": CITY}},
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
        },
    },
]
RESULT = "18C and sunny"
# (user message marking the session, streamed): the markers tell the items apart upstream
SESSIONS = [
    ("Weather in Paris? (trip 1)", False),
    ("Weather in Paris? (trip 2)", False),
    ("Weather in Paris? (trip 3)", True),
]
REPEATS = 3


def call(name: str = "get_weather", **arguments: Any) -> Reply:
    return Reply(tool_calls=[ScriptedCall(name=name, arguments=arguments)])


PARIS = call(city="Paris")
ANSWER = Reply(text="It is 18C in Paris.")


# --- recording: the real SDK through the real proxy -------------------------------------


def agent_turn(client: openai.OpenAI, messages: list, tools: list, stream: bool) -> dict:
    """One model turn as an agent makes it; the assistant message it appends."""
    if not stream:
        reply = client.chat.completions.create(model="prod", messages=messages, tools=tools)
        return reply.choices[0].message.model_dump(exclude_none=True)
    text: list[str] = []
    calls: dict[int, dict] = {}
    chunks = client.chat.completions.create(
        model="prod", messages=messages, tools=tools, stream=True
    )
    for chunk in chunks:
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            for tc in choice.delta.tool_calls or []:
                slot = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                slot["id"] = tc.id or slot["id"]
                if tc.function is not None:
                    slot["name"] += tc.function.name or ""
                    slot["arguments"] += tc.function.arguments or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in (calls[i] for i in sorted(calls))
        ]
    return message


def record_sessions(proxy, upstream, capture, sessions, tools, result: str) -> None:
    """Each session: the model calls a tool, the agent sends `result` back, the model
    answers. The upstream plays `upstream`'s current script for the model turns."""
    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="sk-agent", max_retries=0)
    for text, stream in sessions:
        messages: list[dict] = [{"role": "user", "content": text}]
        reply = agent_turn(client, messages, tools, stream)
        messages.append(reply)
        for tc in reply["tool_calls"]:
            messages.append({"role": "tool", "tool_call_id": tc["id"], "content": result})
        final = agent_turn(client, messages, tools, stream)
        assert final["content"] and "tool_calls" not in final
    got = wait_rows(capture, "SELECT session_id FROM exchanges", 2 * len(sessions))
    assert len(got) == 2 * len(sessions)
    assert len({s for (s,) in got}) == len(sessions)  # one session per conversation


@pytest.fixture
def recorded(upstream, proxy, capture, monkeypatch):
    """A capture with the SESSIONS recorded through the real proxy; keys in the env."""
    monkeypatch.setenv(KEY_ENV, KEY)
    upstream.set_script(Script(cycle=True, replies={"default": [PARIS, ANSWER]}))
    record_sessions(proxy, upstream, capture, SESSIONS, TOOLS, RESULT)
    return capture


# --- candidates ---------------------------------------------------------------------------


def write_config(path: Path, candidates: dict[str, dict], repeats: int = REPEATS) -> Path:
    """A replay config naming each candidate with its own options."""
    lines = [f"repeats: {repeats}", "feedback_retries: 2", "candidates:"]
    for name, options in candidates.items():
        lines += [f"  - name: {name}", f"    model: {name}", f"    api_key_env: {KEY_ENV}"]
        lines += [f"    {k}: {v}" for k, v in options.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def serve(replies: list[Reply]) -> ScriptedUpstream:
    """An upstream that plays `replies` in a loop to every request."""
    return ScriptedUpstream(Script(cycle=True, replies={"default": replies}))


def per_cell_ordered(upstream: ScriptedUpstream) -> dict:
    """Options of a candidate whose replies must follow each cell's requests in order."""
    return {"base_url": upstream.url + "/v1", "concurrency": 1, "retries": 1, "timeout_s": 10}


def parallel(upstream: ScriptedUpstream) -> dict:
    """Options of a candidate that answers every request the same way."""
    return {"base_url": upstream.url + "/v1", "concurrency": 3, "retries": 1, "timeout_s": 10}


PERSONALITIES: dict[str, list[Reply]] = {
    "correct": [PARIS, ANSWER],
    "wrong_tool": [call("get_time", tz="Europe/Paris")],
    "lyon": [call(city="Lyon")],
    "recovers": [call(town="Paris"), PARIS, ANSWER],  # the first misses `city`
    "never": [call(town="Paris")],
    "slow": [Reply(tool_calls=PARIS.tool_calls, delay_s=0.05), Reply(text="18C", delay_s=0.05)],
    "limited": [Reply(status=429, retry_after=0.2), PARIS, ANSWER],
    "err500": [Reply(status=500, error_body={"error": {"message": f"boom {KEY}"}})],
    "garbage": [Reply(raw_body="<html>not a completion</html>", content_type="text/html")],
    "cut": [Reply(tool_calls=PARIS.tool_calls, cut_after_events=2, cut_after_bytes=40)],
    "hang": [Reply(hang_s=5)],
}
ORDERED = {"correct", "recovers", "slow", "limited"}


def cells_of(capture: Path, run: str) -> dict[str, list[dict]]:
    """The run's `replay_cells` rows by candidate; fails on a cell written twice."""
    names, found = store.query(capture, "SELECT * FROM replay_cells WHERE run = ?", [run])
    seen: Counter = Counter()
    out: dict[str, list[dict]] = {}
    for values in found:
        row = dict(zip(names, values, strict=True))
        seen[(row["candidate"], row["item_id"], row["repeat"])] += 1
        out.setdefault(row["candidate"], []).append(row)
    assert not [k for k, n in seen.items() if n > 1], "a cell written twice"
    return out


def step0_requests(upstream: ScriptedUpstream) -> Counter:
    """Requests that opened a cell (no tool message yet), by the session's user message."""
    found: Counter = Counter()
    for r in upstream.requests:
        messages = (r.body or {}).get("messages") or []
        if messages and not any(m.get("role") == "tool" for m in messages):
            found[messages[0]["content"]] += 1
    return found


def test_personalities_k3_graded_and_reported(recorded, tmp_path, capsys):
    capture = recorded
    ups = {name: serve(replies) for name, replies in PERSONALITIES.items()}
    try:
        options = {
            name: per_cell_ordered(up) if name in ORDERED else parallel(up)
            for name, up in ups.items()
        }
        options["hang"] |= {"timeout_s": 0.5, "retries": 0}
        cfg = write_config(tmp_path / "cands.yaml", options)
        capsys.readouterr()
        argv = ["replay", str(cfg), "-c", str(capture), "--run", "r1", "--no-progress"]
        assert main([*argv, "--json"]) == 0
        out = capsys.readouterr()
        summary = json.loads(out.out)
        sent = {name: len(up.requests) for name, up in ups.items()}
        # the same command again: every cell is done, nothing is sent
        assert main([*argv, "--no-grade"]) == 0
        assert {name: len(up.requests) for name, up in ups.items()} == sent
        auth = {r.headers.get("authorization") for up in ups.values() for r in up.requests}
        starts = {n: step0_requests(up) for n, up in ups.items()}
    finally:
        for up in ups.values():
            up.stop()

    items = len(SESSIONS)
    cells = cells_of(capture, "r1")
    assert set(cells) == set(PERSONALITIES)  # the faulty ones stopped nobody
    assert all(len(c) == items * REPEATS for c in cells.values())

    def field(name: str, key: str) -> Counter:
        return Counter(c[key] for c in cells[name])

    n = items * REPEATS
    for name in ("correct", "slow", "limited"):
        assert field(name, "status") == {"completed": n}, cells[name]
        assert field(name, "retry_count") == {0: n} and field(name, "recovered") == {None: n}
    for name in ("wrong_tool", "lyon"):
        assert field(name, "status") == {"diverged": n} and field(name, "diverged_at") == {0: n}
    assert "called get_time instead of get_weather" in cells["wrong_tool"][0]["divergence"]
    assert "city 'Lyon' vs 'Paris'" in cells["lyon"][0]["divergence"]
    assert field("recovers", "status") == {"completed": n}
    assert field("recovers", "retry_count") == {1: n}
    assert field("recovers", "recovered") == {True: n}
    assert field("never", "status") == {"diverged": n}
    assert field("never", "retry_count") == {2: n} and field("never", "recovered") == {False: n}
    failed = {"err500": "server_error", "garbage": "bad_response", "hang": "timeout"}
    for name, kind in failed.items():
        assert field(name, "status") == {"failed": n}
        assert field(name, "error_kind") == {kind: n}, cells[name]
    assert field("cut", "status") == {"failed": n}
    streamed = [c for c in cells["cut"] if c["item_id"] == streamed_item(capture)]
    assert {c["error_kind"] for c in streamed} == {"cut_stream"}

    # what each upstream was sent: k repeats of every session; retries where due
    for name in PERSONALITIES:
        # retried once (retries: 1): 5xx, cut replies, and each 429 once Retry-After passed
        times = 2 if name in ("err500", "cut", "limited") else 1
        assert starts[name] == Counter({t: times * REPEATS for t, _ in SESSIONS}), name
    assert sent["correct"] == sent["slow"] == 2 * n and sent["limited"] == 3 * n
    assert auth == {f"Bearer {KEY}"}

    # recorded vs replayed, per call of the first attempt
    diffs = diffs_of(capture, "r1")
    assert {(d["same_tool"], d["same_arguments"], d["label"]) for d in diffs["correct"]} == {
        (True, True, None)
    }
    assert len(diffs["correct"]) == n  # step 0 only: step 1 is text on both sides
    assert {(d["same_tool"], d["label"]) for d in diffs["wrong_tool"]} == {(False, "wrong_tool")}
    assert {(d["same_tool"], d["same_arguments"], d["label"]) for d in diffs["lyon"]} == {
        (True, False, "hallucinated_param")
    }
    assert {d["label"] for d in diffs["recovers"]} == {"missing_required"}
    assert not diffs.get("err500") and not diffs.get("hang")

    # graded like recorded traffic: one run per candidate and one for production
    graded = grades_of(capture, "r1")
    assert set(graded) == {f"r1:{name}" for name in PERSONALITIES} | {"r1:recorded"}
    steps = 2 * n  # every step of every cell, reached or not
    assert all(len(g) == steps for g in graded.values())
    assert all(g["passed"] for g in graded["r1:recorded"])
    assert all(g["passed"] for g in graded["r1:correct"])
    assert labels(graded["r1:wrong_tool"]) == {"wrong_tool": n}
    assert labels(graded["r1:lyon"]) == {"hallucinated_param": n}
    assert labels(graded["r1:recovers"]) == {"missing_required": n}
    assert all(g["not_graded"] for g in graded["r1:err500"])
    assert {g["source"] for g in graded["r1:correct"]} == {"replay:correct"}
    by_name = {row["candidate"]: row for row in summary["summary"]}
    assert by_name["correct"]["pass_rate"] == 1.0 and by_name["recorded"]["pass_rate"] == 1.0
    assert by_name["recovers"]["recovered"] == f"{n}/{n}"
    assert "--baseline r1:recorded" in summary["report"]

    runs = ["r1:recorded", "r1:correct", "r1:wrong_tool", "r1:lyon", "r1:recovers", "r1:err500"]
    report = ["report", "-c", str(capture), "--baseline", "r1:recorded"]
    for run in runs:
        report += ["--run", run]
    capsys.readouterr()
    assert main(report) == 0
    table = capsys.readouterr().out
    assert "irf_score" in table and "r1:correct" in table
    assert main([*report, "--json"]) == 0
    irf = irf_scores(json.loads(capsys.readouterr().out))
    assert set(irf) == set(runs)  # a score per run (its ranks mix in timings: not compared)

    for path in capture.rglob("*"):  # keys never reach the capture, not even echoed ones
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def streamed_item(capture: Path) -> str:
    """The item id (session id) of the streamed recorded session."""
    found = rows(
        capture,
        "SELECT DISTINCT session_id FROM exchanges WHERE streamed "
        "AND coalesce(proxy_id, '') NOT LIKE 'replay:%'",
    )
    assert len(found) == 1
    return found[0][0]


def diffs_of(capture: Path, run: str) -> dict[str, list[dict]]:
    names, found = store.query(capture, "SELECT * FROM replay_diffs WHERE run = ?", [run])
    out: dict[str, list[dict]] = {}
    for values in found:
        row = dict(zip(names, values, strict=True))
        out.setdefault(row["candidate"], []).append(row)
    return out


def grades_of(capture: Path, prefix: str) -> dict[str, list[dict]]:
    names, found = store.query(
        capture, "SELECT * FROM grades WHERE starts_with(run, ?)", [prefix + ":"]
    )
    out: dict[str, list[dict]] = {}
    for values in found:
        row = dict(zip(names, values, strict=True))
        out.setdefault(row["run"], []).append(row)
    return out


def labels(graded: list[dict]) -> Counter:
    return Counter(g["label"] for g in graded if g["label"])


def irf_scores(report: Any) -> dict[str, float]:
    """run -> irf_score, wherever the report's JSON keeps it."""
    found: dict[str, float] = {}

    def walk(node: Any, run: str | None) -> None:
        if isinstance(node, dict):
            here = node.get("run") if isinstance(node.get("run"), str) else run
            if "irf_score" in node and here and isinstance(node["irf_score"], int | float):
                found[here] = float(node["irf_score"])
            for key, value in node.items():
                walk(value, key if key.startswith("r1:") else here)
        elif isinstance(node, list):
            for value in node:
                walk(value, run)

    walk(report, None)
    assert found, report
    return found


# --- kill -9, then the same command again ----------------------------------------------


def wait_cells(capture: Path, run: str, at_least: int, proc: subprocess.Popen) -> int:
    """Poll the store until `run` has `at_least` finished cells (or the process ended)."""
    deadline = time.monotonic() + 60
    count = 0
    while time.monotonic() < deadline and proc.poll() is None:
        count = rows(capture, "SELECT count(*) FROM replay_cells WHERE run = ?", [run])[0][0]
        if count >= at_least:
            break
        time.sleep(0.05)
    return count


def settled(upstream: ScriptedUpstream) -> ScriptedUpstream:
    """`upstream` once it has recorded every request that reached it (none for 0.3 s)."""
    seen = -1
    while seen != len(upstream.requests):
        seen = len(upstream.requests)
        time.sleep(0.3)
    return upstream


def markers(capture: Path) -> dict[str, str]:
    """Recorded session id -> the user message that opens it."""
    found = rows(
        capture,
        "SELECT DISTINCT session_id, messages->>'$[0].content' FROM exchanges "
        "WHERE coalesce(proxy_id, '') NOT LIKE 'replay:%'",
    )
    return dict(found)


def test_run_killed_with_sigkill_resumes_without_duplicates(recorded, tmp_path):
    capture = recorded
    slow = [Reply(tool_calls=PARIS.tool_calls, delay_s=0.3), Reply(text="18C", delay_s=0.3)]
    with serve(slow) as up:
        cfg = write_config(tmp_path / "slow.yaml", {"slow": per_cell_ordered(up)})
        argv = [sys.executable, "-m", "toolproxy.cli", "replay", str(cfg), "-c", str(capture)]
        argv += ["--run", "r2", "--no-progress", "--json"]
        root = Path(__file__).resolve().parents[2]
        first = subprocess.Popen(
            argv, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            assert wait_cells(capture, "r2", 2, first) >= 2
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.wait()
        done = set(rows(capture, "SELECT item_id, repeat FROM replay_cells WHERE run = 'r2'"))
        total = len(SESSIONS) * REPEATS
        assert 2 <= len(done) < total  # killed in the middle
        sent_before = step0_requests(settled(up))
        up.reset()  # a cell cut between its two turns left the script mid-cycle
        second = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120)
        assert second.returncode == 0, second.stderr
        assert f"{total - len(done)} cell(s) to play, {len(done)} already done" in second.stderr
        resent = step0_requests(up) - sent_before

    cells = cells_of(capture, "r2")["slow"]  # every cell exactly once
    assert len(cells) == total and {c["status"] for c in cells} == {"completed"}
    # finished cells were not sent again; every unfinished one (half-done included) was
    opened = markers(capture)
    want = Counter()
    for item in opened:
        want[opened[item]] = sum(1 for r in range(REPEATS) if (item, r) not in done)
    assert resent == +want
    assert json.loads(second.stdout)["played"] == total - len(done)


# --- live tools on a real MCP server ------------------------------------------------------

LIVE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "weather__get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "weather__delete_note",
            "parameters": {
                "type": "object",
                "properties": {"note_id": {"type": "string"}},
                "required": ["note_id"],
            },
        },
    },
]


def test_live_tools_run_on_the_real_mcp_server(
    upstream, proxy, capture, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, KEY)
    server = f"{sys.executable} {WEATHER_SERVER}"
    pull = ["mcp", "pull", "--stdio", server, "--name", "weather", "-c", str(capture)]
    assert main([*pull, "--schemas", str(tmp_path / "schemas")]) == 0, capsys.readouterr()
    recorded_result = '{"city": "Paris", "temperature": 18.0, "unit": "celsius"}'
    upstream.set_script(
        Script(
            cycle=True, replies={"default": [call("weather__get_weather", city="Paris"), ANSWER]}
        )
    )
    record_sessions(
        proxy, upstream, capture, [("Weather in Paris?", False)], LIVE_TOOLS, recorded_result
    )
    mcp_config = tmp_path / "claude_desktop_config.json"
    spec = {"command": sys.executable, "args": [str(WEATHER_SERVER)]}
    mcp_config.write_text(json.dumps({"mcpServers": {"weather": spec}}))

    lyon = [call("weather__get_weather", city="Lyon"), Reply(text="18C in Lyon.")]
    deleter = [call("weather__delete_note", note_id="n1"), Reply(text="Deleted.")]
    with serve(lyon) as lyon_up, serve(deleter) as deleter_up:
        cfg = write_config(
            tmp_path / "live.yaml",
            {"lyon": per_cell_ordered(lyon_up), "deleter": per_cell_ordered(deleter_up)},
            repeats=1,
        )
        base = ["replay", str(cfg), "-c", str(capture), "--no-progress", "--json"]
        base += ["--tools", "live", "--mcp-config", str(mcp_config)]
        capsys.readouterr()
        assert main([*base, "--run", "live"]) == 0
        err = capsys.readouterr().err
        deleter_up.reset()  # its first run stopped after one reply of two
        assert main([*base, "--run", "side", "--candidate", "deleter", "--allow-side-effects"]) == 0

    cells = {c["candidate"]: c for c in sum(cells_of(capture, "live").values(), [])}
    went = cells["lyon"]  # differed at step 0, ran live, and went on to the answer
    assert (went["status"], went["steps_done"], went["diverged_at"]) == ("completed", 2, 0)
    assert "went on with live tools" in went["divergence"]
    assert json.loads(tool_result(capture, "live", "lyon")) == {
        "city": "Lyon",
        "temperature": 18.0,
        "unit": "celsius",
    }
    refused = cells["deleter"]  # destructive: not run without --allow-side-effects
    assert refused["status"] == "diverged" and "not run live" in refused["divergence"]
    assert "live tool weather__delete_note not run" in err and "read-only" in err
    assert not tool_result_rows(capture, "live", "deleter")
    [allowed] = cells_of(capture, "side")["deleter"]
    assert allowed["status"] == "completed"
    assert tool_result(capture, "side", "deleter") == "deleted n1"


def tool_result_rows(capture: Path, run: str, candidate: str) -> list:
    return rows(
        capture,
        "SELECT r.content FROM tool_results r JOIN exchanges e USING (exchange_id) "
        "WHERE e.proxy_id = ? AND starts_with(e.session_id, ?)",
        [f"replay:{run}", f"replay:{run}:{candidate}:"],
    )


def tool_result(capture: Path, run: str, candidate: str) -> str:
    [(content,)] = tool_result_rows(capture, run, candidate)
    return content


def test_a_session_on_a_hosted_mcp_server_replays_with_its_listed_tools(
    upstream, proxy, capture, tmp_path, capsys, monkeypatch
):
    """A Responses agent whose MCP server the provider ran: the replay offers the
    candidate the tools the provider listed, as functions, says each hosted call of the
    history with the result the provider got, and compares the candidate's calls with the
    recorded hosted ones."""
    from tests import paths

    monkeypatch.setenv(KEY_ENV, KEY)
    first = json.loads((paths.FIXTURES / "wire" / "responses_response_mcp.json").read_text())
    listing, hosted, message = first["output"]
    asked = {"repoName": "openai/codex", "question": "Which transports?"}
    second = first | {"output": [hosted | {"id": "mcp_2", "arguments": json.dumps(asked)}, message]}
    upstream.set_script(
        Script.of(
            *(
                Reply(raw_body=json.dumps(b), content_type="application/json")
                for b in (first, second)
            )
        )
    )
    tool = {"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.deepwiki.com/mcp"}
    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="sk-agent", max_retries=0)
    turn = [{"role": "user", "content": "Which transports?"}]
    out = client.responses.create(model="gpt-4.1", input=turn, tools=[tool]).output
    turn += [item.model_dump(exclude_none=True) for item in out]
    turn.append({"role": "user", "content": "And openai/codex?"})
    client.responses.create(model="gpt-4.1", input=turn, tools=[tool])
    wait_rows(capture, "SELECT exchange_id FROM exchanges", 2)
    recorded_args = json.loads(hosted["arguments"])
    replies = [call("ask_question", **recorded_args), call("ask_question", repoName="openai/x")]
    with serve(replies) as candidate:
        cfg = write_config(tmp_path / "c.yaml", {"same": per_cell_ordered(candidate)}, repeats=1)
        capsys.readouterr()
        argv = ["replay", str(cfg), "-c", str(capture), "--run", "h", "--no-progress", "--json"]
        assert main(argv) == 0, capsys.readouterr().err
        sent = [r.body for r in candidate.requests]
    for body in sent:  # the server's tools, as functions, with their listed schemas
        assert [t["function"]["name"] for t in body["tools"]] == [
            "read_wiki_structure",
            "ask_question",
        ]
        assert body["tools"][1]["function"]["parameters"] == listing["tools"][1]["input_schema"]
    # step 1's history answers the candidate's step-0 call with what the provider got
    results = [m["content"] for m in sent[1]["messages"] if m["role"] == "tool"]
    assert results == [hosted["output"]]
    diffs = sorted(diffs_of(capture, "h")["same"], key=lambda d: d["step"])
    assert [
        (d["recorded_tool"], d["same_tool"], d["same_arguments"], d["label"]) for d in diffs
    ] == [
        ("ask_question", True, True, None),
        ("ask_question", True, False, "missing_required"),  # by the listed schema
    ]
