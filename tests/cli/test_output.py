"""toolproxy.cli.output: rows as a table or JSON lines, `status` for a person."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from toolproxy.cli.output import print_rows, render_status


def test_rows_as_a_table_or_json_lines(capsys):
    print_rows(["a", "b"], [(1, "x"), (2, None)], as_json=True)
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == [
        {"a": 1, "b": "x"},
        {"a": 2, "b": None},
    ]
    print_rows(["a", "b"], [(1, "x")], as_json=False)
    assert capsys.readouterr().out.splitlines()[0].split() == ["a", "b"]


def test_status_for_a_person():
    at = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    text = render_status(
        {
            "capture": "/c",
            "tables": {"exchanges": 1234, "tool_calls": 5},
            "segments_pending": 2,
            "sessions": 3,
            "first": at,
            "last": None,
            "proxies": [{"proxy_id": "p1", "event": "stop", "at": at, "mode": "reverse:x",
                         "exchanges": 7, "parse_failures": 0, "internal_errors": 0,
                         "recorder": "worker", "toolproxy_version": "0.1.0"}],
            "warnings": ["proxy p1: its recorder worker died"],
        }
    )  # fmt: skip
    lines = text.splitlines()
    assert lines[:5] == [
        "capture   /c",
        "sessions  3",
        "first     2026-03-01 12:00:00 UTC",
        "last      -",
        "pending   2 segment file(s) not compacted yet",
    ]
    assert "exchanges   1,234" in text  # the table column is as wide as "tool_calls"
    assert "p1        stop   2026-03-01 12:00:00 UTC" in text
    assert lines[-4].split()[-2:] == ["worker", "0.1.0"]  # the version that recorded it
    assert lines[-6].split()[-2:] == ["recorder", "version"]
    assert lines[-2:] == ["warnings:", "  proxy p1: its recorder worker died"]
