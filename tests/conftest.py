"""Shared pytest fixtures. Each block is owned by the module it serves; keep them apart."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# --- scripted upstream (owner: toolproxy/scripted) -------------------------------------
from toolproxy.scripted import ScriptedUpstream


@pytest.fixture
def scripted_upstream() -> Iterator[ScriptedUpstream]:
    """A running scripted model upstream with deterministic ids; answers "ok" until a test
    calls `set_script(...)` on it. Point SDKs at `.url + "/v1"` (OpenAI) or `.url`
    (Anthropic)."""
    with ScriptedUpstream(deterministic=True) as upstream:
        yield upstream


# --- end scripted upstream -------------------------------------------------------------
