"""The store tests' fixture: an empty capture."""

from pathlib import Path

import pytest

from toolproxy import store


@pytest.fixture
def cap(tmp_path: Path) -> Path:
    return store.init_capture(tmp_path / "cap")
