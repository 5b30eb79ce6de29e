"""toolproxy.util.gctools: the collector paused, or objects frozen, only meanwhile."""

from __future__ import annotations

import gc
import subprocess
import sys

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


def test_what_paused_gc_saw_made_is_left_to_full_collections():
    """The objects made meanwhile end in the oldest generation: the first young collection
    after the block does not walk them all (in a 90,818-case `grade -j1` that one walk took
    0.45-0.55 s); a full collection still frees the cycles among them. In a fresh
    interpreter, which starts with objects of its own frozen, as `toolproxy` runs."""
    code = """
import gc
from toolproxy.util.gctools import paused_gc
with paused_gc():
    kept = [[i] for i in range(1000)]
    cycle = []
    cycle.append(cycle)
    del cycle
oldest = {id(o) for o in gc.get_objects(generation=2)}
young = {id(o) for o in gc.get_objects(generation=0)}
print(all(id(k) in oldest for k in kept), any(id(k) in young for k in kept))
print(gc.isenabled(), gc.collect() >= 1)
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["True", "False", "True", "True"]


def test_paused_gc_inside_frozen_gc_thaws_nothing():
    with frozen_gc():
        frozen = gc.get_freeze_count()
        with paused_gc():
            made = [[1] for _ in range(10)]
        assert gc.get_freeze_count() == frozen and made
    assert gc.get_freeze_count() == 0
