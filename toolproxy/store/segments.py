"""Segment files: how a proxy hands records to the capture without touching DuckDB.

A capture is a directory. Each proxy process appends to its own folder of immutable,
newline-delimited JSON files, one file per table per flush::

    <capture>/segments/<proxy_id>/<table>.<seq:010d>.jsonl

``seq`` is the flush number: one flush writes every non-empty table under the same ``seq``.
A file is written as ``<name>.tmp``, fsynced, renamed into place and the folder fsynced, so a
reader (or a crash) sees a file whole or not at all; ``kill -9`` loses only the flush being
written. Readers match ``*.jsonl`` only, so ``.tmp`` leftovers are invisible to them and
compaction removes them once they are stale.

The columns are defined in ``tables``. This module is pure: no DuckDB, and nothing here runs
on the request path (the recorder thread calls ``SegmentWriter.write``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson
from pydantic import BaseModel

from toolproxy.store.tables import KEY_COLUMNS, TABLES, child_rows, model_columns

__all__ = ["KEY_COLUMNS", "TABLES", "child_rows", "model_columns"]  # re-exported for writers

SEGMENTS_DIR = "segments"
# Holds one empty file per table so the views' globs always match at least one file.
SCHEMA_DIR = "_schema"
# Per proxy folder: the highest seq compaction has removed, so a restarted writer with the
# same proxy id never reuses a file name that compaction already recorded.
HIGH_WATER_FILE = ".compacted_seq"
SUFFIX = ".jsonl"
# Longest segment line a reader accepts (DuckDB's maximum_object_size). One longer line would
# make every query over the capture fail, so the writer keeps each line under it. Readers pay
# a little per file for a larger value; this one fits two 64 MiB bodies and their escaping.
MAX_LINE_BYTES = 256 * 1024 * 1024

_NAME = re.compile(r"^(?P<table>[a-z_]+)\.(?P<seq>\d{10})\.jsonl(?P<tmp>\.tmp)?$")
_PROXY_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


# Within one flush, children are renamed into place before their exchanges, so a crash in
# between leaves orphan children (invisible to joins) rather than an exchange that seems to
# have made no tool calls.
_WRITE_ORDER = (
    "proxy_runs",
    "mcp_tools",
    "schema_checks",
    "grades",
    "grade_writes",
    "judge_cache",
    "replay_diffs",
    "mcp_messages",
    "tools_offered",
    "tool_results",
    "tool_calls",
    "exchanges",
    "replay_cells",
)


def parse_segment_name(name: str) -> tuple[str, int] | None:
    """(table, seq) of a finished segment file name, or None for anything else."""
    m = _NAME.match(name)
    if m is None or m["tmp"] or m["table"] not in TABLES:
        return None
    return m["table"], int(m["seq"])


def segment_glob(table: str) -> str:
    """Glob, relative to the capture directory, matching every finished file of a table."""
    return f"{SEGMENTS_DIR}/*/{table}.*{SUFFIX}"


def placeholder(capture_dir: Path, table: str) -> Path:
    """The table's empty file in ``segments/_schema/``, there so its glob always matches."""
    return capture_dir / SEGMENTS_DIR / SCHEMA_DIR / f"{table}.{0:010d}{SUFFIX}"


def list_segments(capture_dir: Path) -> dict[str, list[Path]]:
    """Finished segment files of every proxy, by table, sorted by proxy then seq."""
    found: dict[str, list[Path]] = {table: [] for table in TABLES}
    root = Path(capture_dir) / SEGMENTS_DIR
    if not root.is_dir():
        return found
    for proxy in sorted(root.iterdir()):
        if proxy.name == SCHEMA_DIR or not proxy.is_dir():
            continue
        named = [(parse_segment_name(p.name), p) for p in proxy.iterdir()]
        for parsed, p in sorted((n, p) for n, p in named if n is not None):
            found[parsed[0]].append(p)
    return found


