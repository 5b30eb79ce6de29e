"""Every command, given bad input, says what is wrong in one line and exits 2: no traceback,
no usage screen, nothing written or started. Detail that helps (each problem of a cases
file, where in the SQL) may follow on indented lines."""

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolproxy.cli import options
from toolproxy.cli.main import build_parser, headline, main

REPLAYS = Path(__file__).resolve().parents[2] / "replays"
CALIBRATE = ["judge", "calibrate", "{file}", "--judge-url", "http://h", "--judge-model", "m"]

# (argv, what the one line says); {cap}: the seeded capture, {file}: a plain file, {dir}: a
# directory that is not a capture, {bad}: a file of broken YAML, {busy}: a port in use
BAD = [
    (["record", "--upstream", "ftp://x"], "expected a base URL such as https://"),
    (["record", "--upstream", "api.openai.com"], "expected a base URL"),
    (["record", "--port", "99999"], "a port is a number from 1 to 65535"),
    (["record", "--port", "{busy}", "-c", "{dir}/new"], "is in use"),
    (["record", "--flush-interval", "0"], "between 0.01 and 10 seconds"),
    # refused by the addon inside mitmdump: two tracebacks, and the capture folder made
    (["record", "--host", "10.255.255.1", "-c", "{dir}/new"], "choose another with --host"),
    (["record", "--confdir", "{file}/ca", "-c", "{dir}/new"], "cannot be made: Not a directory"),
    (["record", "--retry-window", "-3", "-c", "{dir}/new"], "between 0 and 3600 seconds"),
    (["record", "--retry-window", "soon", "-c", "{dir}/new"], "between 0 and 3600 seconds"),
    (["record", "--redact-json", "", "-c", "{dir}/new"], "a dotted JSON path such as"),
    (["record", "--redact-json", "a..b", "-c", "{dir}/new"], "a dotted JSON path such as"),
    (["record", "--redact-header", " ", "-c", "{dir}/new"], "a name, not blank"),
    (["record", "--redact-query", "", "-c", "{dir}/new"], "a name, not blank"),
    (["record", "--session-header", "", "-c", "{dir}/new"], "a name, not blank"),
    (["record", "-c", "{file}"], "is a file, not a directory"),
    (["status", "-c", "{dir}"], "is not a toolproxy capture"),
    (["sessions", "-c", "{cap}", "--since", "yesterday"], "not an ISO-8601 time"),
    (["sessions", "-c", "{cap}", "--limit", "0"], "a whole number of 1 or more"),
    (["sessions", "-c", "{cap}", "--origin", "both"], "invalid choice: 'both'"),
    (["sessions", "-c", "{cap}", "--wire-format", "openai"], "invalid choice: 'openai'"),
    (["sessions", "-c", "{cap}", "--since", "2026-11-02", "--until", "2026-11-01"], "not after"),
    (["export", "mcp_tools", "-c", "{cap}", "--session", "s-b"], "has no exchange_id"),
    (["show", "nosuch", "-c", "{cap}"], "no session or exchange 'nosuch'"),
    (["tui", "{file}"], "is a file, not a directory"),
    (["tui", "{cap}"], "the TUI needs a terminal"),  # pytest's stdin is not one
    (["sql", "SELEC 1", "-c", "{cap}"], "SELEC"),
    (["compact", "-c", "{file}"], "is a file, not a directory"),
    (["compact", "-c", "{cap}", "--from", "{dir}"], "is not a toolproxy capture"),
    (["repair", "-c", "{dir}"], "not a toolproxy capture"),
    (["report", "-c", "{cap}", "--html", "{file}/report.html"], "--html: cannot write"),
    (["export", "nosuch", "-c", "{cap}"], "nosuch"),
    (["export", "-c", "{cap}"], "needs a table"),
    (["export", "exchanges", "-c", "{cap}", "--otlp", "http://h:1"], "give no table"),
    (["export", "-c", "{cap}", "--otlp", "ftp://h"], "http(s) URL"),
    (["export", "-c", "{cap}", "--otlp", "http://h", "--otlp-file", "{file}"], "not both"),
    (["export", "-c", "{cap}", "--otlp", "http://h", "--otlp-header", "novalue"], "KEY=VALUE"),
    (["export", "-c", "{cap}", "--otlp-file", "{dir}/no/such.jsonl"], "no folder"),
    (["export", "-c", "{cap}", "--otlp-file", "{file}", "--since", "{bad}"], "ISO-8601"),
    (["upstream", "--script", "{bad}"], "the script"),
    (["upstream", "--port", "{busy}"], "cannot listen on"),
    (["upstream", "--personas", "nosuch"], "no suite 'nosuch'"),
    (["upstream", "--personas", "{bad}"], "not valid YAML"),
    (["upstream", "--personas", "conformance", "--script", "{bad}"], "give --script or"),
    (["mcp", "pull", "--config", "{dir}/none.json", "-c", "{dir}/new"], "cannot read MCP config"),
    (["mcp", "pull", "--config", "{bad}", "-c", "{dir}/new"], "not valid JSON"),
    (["mcp", "pull", "--timeout", "soon"], "invalid float value"),
    (["mcp", "drift", "--server", "nosuch", "-c", "{cap}"], "nosuch"),
    (["mcp", "budget", "--session", "nosuch", "-c", "{cap}"], "no session id is or starts with"),
    (["mcp", "check", "--session", "nosuch", "-c", "{cap}"], "no session id is or starts with"),
    (["label", "-c", "{cap}", "-o", "{file}/cases.yaml"], "not a directory"),
    (["label", "-c", "{cap}", "-o", "{dir}/cases.txt"], ".yaml"),
    (["label", "--adjudicate", "{dir}/none.yaml", "{bad}", "-o", "{dir}/m.yaml"], "cannot read"),
    (["label", "-c", "{cap}", "--session", "nosuch", "-o", "{dir}/c.yaml"], "no session id"),
    (["grade", "{dir}/none.yaml", "--run", "r", "-c", "{cap}"], "cannot read"),
    (["grade", "{bad}", "--run", "r", "-c", "{cap}"], "not valid YAML"),
    (["grade", "{bad}", "--run", "r", "-c", "{cap}", "--jobs", "0"], "1 or more"),
    (["report", "-c", "{cap}", "--baseline", "nosuch"], "unknown run(s) nosuch"),
    (["report", "-c", "{cap}", "--run", "nosuch"], "unknown run(s) nosuch"),
    (["report", "-c", "{cap}", "--threshold", "fast"], "bad threshold 'fast'"),
    (["report", "-c", "{cap}", "--threshold", "pass_rate>=95"], "pass_rate is a rate from 0 to 1"),
    (["report", "-c", "{cap}", "--prices", "{bad}"], "broken.yaml: not YAML"),
    (
        ["judge", "calibrate", "{bad}", "--judge-url", "http://127.0.0.1:9", "--judge-model", "m"],
        "broken.yaml: not YAML",
    ),
    (
        ["judge", "calibrate", "{file}", "--judge-url", "x", "--judge-model", "m"],
        "expected a base URL",
    ),
    ([*CALIBRATE, "--min-kappa", "2"], "a kappa is a number from -1 to 1"),
    (["report", "-c", "{cap}", "--prices", "{dir}/none.yaml"], "cannot read price file"),
    # a key variable named but not set: every judge call went out without the key
    (
        [*CALIBRATE, "--judge-key-env", "TOOLPROXY_TEST_UNSET_KEY"],
        "environment variable TOOLPROXY_TEST_UNSET_KEY is not set",
    ),
    (
        ["grade", "{file}.yaml", "-c", "{cap}", "--judge-key-env", "TOOLPROXY_TEST_UNSET_KEY"],
        "environment variable TOOLPROXY_TEST_UNSET_KEY is not set",
    ),
    (
        ["grade", "{file}.yaml", "-c", "{cap}", "--judge-key-env", "sk-proj-abc123SECRET"],
        "this looks like an API key, not the name of an environment variable",
    ),
    (["replay", "{dir}/none.yaml", "-c", "{cap}"], "cannot read the replay config"),
    (["replay", "{bad}", "-c", "{cap}"], "not a valid replay config"),
    (["replay", str(REPLAYS / "scripted.yaml"), "-c", "{cap}", "--repeats", "0"], "1 or more"),
    (["replay", str(REPLAYS / "scripted.yaml"), "-c", "{cap}", "--suite", "nosuch"], "no suite"),
    (["replay", str(REPLAYS / "scripted.yaml"), "-c", "{cap}", "--suite", "{bad}"], "not valid"),
    (["replay-diff", "nosuch", "-c", "{cap}"], "no replay run named 'nosuch'"),
    (["model", "serve", "--port", "{busy}"], "is in use"),
    (["model", "serve", "--threads", "0"], "a whole number of 1 or more"),
    (["model", "fetch"], "invalid choice: 'fetch'"),
    (["model", "install", "now"], "unrecognized arguments: now"),
    (["demo", "-c", "{file}"], "is a file"),
    (["demo", "-c", "{dir}"], "is not an earlier demo's capture"),
    (["demo", "--formats", "-c", "{dir}"], "is not an earlier demo's capture"),
    (["addon-path", "--json"], "unrecognized arguments: --json"),
    (["import", "{dir}/none.mitm", "-c", "{dir}/new"], "no such file: "),
    (["import", "{file}", "--cases", "{dir}/cases.txt"], ".yaml"),
    # taken, and redacted nothing: a path with an empty key matches no field
    (["import", "{file}", "-c", "{dir}/new", "--redact-json", "api..key"], "dotted JSON path"),
    (["import", "{file}", "-c", "{dir}/new", "--redact-header", ""], "a name, not blank"),
    # a file that is not UTF-8 text (tracebacks for --prices, --config and calibrate)
    (["report", "-c", "{cap}", "--prices", "{binary}.yaml"], "price file {binary}.yaml: not UTF-8"),
    (["mcp", "pull", "--config", "{binary}.json", "-c", "{dir}/new"], "not UTF-8 text"),
    (
        ["judge", "calibrate", "{binary}.yaml", "--judge-url", "http://h", "--judge-model", "m"],
        "calibration set {binary}.yaml: not UTF-8 text",
    ),
    (["replay", "{binary}.yaml", "-c", "{cap}"], "cannot read the replay config: not UTF-8"),
    (["grade", "{binary}.yaml", "--run", "r", "-c", "{cap}"], "cannot read: not UTF-8 text"),
    (["upstream", "--script", "{binary}.yaml"], "cannot read the script {binary}.yaml: not UTF-8"),
    (["replay", "{dir}/none.yaml", "-c", "{cap}"], "replay config: No such file or directory"),
    ([], "the following arguments are required: COMMAND"),
    (["recrod"], "invalid choice: 'recrod'"),
]


