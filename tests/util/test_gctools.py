"""toolproxy.util.gctools: the collector paused, or objects frozen, only meanwhile."""

from __future__ import annotations

import gc

import pytest

from toolproxy.util.gctools import frozen_gc, paused_gc


def test_paused_gc_restores_the_collector_even_on_error():
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_gc():
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_paused_gc_leaves_a_disabled_collector_disabled():
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_frozen_gc_freezes_meanwhile_and_gives_everything_back():
    before = gc.get_freeze_count()
    kept = [object() for _ in range(10)]
    with frozen_gc():
        assert gc.get_freeze_count() > before
    assert gc.get_freeze_count() == 0 and kept