def edge_lines(path: Path, chunk: int = 1 << 16) -> tuple[bytes, bytes]:
    """The first and the last line of a file, without their newlines (both the one line of
    a one-line file, b"" when empty): all a reader needs of a segment file whose lines share
    a key. The file is read from its end back only as far as its last line starts."""
    with open(path, "rb") as f:
        first = f.readline()
        end = f.seek(0, os.SEEK_END)
        head = first.rstrip(b"\n")
        if end <= len(first):
            return head, head
        start = end
        while True:
            start = max(len(first), start - chunk)
            f.seek(start)
            body = f.read(end - start).rstrip(b"\n")
            if b"\n" in body or start == len(first):
                return head, body.rpartition(b"\n")[2]
            chunk *= 2


def read_high_water(proxy_dir: Path) -> int:
    """Highest seq compaction removed from this proxy folder (0 when none)."""
    try:
        return int((proxy_dir / HIGH_WATER_FILE).read_text().strip() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def write_high_water(proxy_dir: Path, seq: int) -> None:
    """Raise the folder's high-water mark to ``seq`` (never lowers it), atomically."""
    if seq <= read_high_water(proxy_dir):
        return
    tmp = proxy_dir / f"{HIGH_WATER_FILE}.tmp"
    tmp.write_text(f"{seq}\n")
    os.replace(tmp, proxy_dir / HIGH_WATER_FILE)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_json_default)


def encode_row(row: Mapping[str, Any], max_bytes: int = MAX_LINE_BYTES) -> bytes:
    """One segment line for ``row``, newline included, never ``max_bytes`` or longer.

    A row that would be longer loses its largest values (set to null, biggest first) and
    is marked ``"truncated": true``, rather than make the whole capture unreadable.
    """
    # A lone surrogate (undecodable input) becomes "?" instead of costing the whole batch.
    data = (_dumps(row) + "\n").encode("utf-8", "replace")
    slim = dict(row)
    while len(data) >= max_bytes:
        big = [k for k, v in slim.items() if v is not None and k != "truncated"]
        if not big:
            raise ValueError(f"row cannot fit in {max_bytes} bytes")
        slim[max(big, key=lambda k: len(_dumps(slim[k])))] = None
        slim["truncated"] = True
        data = (_dumps(slim) + "\n").encode("utf-8", "replace")
    return data


# Tables whose rows never hold a float (grades: names, labels, flags and words; their writes'
# summaries: names and counts; the judge's cache and schema checks: text and a verdict).
# orjson writes them, 10x faster than the json module, and the one way the two differ (orjson
# writes NaN as null) cannot arise. Any other row, or one orjson refuses (a lone surrogate, an
# integer beyond 64 bits), goes through `encode_row`.
PLAIN_TABLES = frozenset({"grades", "grade_writes", "judge_cache", "schema_checks"})


def encode_plain_row(row: Mapping[str, Any], max_bytes: int = MAX_LINE_BYTES) -> bytes:
    """`encode_row` for a row of a `PLAIN_TABLES` table."""
    try:
        data = orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE)
    except (orjson.JSONEncodeError, TypeError):
        return encode_row(row, max_bytes)
    return data if len(data) < max_bytes else encode_row(row, max_bytes)


def part_name(table: str, k: int) -> str:
    """The file helper process `k` writes its lines of `table` to, in a writer's folder, for
    `SegmentWriter.write_encoded(parts=)`: a `.tmp` name readers never match, and that
    compaction removes once stale (when a crash leaves it)."""
    if table not in TABLES:
        raise ValueError(f"unknown table: {table!r}")
    return f"{table}.part{k}{SUFFIX}.tmp"


