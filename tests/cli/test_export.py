"""`toolproxy export --otlp-file`: the summary line, the filter, the header option."""

from __future__ import annotations

import json

import pytest

from toolproxy.cli.export import headers_of
from toolproxy.cli.main import main
from toolproxy.errors import UserError


def test_the_file_form_says_what_it_wrote(seeded_capture, tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    argv = ["export", "-c", str(seeded_capture), "--otlp-file", str(out), "--run", "g1"]
    assert main(argv) == 0
    said = capsys.readouterr().err
    assert said == (
        "exported 5 sessions as traces (15 spans: 7 model calls, 2 tool executions; "
        f"2 grades attached) to {out}\n"
    )
    request = json.loads(out.read_text())
    (resource,) = request["resourceSpans"]
    attrs = {a["key"]: a["value"]["stringValue"] for a in resource["resource"]["attributes"]}
    assert attrs["openinference.project.name"] == "toolproxy"
    assert attrs["toolproxy.capture"] == seeded_capture.name


def test_the_exchange_filter_picks_sessions(seeded_capture, tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    argv = ["export", "-c", str(seeded_capture), "--otlp-file", str(out), "--model", "claude-x"]
    assert main([*argv, "--project", "p", "--service-name", "agent-x"]) == 0
    assert "exported 1 session as traces (3 spans: 2 model calls" in capsys.readouterr().err
    text = out.read_text()
    assert '"agent-x"' in text and '"p"' in text


def test_headers_are_key_value_pairs():
    assert headers_of(["Authorization=Basic a=b", " x-k = v "]) == {
        "Authorization": "Basic a=b",
        "x-k": "v",
    }
    with pytest.raises(UserError, match="KEY=VALUE"):
        headers_of(["=v"])


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_a_table_export_keeps_to_the_exchange_filter(seeded_capture, tmp_path, capsys, suffix):
    # the filter options were taken and ignored: `export exchanges --session s-b` wrote
    # every session's exchanges (more than the user meant to hand over)
    import duckdb

    out = tmp_path / f"x{suffix}"
    argv = ["export", "exchanges", "-c", str(seeded_capture), "-o", str(out), "--session", "s-b"]
    assert main(argv) == 0
    said = capsys.readouterr().err
    reader = "read_json_auto" if suffix == ".jsonl" else f"read_{suffix[1:]}"
    rows = duckdb.sql(f"SELECT exchange_id FROM {reader}('{out}')").fetchall()
    assert sorted(r[0] for r in rows) == ["b-0", "b-1"]
    assert said.startswith("exported 2 rows of exchanges")
    argv = ["export", "tool_calls", "-c", str(seeded_capture), "-o", str(out), "--status", "ok"]
    assert main([*argv, "--model", "claude-x"]) == 0
    rows = duckdb.sql(f"SELECT exchange_id, name FROM {reader}('{out}')").fetchall()
    assert rows == [("b-0", "search")] and "exported 1 row of tool_calls" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_sessions_export_as_the_sessions_command_counts_them(
    seeded_capture, tmp_path, capsys, suffix
):
    # `export sessions --model M` was refused (the view has no exchange_id); it now writes
    # what `toolproxy sessions --model M --json` lists: the sessions with a selected
    # exchange, each counted over the selected exchanges only
    import duckdb

    for filters in (["--session", "s-b"], ["--model", "claude-x"], ["--status", "failed"]):
        assert main(["sessions", "-c", str(seeded_capture), "--json", *filters]) == 0
        lines = capsys.readouterr().out.splitlines()
        listed = {s["session_id"]: s for s in map(json.loads, lines)}
        out = tmp_path / f"s{suffix}"
        argv = ["export", "sessions", "-c", str(seeded_capture), "-o", str(out), *filters]
        assert main(argv) == 0, filters
        reader = "read_json_auto" if suffix == ".jsonl" else "read_csv"
        sql = f"SELECT session_id, exchanges, tool_calls, errors FROM {reader}('{out}')"
        rows = duckdb.sql(sql).fetchall()
        assert listed and {r[0] for r in rows} == set(listed), filters
        for session_id, exchanges, tool_calls, errors in rows:
            s = listed[session_id]
            assert (exchanges, tool_calls, errors) == (
                s["exchanges"],
                s["tool_calls"],
                s["errors"],
            ), filters
        assert f"exported {len(rows)} row" in capsys.readouterr().err


def test_a_table_without_exchanges_refuses_the_filter(seeded_capture, tmp_path, capsys):
    argv = ["export", "mcp_tools", "-c", str(seeded_capture), "--session", "s-b"]
    assert main([*argv, "-o", str(tmp_path / "t.jsonl")]) == 2
    assert not (tmp_path / "t.jsonl").exists()  # nothing written
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "mcp_tools has no exchange_id" in err and "exchanges, " in err
    capsys.readouterr()
    assert main(["export", "mcp_tools", "-c", str(seeded_capture)]) == 0  # unfiltered: fine


@pytest.mark.parametrize("form", ["jsonl", "csv", "parquet", "otlp"])
def test_an_out_file_that_cannot_be_written_is_one_line(seeded_capture, tmp_path, capsys, form):
    # --out into a missing folder: CSV and Parquet were DuckDB's IOException, a traceback
    blocked = tmp_path / "file"
    blocked.write_text("")
    for out in (tmp_path / "missing" / f"x.{form}", blocked / f"x.{form}", tmp_path):
        if form == "otlp":
            argv = ["export", "-c", str(seeded_capture), "--otlp-file", str(out)]
        else:
            argv = ["export", "exchanges", "-c", str(seeded_capture), "--out", str(out)]
            argv += ["--format", form]
        assert main(argv) == 2, out
        err = capsys.readouterr().err
        assert err.startswith("toolproxy: ") and err.count("\n") == 1, err
        assert str(out) in err or str(out.parent) in err  # the file, or the missing folder
