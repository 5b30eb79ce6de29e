"""Pure core, thin adapters: importing the core loads no SDK (harlequin's check)."""

import subprocess
import sys

import pytest

CORE = [
    "toolproxy.records",
    "toolproxy.wire",
    "toolproxy.capture.redact",
    "toolproxy.capture.session",
    "toolproxy.capture.tap",
    "toolproxy.capture.rows",
    "toolproxy.store.segments",
    "toolproxy.capture.recorder",
    "toolproxy.capture.worker",
    "toolproxy.store.catalog",
    "toolproxy.wire.toolnames",
    "toolproxy.mcp.config",
    "toolproxy.mcp.adhoc",
    "toolproxy.mcp.snapshot",
    "toolproxy.mcp.schemadiff",
    "toolproxy.schema.validator",
    "toolproxy.mcp.budget",
    "toolproxy.mcp.drift",
    "toolproxy.capture.link",
    "toolproxy.grade.labels",
    "toolproxy.grade.model",
    "toolproxy.grade.matchers",
    "toolproxy.grade.parsestage",
    "toolproxy.grade.schemastage",
    "toolproxy.grade.checker",
    "toolproxy.grade.casefile",
    "toolproxy.grade.expectations",
    "toolproxy.grade.metrics",
    "toolproxy.grade.vendor",
    "toolproxy.grade.gate",
    "toolproxy.grade.gallery",
    "toolproxy.grade.observe",
    "toolproxy.grade.report",
    "toolproxy.replay.model",
    "toolproxy.replay.convert",
    "toolproxy.replay.config",
    "toolproxy.replay.feedback",
    "toolproxy.replay.compare",
    "toolproxy.replay.reply",
    "toolproxy.replay.stream",
    "toolproxy.replay.summary",
    "toolproxy.replay.shares",
    "toolproxy.util.gctools",
]
# Adapters by design (they import the store, or the judge's openai client, at the top):
# toolproxy.grade.runner, toolproxy.grade.labeling, toolproxy.grade.judge.
SDKS = ["mitmproxy", "duckdb", "openai", "mcp", "textual", "anthropic"]


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_sdk(module):
    code = f"import sys, {module}; print(','.join(m for m in {SDKS!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"


def test_only_the_store_package_imports_duckdb_and_only_the_addon_mitmproxy():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "toolproxy"
    for sdk, allowed in (
        ("duckdb", {"store"}),
        ("mitmproxy", {"addon.py"}),
        ("mcp", {"mcpclient.py"}),
        ("openai", {"demo.py", "llm.py", "client.py"}),
    ):
        users = {
            p.name if sdk != "duckdb" else p.relative_to(root).parts[0]
            for p in root.rglob("*.py")
            if any(
                line.startswith((f"import {sdk}", f"from {sdk}"))
                for line in p.read_text().splitlines()
            )
        }
        assert users <= allowed, (sdk, users)
