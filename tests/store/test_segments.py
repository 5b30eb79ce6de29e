"""Segment files: naming, atomic writes, numbering across restarts, the one column list."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from toolproxy.records import ToolResult, Usage
from toolproxy.store.segments import (
    HIGH_WATER_FILE,
    SCHEMA_DIR,
    TABLES,
    SegmentWriter,
    edge_lines,
    encode_plain_row,
    encode_row,
    list_segments,
    parse_segment_name,
    part_name,
    read_high_water,
    segment_glob,
    write_high_water,
)


def test_write_makes_one_file_per_nonempty_table(tmp_path: Path) -> None:
    writer = SegmentWriter(tmp_path, "p1")
    rows = [{"exchange_id": "a", "n": 1}, {"exchange_id": "b", "text": "é\nline"}]
    written = writer.write(
        {"exchanges": rows, "tool_calls": [{"exchange_id": "a"}], "tools_offered": []}
    )
    assert [p.name for p in written] == [
        "tool_calls.0000000001.jsonl",
        "exchanges.0000000001.jsonl",  # exchanges last: children are never missing
    ]
    lines = written[1].read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == rows
    assert not list(writer.dir.glob("*.tmp"))
    assert writer.write({}) == []
    assert writer.write({"exchanges": []}) == []
    assert (
        writer.write({"proxy_runs": [{"proxy_id": "p1"}]})[0].name == "proxy_runs.0000000002.jsonl"
    )


def test_parts_written_elsewhere_join_the_file_in_order(tmp_path: Path) -> None:
    writer = SegmentWriter(tmp_path, "grade-1")
    parts = [writer.dir / part_name("grades", k) for k in range(3)]
    assert [p.name for p in parts] == [f"grades.part{k}.jsonl.tmp" for k in range(3)]
    assert parse_segment_name(parts[0].name) is None  # never read, never numbered
    big = b"".join(b'{"case_id": "c%d"}\n' % i for i in range(50_000))  # past one copy call
    parts[0].write_bytes(big)
    parts[1].write_bytes(b"")
    parts[2].write_bytes(b'{"case_id": "last of the parts"}\n')
    encoded = {"grades": b'{"case_id": "own"}\n', "schema_checks": b'{"schema_hash": "h"}\n'}
    written = writer.write_encoded(encoded, {"grades": parts})
    assert [p.name for p in written] == [
        "schema_checks.0000000001.jsonl",
        "grades.0000000001.jsonl",
    ]
    assert written[1].read_bytes() == big + parts[2].read_bytes() + encoded["grades"]
    assert all(p.exists() for p in parts)  # the caller's to remove
    assert not list(writer.dir.glob("grades.0*.tmp"))
    # parts alone make the file too
    (only,) = writer.write_encoded({}, {"grades": [parts[2]]})
    assert only.name == "grades.0000000002.jsonl" and only.read_bytes() == parts[2].read_bytes()
    with pytest.raises(ValueError, match="unknown table"):
        part_name("nope", 0)
    with pytest.raises(ValueError, match="unknown tables"):
        writer.write_encoded({}, {"nope": parts})


def test_write_serialises_datetimes_and_survives_lone_surrogates(tmp_path: Path) -> None:
    at = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    (path,) = SegmentWriter(tmp_path, "p1", sync=False).write(
        {"proxy_runs": [{"at": at, "usage": Usage(input_tokens=3), "bad": "x\udcff"}]}
    )
    row = json.loads(path.read_bytes())
    assert row["at"] == "2024-05-01T12:00:00+00:00"
    assert row["usage"]["input_tokens"] == 3
    assert row["bad"] == "x?"


def test_encode_row_keeps_lines_under_the_reader_limit(tmp_path: Path) -> None:
    row = {"exchange_id": "e1", "request_body": "x" * 500, "messages": ["y" * 300], "port": 1}
    assert encode_row(row) == (json.dumps(row, separators=(",", ":")) + "\n").encode()
    slim = json.loads(encode_row(row, max_bytes=400))
    assert slim == row | {"request_body": None, "truncated": True}
    slimmer = json.loads(encode_row(row, max_bytes=100))
    assert slimmer == {
        "exchange_id": "e1",
        "request_body": None,
        "messages": None,
        "port": 1,
        "truncated": True,
    }
    with pytest.raises(ValueError, match="cannot fit"):
        encode_row({"exchange_id": "e" * 50}, max_bytes=20)
    (path,) = SegmentWriter(tmp_path, "p", max_line_bytes=400).write({"exchanges": [row, row]})
    assert all(len(line) < 400 for line in path.read_bytes().splitlines(keepends=True))


def test_a_failed_flush_leaves_nothing_visible(tmp_path: Path) -> None:
    writer = SegmentWriter(tmp_path, "p1")
    with pytest.raises(TypeError):
        writer.write({"tool_calls": [{"exchange_id": "a"}], "exchanges": [{"x": object()}]})
    assert list_segments(tmp_path) == {t: [] for t in TABLES}  # tool_calls was only staged
    assert writer.write({"exchanges": [{"exchange_id": "b"}]})


def test_write_rejects_unknown_tables_and_values(tmp_path: Path) -> None:
    writer = SegmentWriter(tmp_path, "p1")
    with pytest.raises(ValueError, match="unknown tables"):
        writer.write({"nope": [{}]})
    with pytest.raises(TypeError, match="not JSON serialisable"):
        writer.write({"exchanges": [{"x": object()}]})


@pytest.mark.parametrize("proxy_id", ["", "_schema", ".hidden", "a/b", "x" * 200])
def test_proxy_id_must_be_a_plain_name(tmp_path: Path, proxy_id: str) -> None:
    with pytest.raises(ValueError, match="proxy id"):
        SegmentWriter(tmp_path, proxy_id)


def test_numbering_continues_after_restart_tmp_and_compaction(tmp_path: Path) -> None:
    first = SegmentWriter(tmp_path, "p1")
    first.write({"exchanges": [{"exchange_id": "a"}]})
    first.write({"exchanges": [{"exchange_id": "b"}]})
    # A killed writer's half-written flush holds on to its number too.
    (first.dir / "tool_calls.0000000003.jsonl.tmp").write_text("{")
    assert SegmentWriter(tmp_path, "p1").seq == 3
    for p in first.dir.iterdir():
        p.unlink()
    write_high_water(first.dir, 7)
    again = SegmentWriter(tmp_path, "p1")
    assert again.write({"exchanges": [{}]})[0].name == "exchanges.0000000008.jsonl"


def test_high_water_never_lowers(tmp_path: Path) -> None:
    assert read_high_water(tmp_path) == 0
    write_high_water(tmp_path, 5)
    write_high_water(tmp_path, 3)
    assert read_high_water(tmp_path) == 5
    (tmp_path / HIGH_WATER_FILE).write_text("garbage")
    assert read_high_water(tmp_path) == 0


def test_parse_segment_name() -> None:
    assert parse_segment_name("exchanges.0000000012.jsonl") == ("exchanges", 12)
    assert parse_segment_name("exchanges.0000000012.jsonl.tmp") is None
    assert parse_segment_name("unknown.0000000012.jsonl") is None
    assert parse_segment_name("exchanges.12.jsonl") is None
    assert segment_glob("tool_calls") == "segments/*/tool_calls.*.jsonl"


def test_list_segments_skips_schema_tmp_and_strangers(tmp_path: Path) -> None:
    assert list_segments(tmp_path) == {t: [] for t in TABLES}
    b = SegmentWriter(tmp_path, "b")
    a = SegmentWriter(tmp_path, "a")
    b.write({"exchanges": [{}]})
    a.write({"exchanges": [{}], "tool_calls": [{}]})
    a.write({"exchanges": [{}]})
    schema = tmp_path / "segments" / SCHEMA_DIR
    schema.mkdir()
    (schema / "exchanges.0000000000.jsonl").touch()
    (a.dir / "exchanges.0000000009.jsonl.tmp").touch()
    (a.dir / "notes.txt").touch()
    (tmp_path / "segments" / "stray-file").touch()
    found = list_segments(tmp_path)
    assert [str(p.relative_to(tmp_path)) for p in found["exchanges"]] == [
        "segments/a/exchanges.0000000001.jsonl",
        "segments/a/exchanges.0000000002.jsonl",
        "segments/b/exchanges.0000000001.jsonl",
    ]
    assert len(found["tool_calls"]) == 1
    assert found["proxy_runs"] == []


def test_child_rows_repeat_the_parent_columns():
    from datetime import UTC, datetime

    from tests.builders import chat_exchange
    from toolproxy.store.segments import child_rows

    ex = chat_exchange("ex1", "s1", datetime(2024, 5, 1, 12, 0, tzinfo=UTC))
    (row,) = child_rows(ex, [ToolResult(message_index=2, call_id="c1", content="18C")])
    assert set(TABLES["tool_results"]) <= set(row)
    assert (row["exchange_id"], row["session_id"], row["started_at"], row["call_id"]) == (
        "ex1",
        "s1",
        "2024-05-01T12:00:00+00:00",
        "c1",
    )


def test_plain_tables_are_written_as_the_json_module_writes_them() -> None:
    row = {
        "run": "r1",
        "case_id": "caf\u00e9 \u2028 \U0001f600",
        "passed": False,
        "label": None,
        "calls": [{"args": [{"name": "n", "bucket": "ok", "judged": False}], "errors": []}],
        "expected_tools": ["t"],
        "n": 2**63 - 1,
    }
    assert json.loads(encode_plain_row(row)) == json.loads(encode_row(row))
    assert encode_plain_row(row).endswith(b"}\n") and b"\n" not in encode_plain_row(row)[:-1]


@pytest.mark.parametrize(
    "row",
    [
        {"case_id": "lone \ud800 surrogate"},  # orjson refuses it; the json path writes "?"
        {"n": 2**70},  # beyond 64 bits
        {1: "a non-string key"},
        {"big": "x" * 300},  # too long for the line limit below: slimmed like any row
    ],
)
def test_rows_orjson_refuses_take_the_usual_path(row: dict[Any, Any]) -> None:
    assert encode_plain_row(row, max_bytes=256) == encode_row(row, max_bytes=256)


@pytest.mark.parametrize(
    ("text", "edges"),
    [
        (b"", (b"", b"")),
        (b"one\n", (b"one", b"one")),
        (b"one", (b"one", b"one")),
        (b"one\ntwo\n", (b"one", b"two")),
        (b"one\ntwo", (b"one", b"two")),
        (b"a\n" + b"x" * 50 + b"\n" + b"last-" * 20 + b"\n", (b"a", b"last-" * 20)),
        (b"a\n" + b"b\n" * 40 + b"end\n", (b"a", b"end")),
    ],
)
def test_edge_lines_reads_the_first_and_last_line(tmp_path: Path, text: bytes, edges) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(text)
    assert edge_lines(path) == edges
    assert edge_lines(path, chunk=4) == edges  # a last line longer than a read from the end
