"""toolproxy.cli.filters: the store's filter as options, the same for every command."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

import pytest

from toolproxy.cli.filters import add_filter_args, filter_from_args, parse_time
from toolproxy.cli.main import main
from toolproxy.errors import UserError
from toolproxy.store.filters import ExchangeFilter

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def parse(*argv: str, skip: tuple[str, ...] = ()) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_filter_args(p, skip=skip)
    return p.parse_args(argv)


def test_parse_time_takes_naive_times_as_utc():
    assert parse_time("2024-05-01T12:00", "--since") == T0
    assert parse_time("2024-05-01T14:00+02:00", "--since") == T0
    assert parse_time(None, "--until") is None
    with pytest.raises(UserError):
        parse_time("soon", "--until")


def test_options_become_the_filter():
    args = parse(
        "--session",
        "s1",
        "--session",
        "s2",
        "--tool",
        "t",
        "--model",
        "m",
        "--wire-format",
        "mcp",
        "--since",
        "2024-05-01T12:00",
        "--status",
        "failed",
        "--parse-status",
        "partial",
        "--label-run",
        "g1",
        "--label",
        "no_call",
        "--text",
        "Paris",
        "--origin",
        "captured",
        "--exchange",
        "x",
    )
    assert filter_from_args(args) == ExchangeFilter(
        sessions=["s1", "s2"],
        exchanges=["x"],
        tools=["t"],
        models=["m"],
        wire_formats=["mcp"],
        since=T0,
        status="failed",
        parse_statuses=["partial"],
        label_run="g1",
        labels=["no_call"],
        text="Paris",
        origin="captured",
    )
    assert filter_from_args(parse()) == ExchangeFilter()


def test_a_label_without_its_run_is_a_usage_error():
    with pytest.raises(UserError, match="--label needs --label-run"):
        filter_from_args(parse("--label", "no_call"))


def test_closed_sets_are_choices_with_the_records_values(capsys):
    # a typo ('--wire-format openai') selected nothing and listed an empty table
    from typing import get_args

    from toolproxy.cli.filters import PARSE_STATUSES, WIRE_FORMATS
    from toolproxy.records import ParseStatus, WireFormat

    assert WIRE_FORMATS == get_args(WireFormat) and PARSE_STATUSES == get_args(ParseStatus)
    for option in ("--wire-format", "--parse-status"):
        with pytest.raises(SystemExit):
            parse(option, "openai")
        assert "invalid choice: 'openai'" in capsys.readouterr().err


def test_a_window_that_ends_before_it_starts_is_a_usage_error():
    # it selected nothing, and said nothing of why
    with pytest.raises(UserError, match="--until 2024-05-01T11:00 is not after --since"):
        filter_from_args(parse("--since", "2024-05-01T12:00", "--until", "2024-05-01T11:00"))
    assert filter_from_args(parse("--since", "2024-05-01", "--until", "2024-05-02")).since


def test_skipped_options_do_not_exist():
    with pytest.raises(SystemExit):
        parse("--status", "ok", skip=("status",))


def test_sessions_are_listed_over_the_filtered_exchanges(seeded_capture, capsys):
    argv = ["sessions", "-c", str(seeded_capture), "--json", "--tool", "search"]
    assert main(argv) == 0
    import json

    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (row["session_id"], row["exchanges"], row["tool_calls"]) == ("s-b", 1, 1)
    assert main(["sessions", "-c", str(seeded_capture), "--origin", "replayed"]) == 0
    out = capsys.readouterr().out
    assert "s-r" in out and "s-a" not in out


def test_session_and_exchange_ids_take_unique_prefixes(tmp_path, capsys):
    from tests.builders import chat_exchange
    from tests.seeded import CaptureRows, at
    from toolproxy.cli.main import main

    rows = CaptureRows()
    for n, (exchange, session) in enumerate(
        [("ab12-x", "sess-alpha"), ("ab34-y", "sess-alpine"), ("cd56-z", "beta")]
    ):
        rows.turn(chat_exchange(exchange, session, at(n)))
    capture = str(rows.write(tmp_path / "cap"))
    assert main(["show", "be", "-c", capture, "--json"]) == 0  # beta, by prefix
    assert '"exchange_id": "cd56-z"' in capsys.readouterr().out
    assert main(["show", "ab12", "-c", capture, "--json"]) == 0  # an exchange, by prefix
    assert '"exchange_id": "ab12-x"' in capsys.readouterr().out
    assert main(["show", "sess-alp", "-c", capture]) == 2
    err = capsys.readouterr().err
    assert "'sess-alp' starts more than one id: sess-alpha, sess-alpine; give more of it" in err
    assert main(["sessions", "-c", capture, "--session", "sess-alpi", "--json"]) == 0
    assert '"session_id": "sess-alpine"' in capsys.readouterr().out
    assert main(["sessions", "-c", capture, "--session", "zz"]) == 2
    assert "no session id is or starts with 'zz'" in capsys.readouterr().err
    assert main(["sessions", "-c", capture, "--exchange", "ab"]) == 2
    assert "'ab' starts more than one exchange id: ab12-x, ab34-y" in capsys.readouterr().err
