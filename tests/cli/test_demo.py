"""`toolproxy demo --formats`, run for real: scripted upstream + mitmdump + SDK agents in
every wire format."""

import pytest

from tests.paths import REPO
from toolproxy import store
from toolproxy.cli.demo import DEMO_KEY, run_demo

pytestmark = pytest.mark.e2e


def test_demo_captures_every_format_and_prints_a_summary(tmp_path):
    capture = tmp_path / "demo"
    lines: list[str] = []
    assert run_demo(capture, out=lines.append) == 0
    text = "\n".join(lines)
    assert "sessions:" in text and "tool calls:" in text
    _, sessions = store.query(capture, "SELECT count(*) FROM sessions")
    assert sessions == [(5,)]  # one per conversation: chaining works across all formats
    _, formats = store.query(
        capture, "SELECT wire_format, count(*) FROM exchanges GROUP BY 1 ORDER BY 1"
    )
    assert formats == [("anthropic_messages", 2), ("openai_chat", 5), ("openai_responses", 2)]
    _, bad = store.query(
        capture, "SELECT arguments_raw FROM tool_calls WHERE parse_error IS NOT NULL"
    )
    assert bad == [('{"city": "Par',)]
    _, results = store.query(capture, "SELECT count(*) FROM tool_results")
    assert results == [(5,)]
    for path in capture.rglob("*"):
        if path.is_file():
            assert DEMO_KEY.encode() not in path.read_bytes()


def test_demo_replaces_an_old_capture(tmp_path):
    capture = tmp_path / "demo"
    run_demo(capture, out=lambda line: None)
    run_demo(capture, out=lambda line: None)
    _, rows = store.query(capture, "SELECT count(*) FROM exchanges")
    assert rows == [(9,)]


def test_the_docs_sql_examples_run_on_the_demo_capture(tmp_path):
    import re

    page = (REPO / "docs" / "architecture.md").read_text()
    block = re.search(r"## Useful SQL\n\n```sql\n(.*?)```", page, re.S)
    assert block
    statements = [s.strip() for s in block.group(1).split(";") if s.strip()]
    assert len(statements) >= 5
    capture = tmp_path / "demo"
    run_demo(capture, out=lambda line: None)
    for sql in statements:
        store.query(capture, sql)  # raises QueryError if an example went stale
    _, calls = store.query(capture, statements[0])
    assert calls  # the first example has rows on the demo
