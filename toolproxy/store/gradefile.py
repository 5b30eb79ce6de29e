"""A run's grades read straight from the one segment file that holds them (pure: files and
JSON, no DuckDB).

When a run's summary stands for it (`store.gradewrites`: the run's grades all in one file,
written whole by `toolproxy grade` or a replay, no case twice), every line of that file is
its case's latest grade. Through the `grades` view DuckDB parses the file's JSON, then
hands each JSON column back as text to parse again: `report`'s read of a 90,818-case run
took 2.5-3.1 s, and its 272,454 JSON columns 1.0 s more; orjson reads the file in 0.8 s,
every column decoded once.

A file is read this way only while every line is a row as its writers write it: a JSON
object of the run, with exactly the `grades` table's columns, each typed as the table
types it. Anything else (a hand-edited or damaged line) returns None: read it through
DuckDB, which has rules for those.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import orjson

from toolproxy.store.tables import TABLES

COLUMNS: Final = tuple(TABLES["grades"])
_TYPES: Final = {"VARCHAR": (str, type(None)), "BOOLEAN": (bool, type(None))}
_ALLOWED: Final = tuple(_TYPES.get(kind) for kind in TABLES["grades"].values())  # None: any
RUN: Final = COLUMNS.index("run")


def read_rows(path: Path, run: str, needle: bytes | None = None) -> list[tuple[Any, ...]] | None:
    """The rows of grades file `path`, each a tuple in `COLUMNS` order with its JSON columns
    decoded; with `needle`, only the lines that hold it. None when the file is gone or any
    line read is not a row of `run` as its writers write it."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    rows: list[tuple[Any, ...]] = []
    typed: set[tuple[type, ...]] = set()  # the column types of rows seen to be as written
    for line in _lines(data) if needle is None else _holding(data, needle):
        row = _row(line, typed)
        if row is None or row[RUN] != run:
            return None
        rows.append(row)
    return rows


def _lines(data: bytes) -> list[bytes]:
    """The lines of `data` (each ends at a newline; a last one may not)."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def _holding(data: bytes, needle: bytes) -> list[bytes]:
    """The lines of `data` that hold `needle`, found without splitting the rest."""
    found = []
    at = data.find(needle)
    while at != -1:
        end = data.find(b"\n", at)
        end = len(data) if end == -1 else end
        found.append(data[data.rfind(b"\n", 0, at) + 1 : end])
        at = data.find(needle, end)
    return found


def _row(line: bytes, typed: set[tuple[type, ...]]) -> tuple[Any, ...] | None:
    """A line as a row of the `grades` table, or None: not one as written (`typed`: the
    column types already found to be the table's)."""
    try:
        found = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(found) is not dict:
        return None
    if tuple(found) == COLUMNS:  # in the table's order, as every writer writes them
        row = tuple(found.values())
    elif len(found) == len(COLUMNS) and all(c in found for c in COLUMNS):
        row = tuple([found[c] for c in COLUMNS])
    else:
        return None
    types = tuple(map(type, row))
    if types not in typed:
        if not all(ok is None or kind in ok for kind, ok in zip(types, _ALLOWED, strict=True)):
            return None
        typed.add(types)
    return row


def label_needle(label: str) -> bytes:
    """The bytes every line of a grade labelled `label` holds, as its writers encode it
    (orjson, no spaces): lines without them are not parsed."""
    return b'"label":' + orjson.dumps(label)
