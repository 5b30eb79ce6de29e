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


# --- the checkout stays clean (owner: every test) --------------------------------------
from pathlib import Path  # noqa: E402

CHECKOUT = Path(__file__).resolve().parent.parent


def _checkout_captures() -> set[str]:
    folder = CHECKOUT / "captures"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


@pytest.fixture(autouse=True)
def checkout_stays_clean() -> Iterator[None]:
    """No test writes a capture into the checkout (the CLI's and the addon's default
    `captures/default` is relative to the working directory, which is the checkout)."""
    before = _checkout_captures()
    yield
    new = _checkout_captures() - before
    assert not new, f"the test wrote captures into the checkout: {sorted(new)}"


# --- end the checkout stays clean ------------------------------------------------------


# --- the shared seeded capture (owner: toolproxy/store) ---------------------------------
@pytest.fixture(scope="session")
def seeded_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`tests.seeded.seed_capture`, written once per test session; tests only read it."""
    from tests.seeded import seed_capture

    return seed_capture(tmp_path_factory.mktemp("seeded") / "capture")


# --- end the shared seeded capture ------------------------------------------------------
