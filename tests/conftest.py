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


def _checkout_outputs() -> set[tuple[str, int]]:
    """What the commands write by default, relative to the working directory (which is
    the checkout): captures (by name), pulled schemas and cases files (with their mtimes,
    so a rewrite counts even when the bytes are the same)."""
    found: set[tuple[str, int]] = set()
    captures = CHECKOUT / "captures"
    if captures.is_dir():
        found |= {(f"captures/{p.name}", 0) for p in captures.iterdir()}
    for folder in ("schemas/mcp", "expectations"):
        root = CHECKOUT / folder
        if root.is_dir():
            found |= {
                (str(p.relative_to(CHECKOUT)), p.stat().st_mtime_ns)
                for p in root.rglob("*")
                if p.is_file()
            }
    return found


@pytest.fixture(autouse=True)
def no_capture_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's $TOOLPROXY_CAPTURE must not send the tests' default capture (or
    theirs, in a subprocess) into that developer's own capture."""
    monkeypatch.delenv("TOOLPROXY_CAPTURE", raising=False)


@pytest.fixture(autouse=True)
def checkout_stays_clean() -> Iterator[None]:
    """No test writes into the checkout what the CLI writes by default (`captures/default`,
    `schemas/mcp/`, `expectations/`, all relative to the working directory)."""
    before = _checkout_outputs()
    yield
    new = _checkout_outputs() - before
    assert not new, f"the test wrote into the checkout: {sorted(p for p, _ in new)}"


# --- end the checkout stays clean ------------------------------------------------------


# --- the shared seeded capture (owner: toolproxy/store) ---------------------------------
@pytest.fixture(scope="session")
def seeded_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`tests.seeded.seed_capture`, written once per test session; tests only read it."""
    from tests.seeded import seed_capture

    return seed_capture(tmp_path_factory.mktemp("seeded") / "capture")


# --- end the shared seeded capture ------------------------------------------------------


# --- Ctrl-C reaches what the tests start (owner: every test that sends SIGINT) -----------
import signal  # noqa: E402

# A suite started as a background job without job control (`cmd &` in a script, CI
# runners) inherits SIGINT ignored, and an ignored signal stays ignored in every process
# it starts: the tests that stop a server, `fanout` or `demoloop` with Ctrl-C would wait
# in vain. A handled signal is reset to the default in a started process, so handling it
# here gives every child its ordinary Ctrl-C.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# --- end Ctrl-C reaches what the tests start -----------------------------------------------
