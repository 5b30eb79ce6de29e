"""Compaction into Parquet: every crash point between two steps neither loses a row nor
counts one twice, and the catalog can be lost, damaged or old and rebuilt from the files."""

import shutil
from pathlib import Path

import duckdb

from tests.store.helpers import exchange_rows
from toolproxy import store
from toolproxy.store import compaction
from toolproxy.store.catalog import cached_dir, pending_dir
from toolproxy.store.segments import TABLES, SegmentWriter, list_segments


def counts(cap: Path) -> dict[str, int]:
    return store.summary(cap)["tables"]


def parquet(cap: Path, folder: str) -> list[Path]:
    return sorted(p for p in (cap / folder).glob("*.parquet") if not p.name.startswith("_"))


def seeded(tmp_path: Path, batches: int = 3) -> Path:
    cap = store.init_capture(tmp_path / "cap", live=True)
    writer = SegmentWriter(cap, "p1")
    for i in range(batches):
        writer.write(exchange_rows(2, prefix=f"b{i}-"))
    return cap


def expected(batches: int = 3) -> dict[str, int]:
    return dict.fromkeys(TABLES, 2 * batches) | {"proxy_runs": 0}


def test_compact_writes_parquet_any_engine_reads(tmp_path):
    cap = seeded(tmp_path)
    store.compact(cap)
    assert counts(cap) == expected()
    assert not any(list_segments(cap).values())
    files = parquet(cap, cached_dir("exchanges"))
    assert len(files) == 1
    plain = duckdb.connect()  # no catalog, no toolproxy: the files alone
    assert plain.execute(f"SELECT count(*) FROM read_parquet('{files[0]}')").fetchone() == (6,)


def test_crash_after_parquet_written_before_segments_deleted(tmp_path):
    cap = seeded(tmp_path)
    saved = tmp_path / "saved"
    shutil.copytree(cap / "segments", saved)
    with duckdb.connect() as con:
        compaction.compact_folder(con, cap, cap / "segments" / "p1", set())
    shutil.rmtree(cap / "segments")
    shutil.copytree(saved, cap / "segments")  # as if the deletion never happened
    assert counts(cap) == expected()
    store.compact(cap)
    assert counts(cap) == expected() and not any(list_segments(cap).values())


def test_crash_after_fold_commit_before_files_moved(tmp_path):
    cap = seeded(tmp_path)
    with duckdb.connect() as con:
        compaction.compact_folder(con, cap, cap / "segments" / "p1", set())
    pending = {t: parquet(cap, pending_dir(t)) for t in TABLES}
    store.compact(cap)
    for table, files in pending.items():  # put them back where the crash left them
        for f in files:
            shutil.move(cap / cached_dir(table) / f.name, f)
    assert counts(cap) == expected()
    store.compact(cap)
    assert counts(cap) == expected()
    assert not parquet(cap, pending_dir("exchanges"))


def test_crash_after_merge_before_replaced_files_deleted(tmp_path):
    cap = store.init_capture(tmp_path / "cap", live=True)
    writer = SegmentWriter(cap, "p1")
    kept = tmp_path / "kept"
    kept.mkdir()
    with duckdb.connect() as con:
        for i in range(compaction.MERGE_AT):
            writer.write(exchange_rows(1, prefix=f"m{i}-"))
            compaction.compact_folder(con, cap, cap / "segments" / "p1", set())
        for f in parquet(cap, pending_dir("exchanges")):
            shutil.copy(f, kept / f.name)
        assert compaction.merge_pending(con, cap, "p1") == compaction.MERGE_AT * (len(TABLES) - 1)
    for f in kept.iterdir():  # the replaced files survived the crash
        shutil.copy(f, cap / pending_dir("exchanges") / f.name)
    assert counts(cap)["exchanges"] == compaction.MERGE_AT
    store.compact(cap)
    assert counts(cap)["exchanges"] == compaction.MERGE_AT
    assert not parquet(cap, pending_dir("exchanges"))


def test_a_deleted_catalog_is_rebuilt_from_the_files(tmp_path):
    cap = seeded(tmp_path)
    store.compact(cap)
    writer = SegmentWriter(cap, "p2")
    writer.write(exchange_rows(2, prefix="late-"))  # pending segments as well
    with duckdb.connect() as con:
        compaction.compact_folder(con, cap, cap / "segments" / "p2", set())
    writer.write(exchange_rows(2, prefix="later-"))
    (cap / "capture.duckdb").unlink()
    assert counts(cap) == expected(5)


def test_a_damaged_catalog_is_set_aside_and_rebuilt(tmp_path):
    cap = seeded(tmp_path)
    store.compact(cap)
    db = cap / "capture.duckdb"
    with open(db, "r+b") as f:
        f.truncate(db.stat().st_size // 2)
    assert counts(cap) == expected()  # opening it repaired it
    assert [p.name.startswith("capture.duckdb.damaged-") for p in cap.glob("*.damaged-*")]


def test_repair_rebuilds_a_healthy_catalog_on_request(tmp_path):
    cap = seeded(tmp_path)
    store.compact(cap)
    done = store.repair(cap)
    assert done["set_aside"] is None and done["tables"] == expected()
    done = store.repair(cap, rebuild=True)
    assert done["set_aside"].startswith("capture.duckdb.damaged-")
    assert done["tables"] == expected()


def test_rows_of_a_schema_1_catalog_are_written_to_parquet(tmp_path):
    cap = seeded(tmp_path)
    store.compact(cap)
    for f in (cap / "parquet").rglob("*.parquet"):
        f.unlink()  # a capture from before Parquet: its rows live in the catalog only
    with duckdb.connect(str(cap / "capture.duckdb")) as con:
        con.execute("DELETE FROM cached_parquet")
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    store.init_capture(cap)  # the upgrade
    assert parquet(cap, cached_dir("exchanges"))
    (cap / "capture.duckdb").unlink()
    assert counts(cap) == expected()


def test_merges_stay_within_a_size_tier(tmp_path):
    import os

    cap = store.init_capture(tmp_path / "cap", live=True)
    writer = SegmentWriter(cap, "p1")
    folder = cap / "segments" / "p1"
    with duckdb.connect() as con:
        big = os.urandom(1_000_000).hex()  # does not compress: a file past the first tier
        writer.write({"exchanges": exchange_rows(1, prefix="big", request_body=big)["exchanges"]})
        compaction.compact_folder(con, cap, folder, set())
        for i in range(compaction.MERGE_AT - 1):
            writer.write({"exchanges": exchange_rows(1, prefix=f"s{i}")["exchanges"]})
            compaction.compact_folder(con, cap, folder, set())
        # eight files, but one is big: the small seven wait for an eighth of their size
        assert compaction.merge_pending(con, cap, "p1") == 0
        writer.write({"exchanges": exchange_rows(1, prefix="s-last")["exchanges"]})
        compaction.compact_folder(con, cap, folder, set())
        assert compaction.merge_pending(con, cap, "p1") == compaction.MERGE_AT
    assert len(parquet(cap, pending_dir("exchanges"))) == 2
    assert counts(cap)["exchanges"] == compaction.MERGE_AT + 1