@pytest.fixture(scope="module")
def busy_port() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def fill(argv: list[str], places: dict[str, str]) -> list[str]:
    return [arg.format(**places) for arg in argv]


@pytest.mark.parametrize(("argv", "says"), BAD, ids=[" ".join(a[:3]) for a, _ in BAD])
def test_bad_input_is_one_line_and_exit_2(argv, says, seeded_capture, busy_port, tmp_path, capsys):
    (tmp_path / "a-file").write_text("not a directory\n")
    (tmp_path / "broken.yaml").write_text("replies: [\n")
    (tmp_path / "not-a-capture").mkdir()
    (tmp_path / "not-a-capture" / "keep.txt").write_text("mine\n")
    places = {
        "cap": str(seeded_capture),
        "file": str(tmp_path / "a-file"),
        "dir": str(tmp_path / "not-a-capture"),
        "bad": str(tmp_path / "broken.yaml"),
        "busy": str(busy_port),
        "binary": str(tmp_path / "binary"),
    }
    for suffix in (".yaml", ".json"):
        (tmp_path / "binary").with_suffix(suffix).write_bytes(b"cases:\n  - id: \xd0\x28\n")
    before = sorted(p.name for p in (tmp_path / "not-a-capture").iterdir())
    try:
        code = main(fill(argv, places))
    except SystemExit as exc:  # the parser refused it
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    first, *detail = err.rstrip("\n").split("\n")
    assert first.startswith("toolproxy") and fill([says], places)[0] in err, err
    assert "Traceback" not in err and "[Errno" not in err and "codec" not in err, err
    assert "SECRET" not in err  # a key given where a variable's name goes is never echoed
    assert all(line[:1].isspace() for line in detail), err
    assert sorted(p.name for p in (tmp_path / "not-a-capture").iterdir()) == before


