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
