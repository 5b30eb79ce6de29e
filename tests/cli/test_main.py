import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolproxy import store
from toolproxy.capture.recorder import Recorder
from toolproxy.capture.redact import Redactor
from toolproxy.capture.session import SessionTracker
from toolproxy.capture.tap import RawExchange
from toolproxy.cli.main import build_parser, main

REQUEST = {"model": "m1", "messages": [{"role": "user", "content": "hi"}]}
RESPONSE = {
    "id": "c1",
    "model": "m1",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_9",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q":"x"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
}


@pytest.fixture
def capture(tmp_path):
    """A real capture with one recorded exchange, written the way a proxy writes it."""
    path = tmp_path / "cap"
    rec = Recorder(
        path,
        "cli-test",
        Redactor.build(),
        SessionTracker(new_id=lambda: "sess-1"),
        flush_interval=0.05,
    )
    rec.start()
    rec.submit(
        RawExchange(
            exchange_id="ex-1",
            started_at=time.time(),
            method="POST",
            scheme="https",
            host="api",
            port=443,
            path="/v1/chat/completions",
            request_headers=[],
            request_body=json.dumps(REQUEST).encode(),
            status_code=200,
            response_headers=[("content-type", "application/json")],
            response_body=json.dumps(RESPONSE).encode(),
            ended_at=time.time(),
        )
    )
    rec.close()
    store.init_capture(path)
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_command_has_help(capsys):
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(commands) >= {
        "record",
        "demo",
        "status",
        "sessions",
        "show",
        "sql",
        "compact",
        "export",
        "upstream",
    }
    for name in commands:
        with pytest.raises(SystemExit) as exc:
            main([name, "--help"])
        assert exc.value.code == 0
        assert "usage: toolproxy " + name in capsys.readouterr().out


def test_status_sessions_show(capsys, capture):
    code, out, _ = run(capsys, "status", "--capture", capture, "--json")
    assert code == 0 and json.loads(out)
    code, out, _ = run(capsys, "sessions", "--capture", capture)
    assert code == 0 and "sess-1" in out
    code, out, _ = run(capsys, "show", "sess-1", "--capture", capture)
    assert code == 0 and 'lookup({"q":"x"})' in out
    code, out, _ = run(capsys, "show", "ex-1", "--capture", capture, "--json")
    assert json.loads(out.splitlines()[0])["exchange_id"] == "ex-1"
    code, _, err = run(capsys, "show", "nope", "--capture", capture)
    assert code == 2 and "no session or exchange 'nope'" in err


