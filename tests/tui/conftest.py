"""Fixtures the TUI tests share: a capture graded by the real `toolproxy grade`."""

from __future__ import annotations

import contextlib
import io

import pytest

from tests.seeded import seed_capture
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