def test_every_command_is_tried_with_bad_input():
    import argparse

    def names(parser: argparse.ArgumentParser, prefix: tuple[str, ...]) -> Iterator[tuple]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from names(sub, (*prefix, name))
                return
        yield prefix

    for command in names(build_parser(), ()):
        assert any(tuple(argv[: len(command)]) == command for argv, _ in BAD), command


@pytest.mark.parametrize("text", ["0", "65536", "-1", "80x", ""])
def test_a_port_out_of_range_is_refused(text):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match="from 1 to 65535"):
        options.port(text)


def test_ports_counts_and_urls_that_are_fine_pass_through():
    assert options.port("1") == 1 and options.port("65535") == 65535
    assert options.count("3") == 3
    for url in ("https://api.openai.com", "http://127.0.0.1:9000/v1", "http://[::1]:8080"):
        assert options.base_url(url) == url


@pytest.mark.parametrize("url", ["api.openai.com", "ftp://x", "http://", "http://h:99999", "/v1"])
def test_an_upstream_that_is_not_a_base_url_is_refused(url):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match="expected a base URL"):
        options.base_url(url)


def test_a_usage_error_names_the_help_instead_of_printing_the_usage(capsys):
    parser = options.Parser(prog="toolproxy x")
    parser.add_argument("--n", type=options.count)
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["--n", "zero"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err == (
        "toolproxy x: argument --n: expected a whole number of 1 or more, got 'zero' "
        "(see toolproxy x --help)\n"
    )


def test_an_error_s_detail_goes_under_its_headline():
    assert headline("one") == "one"
    assert headline("bad SQL\n\nLINE 1: SELEC 1\n        ^^^\n") == (
        "bad SQL\n  LINE 1: SELEC 1\n          ^^^"
    )
    assert (
        headline("2 problems:\n  a.yaml: x\n  b.yaml: y") == "2 problems:\n  a.yaml: x\n  b.yaml: y"
    )


@pytest.mark.parametrize("command", [["grade", "c.yaml", "-r", "r"], CALIBRATE])
def test_the_judge_s_key_is_read_from_the_variable_named_else_the_default(command, monkeypatch):
    monkeypatch.setenv("TOOLPROXY_TEST_JUDGE_KEY", "k")
    argv = [part.replace("{file}", "set.yaml") for part in command]
    parser = build_parser()
    named = parser.parse_args([*argv, "--judge-key-env", "TOOLPROXY_TEST_JUDGE_KEY"])
    assert options.judge_key_variable(named) == "TOOLPROXY_TEST_JUDGE_KEY"
    # unset here, and still the default: an endpoint that takes no key needs no variable
    monkeypatch.delenv(options.JUDGE_KEY_ENV, raising=False)
    assert options.judge_key_variable(parser.parse_args(argv)) == options.JUDGE_KEY_ENV
