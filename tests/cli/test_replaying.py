"""`toolproxy replay` / `replay-diff` on a seeded capture against scripted candidates."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.builders import chat_exchange
from tests.seeded import CaptureRows
from toolproxy import store
from toolproxy.cli.main import main
from toolproxy.records import ToolCall
from toolproxy.replay.config import ConfigError
from toolproxy.scripted import Reply, Script, ScriptedUpstream
from toolproxy.scripted.script import ScriptedCall
from toolproxy.wire.openai_chat import parse_request

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_notes",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    },
]
T0 = datetime(2024, 5, 1, 12, tzinfo=UTC)
KEY = "sk-command-test-KEY-0123456789"


def record(capture: Path, session: str, city: str) -> None:
    """A two-turn session as the proxy records it: a call, its result, a text answer."""
    user = {"role": "user", "content": f"weather in {city}?"}
    call = {"id": f"{session}-c1", "type": "function", "function": {"name": "get_weather"}}
    call["function"]["arguments"] = json.dumps({"city": city})
    turns = [
        (
            [user],
            [
                ToolCall(
                    index=0,
                    call_id=call["id"],
                    name="get_weather",
                    arguments_raw=call["function"]["arguments"],
                    arguments={"city": city},
                )
            ],
            None,
        ),
        (
            [
                user,
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call["id"], "content": "18 C"},
            ],
            [],
            "18 C",
        ),
    ]
    rows = CaptureRows()
    for i, (messages, calls, text) in enumerate(turns):
        eid = f"{session}-x{i}"
        request = parse_request({"model": "prod", "messages": messages, "tools": TOOLS})
        started = T0 + timedelta(seconds=i)
        ex = chat_exchange(
            eid,
            session,
            started,
            proxy_id="rec",
            ended_at=started,
            ttfb_ms=5.0,
            status_code=200,
            model_requested="prod",
            model_returned="prod",
            request_params=request.params,
            messages=messages,
            assistant_text=text,
            finish_reason="tool_calls" if calls else "stop",
        )
        rows.turn(ex, calls=calls, offered=request.tools, results=request.tool_results)
    rows.write(capture, f"rec-{session}")


def weather(city: str = "Paris", **args: object) -> Reply:
    return Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={"city": city, **args})])


ANSWER = Reply(text="It is 18 C.")


@pytest.fixture
def capture(tmp_path):
    cap = store.init_capture(tmp_path / "cap")
    record(cap, "s1", "Paris")
    return cap


def config(tmp_path: Path, url: str, *names: str, extra: str = "") -> Path:
    body = "".join(
        f"  - name: {n}\n    base_url: {url}/v1\n    model: {n}\n    concurrency: 1\n"
        f"    retries: 1\n    api_key_env: REPLAY_TEST_KEY\n{extra}"
        for n in names
    )
    path = tmp_path / "cands.yaml"
    path.write_text(f"repeats: 2\nfeedback_retries: 1\ncandidates:\n{body}")
    return path


def cells(capture: Path, run: str) -> dict[tuple[str, int], dict]:
    names, found = store.query(capture, "SELECT * FROM replay_cells WHERE run = ?", [run])
    out = {}
    for row in found:
        d = dict(zip(names, row, strict=True))
        assert (d["candidate"], d["repeat"]) not in out, "a cell written twice"
        out[(d["candidate"], d["repeat"])] = d
    return out


def grades(capture: Path, run: str) -> list[dict]:
    names, found = store.query(
        capture, "SELECT * FROM grades WHERE run = ? ORDER BY case_id", [run]
    )
    return [dict(zip(names, r, strict=True)) for r in found]


def test_replay_grades_and_diffs(tmp_path, capture, capsys, monkeypatch):
    monkeypatch.setenv("REPLAY_TEST_KEY", KEY)
    script = Script(
        cycle=True,
        replies={
            "good": [weather(), ANSWER],
            "wrong": [
                Reply(tool_calls=[ScriptedCall(name="search_notes", arguments={"query": "x"})])
            ],
            "fixer": [
                Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={})]),
                weather(),
                ANSWER,
            ],
            "broken": [Reply(status=500, error_body={"error": {"message": f"boom {KEY}"}})],
        },
    )
    with ScriptedUpstream(script) as up:
        cfg = config(tmp_path, up.url, "good", "wrong", "fixer", "broken")
        argv = ["replay", str(cfg), "-c", str(capture), "--run", "r1", "--no-progress"]
        assert main(argv) == 0
        out = capsys.readouterr().out
        sent = len(up.requests)
        # the same command again: every cell is done, nothing is sent, nothing duplicated
        assert main([*argv, "--no-grade"]) == 0
        assert len(up.requests) == sent
    done = cells(capture, "r1")
    assert len(done) == 8
    status = {k: d["status"] for k, d in done.items()}
    assert status[("good", 0)] == status[("good", 1)] == "completed"
    assert status[("wrong", 0)] == "diverged" and done[("wrong", 0)]["diverged_at"] == 0
    assert status[("broken", 1)] == "failed" and done[("broken", 1)]["error_kind"] == "server_error"
    fixer = done[("fixer", 0)]
    assert (fixer["status"], fixer["retry_count"], fixer["recovered"]) == ("completed", 1, True)

    recorded = grades(capture, "r1:recorded")
    assert [g["case_id"] for g in recorded] == [
        "get_weather-s1x0#0",
        "get_weather-s1x0#1",
        "no_call-s1x1#0",
        "no_call-s1x1#1",
    ]
    assert all(g["passed"] for g in recorded)
    good = grades(capture, "r1:good")
    assert len(good) == 4 and all(g["passed"] for g in good)
    assert {g["source"] for g in good} == {"replay:good"}
    wrong = [g for g in grades(capture, "r1:wrong") if g["label"]]
    assert {g["label"] for g in wrong} == {"wrong_tool"}
    fixed = grades(capture, "r1:fixer")  # graded on the first attempt, before feedback
    assert "missing_required" in {g["label"] for g in fixed}
    broken = grades(capture, "r1:broken")
    assert broken and all(g["not_graded"] for g in broken)
    assert "toolproxy report" in out and "--baseline r1:recorded" in out
    assert "good" in out and "recorded" in out

    capsys.readouterr()
    assert main(["replay-diff", "r1", "-c", str(capture), "--changed", "--json"]) == 0
    diffs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {d["candidate"] for d in diffs} == {"wrong", "fixer"}
    assert {d["label"] for d in diffs if d["candidate"] == "wrong"} == {"wrong_tool"}
    assert main(["replay-diff", "r1", "-c", str(capture), "--candidate", "good"]) == 0
    table = capsys.readouterr().out
    assert "get_weather" in table and "wrong" not in table.split("\n", 2)[2]

    for path in capture.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_json_summary_and_usage_errors(tmp_path, capture, capsys, monkeypatch):
    monkeypatch.setenv("REPLAY_TEST_KEY", KEY)
    with ScriptedUpstream(Script(cycle=True, replies={"good": [weather(), ANSWER]})) as up:
        cfg = config(tmp_path, up.url, "good")
        base = ["replay", str(cfg), "-c", str(capture), "--no-progress"]
        assert main([*base, "--run", "j", "--json", "-k", "1", "--per", "exchange"]) == 0
        summary = json.loads(capsys.readouterr().out)
        [row, prod] = summary["summary"]
        assert (row["candidate"], row["cells"], row["completed"]) == ("good", "2/2", 2)
        assert prod["candidate"] == "recorded" and prod["model"] == "prod"
        assert main([*base, "--candidate", "nobody"]) == 2
        assert main([*base, "--session", "no-such-session"]) == 2
        assert main(["replay-diff", "nope", "-c", str(capture)]) == 2
    monkeypatch.delenv("REPLAY_TEST_KEY")
    with pytest.raises(ConfigError):
        from toolproxy.cli.replaying import select_config
        from toolproxy.replay.config import load_config, resolve_key

        resolve_key(select_config(load_config(cfg), [], None).candidates[0])


def test_replaying_into_a_capture_that_is_not_there_creates_nothing(tmp_path, capsys):
    from toolproxy.cli.main import main

    missing = tmp_path / "typo"
    config = tmp_path / "c.yaml"
    config.write_text("candidates:\n  - {name: a, base_url: 'http://127.0.0.1:9/v1', model: m}\n")
    assert main(["replay", str(config), "-c", str(missing), "--no-progress"]) == 2
    assert f"no capture at {missing}" in capsys.readouterr().err
    assert not missing.exists()


def test_ctrl_c_says_how_to_go_on(tmp_path, capture, capsys, monkeypatch):
    from toolproxy.cli import replaying

    def interrupted(*args: object) -> list:
        raise KeyboardInterrupt

    monkeypatch.setattr(replaying, "play_here", interrupted)
    monkeypatch.setenv("REPLAY_TEST_KEY", "k")
    cfg = config(tmp_path, "http://127.0.0.1:9/v1", "a")
    argv = ["replay", str(cfg), "-c", str(capture), "--run", "r 1", "--no-progress"]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err.rstrip().endswith(
        "replay r 1 interrupted; the cells already played are kept. To go on: "
        f"toolproxy replay {cfg} --run 'r 1' -c {capture}"
    )


def test_progress_is_a_line_per_candidate_without_a_terminal_and_none_when_told(
    tmp_path, capture, capsys, monkeypatch
):
    monkeypatch.setenv("REPLAY_TEST_KEY", KEY)
    with ScriptedUpstream(Script(cycle=True, replies={"good": [weather(), ANSWER]})) as up:
        cfg = config(tmp_path, up.url, "good")
        assert main(["replay", str(cfg), "-c", str(capture), "--run", "p1", "--no-grade"]) == 0
        assert "replay: good: 2/2 cells" in capsys.readouterr().err
        argv = ["replay", str(cfg), "-c", str(capture), "--run", "p2", "--no-grade"]
        assert main([*argv, "--no-progress"]) == 0
        assert "cells" not in capsys.readouterr().err


def test_a_candidate_that_is_not_there_is_named_and_the_replay_exits_1(
    tmp_path, capture, capsys, monkeypatch
):
    from toolproxy.capture.proxy import free_port

    monkeypatch.setenv("REPLAY_TEST_KEY", KEY)
    url = f"http://127.0.0.1:{free_port()}"
    cfg = config(tmp_path, url, "down")
    assert main(["replay", str(cfg), "-c", str(capture), "--run", "d", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "toolproxy replay: down: 2 of 2 cells failed, mostly connection: " in err
    assert f"is {url}/v1 up?" in err


def test_cases_with_a_matcher_written_wrong_are_named_as_grade_names_them(
    tmp_path, capture, capsys, monkeypatch
):
    # `city: {regex: ...}` has no `match` key: a literal, so no candidate can pass the case
    cases = tmp_path / "cases.jsonl"
    case = {"messages": [{"role": "user", "content": "weather in Paris?"}], "tools": TOOLS}
    right = {"id": "right", **case, "calls": [{"tool": "get_weather", "args": {"city": "Paris"}}]}
    typo = {"id": "typo", **case}
    typo["calls"] = [{"tool": "get_weather", "args": {"city": {"regex": "^Par"}}}]
    cases.write_text("".join(json.dumps(c) + "\n" for c in (right, typo)))
    monkeypatch.setenv("REPLAY_TEST_KEY", KEY)
    with ScriptedUpstream(Script(cycle=True, replies={"a": [weather()], "b": [weather()]})) as up:
        cfg = config(tmp_path, up.url, "a", "b")
        argv = ["replay", str(cfg), "-c", str(capture), "--run", "h", "--no-progress"]
        assert main([*argv, "--cases", str(cases), "-k", "1"]) == 0
        err = capsys.readouterr().err
        assert (
            "toolproxy replay: warning: 2 failed cases expect a mapping that looks like a "
            "matcher written wrong"
        ) in err
        assert f"toolproxy tui {capture} --run h:a" in err
        argv = ["replay", str(cfg), "-c", str(capture), "--run", "h2", "--no-progress", "--json"]
        assert main([*argv, "--cases", str(cases), "-k", "1"]) == 0
        notes = json.loads(capsys.readouterr().out)["failures"]
        assert [n for n in notes if "looks like a matcher" in n] == [
            "warning: 2 failed cases expect a mapping that looks like a matcher written wrong "
            "(without a `match` key a mapping is a literal value); each argument's detail "
            f"says what to write: toolproxy tui {capture} --run h2:a"
        ]


def test_resuming_a_run_with_a_candidate_changed_is_refused(tmp_path, capture, capsys, monkeypatch):
    # the cells already played would be kept and reported under the new model's name:
    # two models' answers mixed in one run, with nothing said
    monkeypatch.setenv("REPLAY_TEST_KEY", KEY)
    with ScriptedUpstream(Script(cycle=True, replies={"a": [weather(), ANSWER]})) as up:
        cfg = config(tmp_path, up.url, "a")
        argv = ["replay", str(cfg), "-c", str(capture), "--run", "r", "--no-progress", "-k", "1"]
        assert main(argv) == 0
        sent = len(up.requests)
        assert main(argv) == 0  # the same config resumes: nothing is sent again
        assert len(up.requests) == sent
        capsys.readouterr()
        cfg.write_text(cfg.read_text().replace("    model: a\n", "    model: a-v2\n"))
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert (
            f"run r played candidate 'a' as model 'a' at {up.url}/v1; the config now says "
            f"model 'a-v2' at {up.url}/v1: resuming would mix two candidates' answers in one run"
        ) in err
        assert "use a new --run" in err
        other = up.url.replace("127.0.0.1", "localhost")
        cfg.write_text(cfg.read_text().replace("a-v2", "a").replace(up.url, other))
        assert main(argv) == 2
        assert f"the config now says model 'a' at {other}/v1" in capsys.readouterr().err
        assert len(up.requests) == sent


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_key_the_candidate_echoes_in_its_error_is_never_printed(
    tmp_path, capture, capsys, monkeypatch, workers
):
    # providers answer a bad key with a message quoting it: the failure note on stderr
    # (and in --json) said `mostly client_error: HTTP 401: ... provided: sk-...`
    monkeypatch.setenv("REPLAY_TEST_KEY", KEY)
    message = f"Incorrect API key provided: {KEY}. You can find your API key at your account"
    refused = Reply(status=401, error_body={"error": {"message": message, "type": "auth"}})
    with ScriptedUpstream(Script(cycle=True, replies={"a": [refused]})) as up:
        cfg = config(tmp_path, up.url, "a")
        argv = ["replay", str(cfg), "-c", str(capture), "--no-progress", "--workers", workers]
        assert main([*argv, "--run", "k"]) == 1
        out, err = capsys.readouterr()
        assert "a: 2 of 2 cells failed, mostly client_error: HTTP 401" in err
        assert "Incorrect API key provided: [REDACTED]" in err
        assert main([*argv, "--run", "kj", "--json"]) == 1
        json_out, json_err = capsys.readouterr()
    assert "Incorrect API key provided: [REDACTED]" in json.loads(json_out)["failures"][0]
    for text in (out, err, json_out, json_err):
        assert KEY not in text


def test_a_run_resumed_with_other_items_counts_only_this_plan_s_cells(
    tmp_path, capture, capsys, monkeypatch
):
    # the run's cells of items this plan does not hold were counted as done and summed
    # into its summary: `cells 3/1`, `2 already done`, for a plan of one case
    def cases(path: Path, *ids: str) -> Path:
        with path.open("w") as f:
            for i in ids:
                case = {"id": i, "messages": [{"role": "user", "content": f"weather {i}?"}]}
                case |= {"tools": TOOLS, "calls": [{"tool": "get_weather", "args": {}}]}
                f.write(json.dumps(case) + "\n")
        return path

    monkeypatch.setenv("REPLAY_TEST_KEY", KEY)
    with ScriptedUpstream(Script(cycle=True, replies={"a": [weather()]})) as up:
        cfg = config(tmp_path, up.url, "a")
        argv = ["replay", str(cfg), "-c", str(capture), "--run", "r", "--no-progress", "-k", "1"]
        assert main([*argv, "--cases", str(cases(tmp_path / "a.jsonl", "a1", "a2"))]) == 0
        capsys.readouterr()
        assert main([*argv, "--json", "--cases", str(cases(tmp_path / "b.jsonl", "b1"))]) == 0
        out, err = capsys.readouterr()
    (row,) = json.loads(out)["summary"]
    assert (row["cells"], row["completed"]) == ("1/1", 1)
    assert "1 cell(s) to play\n" in err and "already done" not in err
    assert "note: run r also holds 2 cells of items this plan does not replay" in err
