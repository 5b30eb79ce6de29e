"""Merging captures: another capture root's recorded files moved into this one.

A fleet of proxies on many hosts can record into one capture on shared storage (each
proxy writes only its own `segments/<proxy_id>/` folder), or each host into a capture of
its own that `toolproxy compact --from HOST_CAPTURE` later drains into a central one.
What moves is what proxies write, under the source's compaction lock so its own
compactor never runs meanwhile:

- finished segment files (`segments/<proxy>/*.jsonl`; `.tmp` files are being written and
  stay), into the same proxy folder here; the source folder keeps a high-water mark so a
  proxy restarted there never reuses a moved file's name;
- pending Parquet files (`parquet/new/<table>/`, what recording proxies' workers compact
  their segments into), into this capture's pending folder, metadata and all.

Parquet files a `compact` of the source folded (`parquet/<table>/`) belong to the
source's own catalog, so they are copied, not moved, and recognised by name on the next
merge. Then this capture's compaction folds everything in, as if its own proxies had
written it. Proxy ids are unique per host (`host-pid-random`), so names never collide.

A file is moved by rename on one filesystem, else copied, fsynced, and then deleted at
the source; a file that arrived here already (a crash between the copy and the delete,
or a merge that compacted it) is only deleted at the source. So a merge may be re-run
after any crash: no row is lost or counted twice.
"""

from __future__ import annotations

import errno
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from toolproxy.store import catalog
from toolproxy.store.connection import CaptureError
from toolproxy.store.files import compaction_lock, publish, rel
from toolproxy.store.segments import (
    SCHEMA_DIR,
    SEGMENTS_DIR,
    TABLES,
    parse_segment_name,
    read_high_water,
    write_high_water,
)
from toolproxy.util.words import counted


@dataclass
class Merged:
    """What one source gave."""

    segments: int = 0  # segment files moved in
    parquet: int = 0  # Parquet files moved or copied in


def _move(src: Path, dest: Path, keep: bool = False) -> None:
    """`src` to `dest` whole: a rename, or across filesystems a copy made durable first."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if not keep:
        try:
            os.replace(src, dest)
            return
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.copyfile(src, tmp)
    publish(tmp, dest)  # fsynced, renamed into place, the folder fsynced
    if not keep:
        src.unlink()


def _known(con: duckdb.DuckDBPyConnection) -> tuple[set[str], set[str]]:
    """(segment files compacted here, Parquet file names cached here)."""
    segments = {f for (f,) in con.execute("SELECT file FROM compacted_segments").fetchall()}
    parquet = {f for (f,) in con.execute("SELECT file FROM cached_parquet").fetchall()}
    return segments, parquet


@dataclass
class _Plan:
    """What a merge will move: (table, source file, destination, keep the source's), the
    source's files that arrived here before (deleted), each proxy folder's high-water."""

    moves: list[tuple[str, Path, Path, bool]] = field(default_factory=list)
    arrived: list[Path] = field(default_factory=list)
    high: dict[Path, int] = field(default_factory=dict)


def _plan_segments(root: Path, source: Path, compacted: set[str], plan: _Plan) -> None:
    base = source / SEGMENTS_DIR
    for folder in sorted(base.iterdir()) if base.is_dir() else ():
        if not folder.is_dir() or folder.name == SCHEMA_DIR:
            continue
        here = root / SEGMENTS_DIR / folder.name
        high_here = read_high_water(here) if here.is_dir() else 0
        high = 0
        for p in sorted(folder.iterdir()):
            parsed = parse_segment_name(p.name)
            if parsed is None or p.name.endswith(".tmp"):
                continue
            high = max(high, parsed[1])
            dest = here / p.name
            if rel(root, dest) in compacted or parsed[1] <= high_here or dest.exists():
                plan.arrived.append(p)  # merged before (a crash came before this delete)
            else:
                plan.moves.append((parsed[0], p, dest, False))
        plan.high[folder] = high


def _plan_parquet(root: Path, source: Path, cached: set[str], plan: _Plan) -> None:
    for table in TABLES:
        pending = root / catalog.pending_dir(table)
        for folder, keep in (
            (catalog.pending_dir(table), False),
            (catalog.cached_dir(table), True),
        ):
            src = source / folder
            for p in sorted(src.glob("*.parquet")) if src.is_dir() else ():
                if p.name == catalog.PLACEHOLDER:
                    continue
                here = (pending / p.name, root / catalog.cached_dir(table) / p.name)
                if p.name in cached or any(h.exists() for h in here):
                    if not keep:
                        plan.arrived.append(p)
                    continue
                plan.moves.append((table, p, pending / p.name, keep))


SHOWN_IDS = 3  # exchange ids a refused merge names


def _refuse_overlap(con: duckdb.DuckDBPyConnection, source: Path, plan: _Plan) -> None:
    """CaptureError when the exchanges the plan brings include some this capture holds
    (the same traffic imported into both, a copy of a capture merged back): merged, each
    would be held twice and graded twice. Checked before anything moves."""
    bringing = [src for table, src, _, _ in plan.moves if table == "exchanges"]
    parquet = [catalog.literal(str(p)) for p in bringing if p.suffix == ".parquet"]
    segments = [catalog.literal(str(p)) for p in bringing if p.suffix != ".parquet"]
    parts = []
    if parquet:
        listed = ", ".join(parquet)
        parts.append(f"SELECT exchange_id FROM read_parquet([{listed}], union_by_name=true)")
    if segments:
        listed = ", ".join(segments)
        rows = catalog.segment_rows("exchanges", f"[{listed}]")
        parts.append(f"SELECT exchange_id FROM ({rows})")
    if not parts:
        return
    incoming = " UNION ".join(parts)
    found = con.execute(
        f"SELECT DISTINCT i.exchange_id FROM ({incoming}) i "
        "WHERE i.exchange_id IN (SELECT exchange_id FROM exchanges) ORDER BY 1"
    ).fetchall()
    if found:
        ids = ", ".join(x for (x,) in found[:SHOWN_IDS]) + (
            ", ..." if len(found) > SHOWN_IDS else ""
        )
        raise CaptureError(
            f"{source} holds {counted(len(found), 'exchange')} this capture already "
            f"has ({ids}): the same traffic recorded or imported into both, or a copy of this "
            "capture; merged, each would be counted twice, so nothing was moved from it"
        )


def merge_from(con: duckdb.DuckDBPyConnection, root: Path, source: Path) -> Merged:
    """Move `source`'s recorded files into the capture at `root` (whose catalog `con` is
    open read-write, its compaction lock held); the caller then compacts. A source that
    holds exchanges this capture has is refused (`CaptureError`) before anything moves."""
    with compaction_lock(source):
        compacted, cached = _known(con)
        plan = _Plan()
        _plan_parquet(root, source, cached, plan)  # first: they may hold the segments next
        _plan_segments(root, source, compacted, plan)
        _refuse_overlap(con, source, plan)
        for p in plan.arrived:
            p.unlink(missing_ok=True)
        merged = Merged()
        for _, src, dest, keep in plan.moves:
            _move(src, dest, keep=keep)
            if src.suffix == ".parquet":
                merged.parquet += 1
            else:
                merged.segments += 1
        for folder, high in plan.high.items():
            if high > read_high_water(folder):
                write_high_water(folder, high)  # a proxy restarted there continues after it
        return merged
