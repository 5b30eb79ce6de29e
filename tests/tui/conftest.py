"""Fixtures the TUI tests share: a capture graded by the real `toolproxy grade`."""

from __future__ import annotations

import contextlib
import io
import pickle

import pytest

from tests.seeded import seed_capture
from tests.tui.drive import screen_diff
from toolproxy.cli.main import main

CASES = """\
- id: paris
  exchange_id: a-0
  expect: call
  calls:
    - tool: get_weather
      args:
        city: Rome
- id: rome
  exchange_id: a-1
  expect: no_call
- id: flights
  exchange_id: b-0
  expect: call
  calls:
    - tool: search
      args:
        q: hotels
"""


@pytest.fixture
def graded(tmp_path):
    capture = seed_capture(tmp_path / "cap")
    cases = tmp_path / "cases.yaml"
    cases.write_text(CASES)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["grade", str(cases), "-c", str(capture), "--run", "t1"]) == 0
    return capture


@pytest.fixture
def snap_compare(snap_compare, request):
    """pytest-textual-snapshot's `snap_compare`, which on a mismatch also prints what
    differs as text (the screens' lines, else the SVGs' lines): a CI log then says what a
    failing snapshot showed, not only that it failed (its HTML report stays on that
    machine)."""
    from pytest_textual_snapshot import node_to_report_path

    def compare(app, **options) -> bool:
        same = snap_compare(app, **options)
        if not same:
            # the plugin's record of this comparison: (same, snapshot, this run's SVG, ...)
            _, snapshot, svg, *_ = pickle.loads(node_to_report_path(request.node).read_bytes())
            print(screen_diff(str(snapshot), str(svg)))
        return same

    return compare