def test_toolproxy_capture_names_the_capture_where_none_is_given(capsys, capture, monkeypatch):
    monkeypatch.setenv("TOOLPROXY_CAPTURE", str(capture))
    code, out, _ = run(capsys, "sessions")
    assert code == 0 and "sess-1" in out
    code, out, _ = run(capsys, "show", "ex-1", "--json")
    assert code == 0 and json.loads(out.splitlines()[0])["exchange_id"] == "ex-1"
    code, _, err = run(capsys, "status", "--capture", capture.parent / "elsewhere")
    assert code == 2 and "elsewhere" in err  # a named capture still wins
    with pytest.raises(SystemExit):
        main(["status", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "$TOOLPROXY_CAPTURE, else captures/default" in help_text


def test_a_missing_capture_nobody_named_says_where_it_came_from(capsys, capture, monkeypatch):
    monkeypatch.chdir(capture.parent)  # no captures/default here
    code, _, err = run(capsys, "status")
    assert code == 2
    assert err.splitlines()[1] == (
        "  no --capture given, and the default is captures/default: name one with -c DIR or "
        "set $TOOLPROXY_CAPTURE"
    )
    monkeypatch.setenv("TOOLPROXY_CAPTURE", "gone")
    code, _, err = run(capsys, "sessions")
    assert code == 2 and "and $TOOLPROXY_CAPTURE names gone: name one with -c DIR or change" in err
    code, _, err = run(capsys, "sessions", "-c", "gone")  # named: the error says it all
    assert code == 2 and len(err.splitlines()) == 1
    code, _, err = run(capsys, "tui", "gone")
    assert code == 2 and len(err.splitlines()) == 1
    monkeypatch.setenv("TOOLPROXY_CAPTURE", str(capture))  # there: another error, no hint
    code, _, err = run(capsys, "show", "nope")
    assert code == 2 and len(err.splitlines()) == 1


def test_sql_and_export_and_compact(capsys, capture, tmp_path):
    code, out, _ = run(
        capsys,
        "sql",
        "SELECT name, arguments->>'q' AS q FROM tool_calls",
        "--capture",
        capture,
        "--json",
    )
    assert json.loads(out) == {"name": "lookup", "q": "x"}
    out_file = tmp_path / "calls.jsonl"
    code, _, err = run(capsys, "export", "tool_calls", "--capture", capture, "-o", out_file)
    assert code == 0 and "exported 1 row of" in err
    assert json.loads(out_file.read_text())["call_id"] == "call_9"
    as_csv = tmp_path / "calls.csv"  # the format follows the suffix
    code, _, err = run(capsys, "export", "tool_calls", "--capture", capture, "-o", as_csv)
    assert code == 0 and "(csv)" in err and as_csv.read_text().startswith("exchange_id,")
    code, _, err = run(capsys, "export", "tool_calls", "--capture", capture, "--format", "parquet")
    assert code == 2 and "parquet goes to a file" in err
    code, out, _ = run(capsys, "compact", "--capture", capture)
    assert code == 0 and "exchanges" in out
    code, out, _ = run(capsys, "sql", "SELECT count(*) AS n FROM exchanges", "--capture", capture)
    assert out.splitlines()[-1].strip() == "1"


def test_not_a_capture_is_a_clear_error(capsys, tmp_path):
    code, _, err = run(capsys, "sessions", "--capture", tmp_path / "missing")
    assert code == 2 and err.startswith("toolproxy: ") and "Traceback" not in err


def test_bad_sql_is_a_clear_error(capsys, capture):
    code, _, err = run(capsys, "sql", "SELEC nonsense", "--capture", capture)
    assert code == 2 and "toolproxy:" in err


def test_console_script_runs():
    out = subprocess.run(
        [sys.executable, "-m", "toolproxy.cli", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "record" in out.stdout


def test_status_reads_like_a_report_not_a_repr(capsys, capture):
    code, out, _ = run(capsys, "status", "--capture", capture)
    assert code == 0
    assert "datetime.datetime(" not in out and "{'" not in out and "[{" not in out
    assert out.splitlines()[1] == "sessions  1"
    assert "exchanges      1" in out and out.rstrip().endswith("warnings: none")


def test_export_takes_views_any_table_and_names_what_exists(capsys, capture, tmp_path):
    for name in ("grades", "sessions", "calls", "proxy_runs"):
        code, _, err = run(capsys, "export", name, "--capture", capture, "-o", tmp_path / "x")
        assert code == 0 and f" of {name}" in err, (name, err)
    code, out, _ = run(capsys, "export", "calls", "--capture", capture)
    assert json.loads(out)["arguments"] == {"q": "x"}  # nested JSON stays nested
    code, _, err = run(capsys, "export", "nosuch", "--capture", capture)
    assert code == 2 and err.startswith("toolproxy: cannot export 'nosuch': tables and views")
    assert len(err.strip().splitlines()) == 1


def test_a_reader_that_stops_early_is_not_an_error(capture):
    for argv in (["status"], ["sessions"], ["export", "exchanges"]):
        shell = subprocess.Popen(
            [sys.executable, "-m", "toolproxy.cli", *argv, "--capture", str(capture)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert shell.stdout is not None
        shell.stdout.close()  # like `| head -0`: the pipe is gone before anything is read
        err = shell.stderr.read().decode() if shell.stderr else ""
        assert shell.wait() == 0 and "Traceback" not in err and "BrokenPipe" not in err, argv


def test_upstream_with_a_bad_script_or_a_busy_port_is_one_line(capsys, tmp_path):
    import socket

    bad = tmp_path / "bad.yaml"
    bad.write_text("replies: [\n")
    code, _, err = run(capsys, "upstream", "--script", bad)
    assert code == 2 and err.startswith("toolproxy: the script") and len(err.splitlines()) == 1
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, _, err = run(capsys, "upstream", "--port", port)
    assert code == 2 and f"cannot listen on 127.0.0.1:{port}" in err


READERS = [
    ["status"], ["sessions"], ["show", "x"], ["sql", "SELECT 1"], ["compact"], ["repair"],
    ["export", "exchanges"], ["label"], ["report"], ["replay-diff", "r"], ["tui"],
    ["replay", str(Path(__file__).resolve().parents[2] / "replays" / "scripted.yaml")],
    ["mcp", "drift"], ["mcp", "budget"], ["mcp", "check"],
]  # fmt: skip


@pytest.mark.parametrize("argv", READERS, ids=lambda a: " ".join(a[:2]))
def test_every_reading_command_refuses_a_missing_capture_in_one_line(argv, tmp_path, capsys):
    missing = tmp_path / "no-such-capture"
    assert main([*argv, "-c", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolproxy: ") and len(err.strip().splitlines()) == 1, err
    assert str(missing) in err and not missing.exists()  # read commands never create one


PRINTING = [
    ["status"], ["sessions"], ["show", "s-a"], ["sql", "SELECT 1"], ["export", "exchanges"],
    ["report"], ["replay-diff", "rp"], ["mcp", "drift"], ["mcp", "budget"], ["mcp", "check"],
]  # fmt: skip


@pytest.mark.parametrize("argv", PRINTING, ids=lambda a: " ".join(a[:2]))
def test_every_printing_command_takes_a_closed_stdout(argv, seeded_capture):
    shell = subprocess.Popen(
        [sys.executable, "-m", "toolproxy.cli", *argv, "--capture", str(seeded_capture)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert shell.stdout is not None and shell.stderr is not None
    shell.stdout.close()  # the reader went away before the first byte
    err = shell.stderr.read().decode()
    code = shell.wait()
    assert code in (0, 1) and "Traceback" not in err and "BrokenPipe" not in err, (code, err)


def test_every_command_s_help_takes_a_closed_stdout():
    names = [n for n in build_parser()._subparsers._group_actions[0].choices]  # type: ignore[union-attr]
    for name in names:
        shell = subprocess.Popen(
            [sys.executable, "-m", "toolproxy.cli", name, "--help"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert shell.stdout is not None and shell.stderr is not None
        shell.stdout.close()
        err = shell.stderr.read().decode()
        assert shell.wait() == 0 and "Traceback" not in err and "BrokenPipe" not in err, (name, err)


def every_parser():
    """(name, parser) of every command and sub-command."""
    import argparse

    todo = [("toolproxy", build_parser())]
    while todo:
        name, parser = todo.pop()
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {n}", p) for n, p in action.choices.items()]


def test_every_command_s_help_is_written_for_its_user():
    for name, parser in every_parser():
        about = parser.description or ""
        assert about and about[0].isupper(), (name, about)  # a sentence, not `toolproxy x`: …
        for internal in ("docstring", "returns the exit code", "gctools", "Exit 0"):
            assert internal not in about, (name, about)


WRITING = [
    ["label", "-o", "{tmp}/cases.yaml"], ["grade", "{tmp}/one.yaml", "--run", "closed"],
    ["compact"], ["repair"],
    ["mcp", "pull", "--stdio", f"{sys.executable} -m mcp_server_time", "--schemas", "{tmp}/s"],
    ["record", "--port", "{port}"], ["upstream", "--port", "{port}"],
    ["demo", "--scripted", "-c", "{tmp}/demo"],
]  # fmt: skip


@pytest.mark.parametrize("argv", WRITING, ids=lambda a: " ".join(a[:2]))
def test_every_writing_command_takes_a_closed_stdout(argv, seeded_capture, tmp_path):
    import shutil

    from toolproxy.capture.proxy import free_port

    capture = tmp_path / "cap"
    shutil.copytree(seeded_capture, capture)
    (tmp_path / "one.yaml").write_text("- {id: c1, exchange_id: a-0, expect: no_call}\n")
    places = {"tmp": str(tmp_path), "port": str(free_port())}
    shell = subprocess.Popen(
        [sys.executable, "-m", "toolproxy.cli", *[a.format(**places) for a in argv]]
        + ["--capture", str(capture)] * (argv[0] not in ("demo", "upstream")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert shell.stdout is not None and shell.stderr is not None
    shell.stdout.close()
    err = shell.stderr.read().decode()
    code = shell.wait(timeout=120)
    assert code in (0, 1) and "Traceback" not in err and "BrokenPipe" not in err, (code, err)
