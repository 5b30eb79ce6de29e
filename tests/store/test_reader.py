"""toolproxy.store.reader: one connection per read batch, and a change signal that opens
nothing."""

from __future__ import annotations

import pytest

from tests.seeded import seed_capture
from toolproxy import store
from toolproxy.store.queries import exchanges
from toolproxy.store.segments import SegmentWriter


def test_a_batch_runs_several_queries_and_closes(seeded_capture):
    with store.reading(seeded_capture) as r:
        assert r.scalar("SELECT count(*) FROM exchanges") == 8
        assert r.typed(lambda x, y: (y, x), "SELECT 1, 2") == [(2, 1)]
    with pytest.raises(Exception, match="closed"):
        r.rows("SELECT 1")


def test_duckdb_errors_come_back_as_query_errors(seeded_capture):
    with store.reading(seeded_capture) as r, pytest.raises(store.QueryError, match="nope"):
        r.rows("SELECT * FROM nope")


def test_an_id_table_filters_several_queries_by_one_list(seeded_capture):
    with store.reading(seeded_capture) as r:
        ids = sorted(x[0] for x in r.rows("SELECT exchange_id FROM exchanges"))
        where = r.id_table("wanted", [ids[0], ids[-1], "nope", 'it\'s "odd"'])
        assert where == "IN (SELECT id FROM wanted)"
        found = r.rows(f"SELECT exchange_id FROM exchanges WHERE exchange_id {where} ORDER BY 1")
        assert [x[0] for x in found] == [ids[0], ids[-1]]
        assert r.scalar("SELECT count(*) FROM wanted") == 4
        r.id_table("wanted", [])  # a second list replaces the first
        assert r.scalar("SELECT count(*) FROM wanted") == 0
        with pytest.raises(ValueError, match="not a table name"):
            r.id_table("x; DROP TABLE exchanges", ids)
    with store.reading(seeded_capture) as r, pytest.raises(store.QueryError):
        r.scalar("SELECT count(*) FROM wanted")  # the table was the batch's own


def test_a_reader_does_not_hold_the_capture_after_its_batch(tmp_path):
    capture = seed_capture(tmp_path / "cap")
    with store.reading(capture) as r:
        exchanges.count_exchanges(r)
    assert store.compact(capture).files > 0  # compact does not wait for a closed reader


def test_version_changes_when_something_is_written_and_only_then(tmp_path):
    capture = seed_capture(tmp_path / "cap")
    first = store.version(capture)
    with store.reading(capture) as r:
        exchanges.count_exchanges(r)
    assert store.version(capture) == first  # reading changes nothing
    SegmentWriter(capture, "seed").write({"proxy_runs": []})  # nothing to write
    assert store.version(capture) == first
    SegmentWriter(capture, "another").write(
        {"grades": [{"run": "x", "case_id": "c", "graded_at": "t", "passed": True}]}
    )
    second = store.version(capture)
    assert second != first
    store.compact(capture)
    assert store.version(capture) != second


def test_version_of_a_folder_that_is_not_a_capture_is_stable(tmp_path):
    assert store.version(tmp_path / "nothing") == store.version(tmp_path / "nothing")