def _copy_file(src: BinaryIO, dst: BinaryIO) -> None:
    """All of `src` appended to `dst` (both open files), in the kernel where it can."""
    dst.flush()
    size = os.fstat(src.fileno()).st_size
    try:
        while size > 0:
            copied = os.copy_file_range(src.fileno(), dst.fileno(), size)
            if copied == 0:
                break
            size -= copied
    except OSError:  # a file system or kernel without it: through Python
        pass
    shutil.copyfileobj(src, dst)  # the rest, if any (its position follows copy_file_range)


def fsync_path(path: Path) -> None:
    """fsync a file or a folder (a folder: so a rename in it is durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SegmentWriter:
    """Appends batches of rows for one proxy process as immutable segment files.

    Not thread-safe: one writer per proxy process, called from its recorder thread.
    """

    def __init__(
        self,
        capture_dir: Path | str,
        proxy_id: str,
        *,
        sync: bool = True,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        """Prepare ``<capture_dir>/segments/<proxy_id>/``; numbering continues after files
        (or the compaction high-water mark) already there. ``sync=False`` skips fsync:
        faster, but a machine crash (not a process kill) may then lose more than one flush.
        """
        if not _PROXY_ID.match(proxy_id):
            raise ValueError(f"proxy id must match {_PROXY_ID.pattern}: {proxy_id!r}")
        self.proxy_id = proxy_id
        self.dir = Path(capture_dir) / SEGMENTS_DIR / proxy_id
        self.dir.mkdir(parents=True, exist_ok=True)
        self.sync = sync
        self.max_line_bytes = max_line_bytes
        self.seq = max([read_high_water(self.dir), *self._seqs_on_disk()])

    def _seqs_on_disk(self) -> list[int]:
        # .tmp files count too: a killed writer's half-written seq is not reused.
        return [int(m["seq"]) for p in self.dir.iterdir() if (m := _NAME.match(p.name))]

    def write(self, batch: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[Path]:
        """Write one flush: a file per non-empty table. Returns the files written.

        Rows are JSON-ready dicts keyed by ``TABLES[table]`` columns (extra keys are kept
        in the file and ignored by readers). Raises ValueError for an unknown table.
        """
        return self.write_encoded({t: self.encode(t, rows) for t, rows in batch.items()})

    def encode(self, table: str, rows: Sequence[Mapping[str, Any]]) -> bytes:
        """The lines `write` would write for `rows` of `table` (to encode rows while they
        are still in the CPU's cache, then `write_encoded` them)."""
        encode = encode_plain_row if table in PLAIN_TABLES else encode_row
        return b"".join(encode(row, self.max_line_bytes) for row in rows)

    def write_encoded(
        self, batch: Mapping[str, bytes], parts: Mapping[str, Sequence[Path]] | None = None
    ) -> list[Path]:
        """`write` for lines already encoded by `encode` (table -> lines). `parts`: table ->
        files of lines encoded elsewhere (`part_name`: by forked workers), joined in order
        before the table's lines in `batch`; the caller removes them after."""
        parts = parts or {}
        unknown = (set(batch) | set(parts)) - set(TABLES)
        if unknown:
            raise ValueError(f"unknown tables: {sorted(unknown)}")
        tables = [t for t in _WRITE_ORDER if batch.get(t) or parts.get(t)]
        if not tables:
            return []
        self.seq += 1
        staged = [
            (self._stage(t, batch.get(t, b""), parts.get(t, ())), self.dir / self._name(t))
            for t in tables
        ]
        for tmp, final in staged:
            os.rename(tmp, final)
        if self.sync:
            fsync_path(self.dir)
        return [final for _, final in staged]

    def _name(self, table: str) -> str:
        return f"{table}.{self.seq:010d}{SUFFIX}"

    def _stage(self, table: str, data: bytes, parts: Sequence[Path] = ()) -> Path:
        tmp = self.dir / f"{self._name(table)}.tmp"
        with open(tmp, "wb") as f:
            for part in parts:
                with open(part, "rb") as src:
                    _copy_file(src, f)
            f.write(data)
            f.flush()
            if self.sync:
                os.fsync(f.fileno())
        return tmp
