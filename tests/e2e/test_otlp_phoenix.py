"""`export --otlp` into a real Arize Phoenix (its own venv, made by scripts/setup.sh),
started here; the spans are read back through Phoenix's REST API.

The capture is the demo's (real mitmdump, the real openai and Anthropic clients, tool
results sent back), graded with the README's workflow, so grades ride along as events.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.paths import REPO
from toolproxy import store
from toolproxy.capture.proxy import free_port
from toolproxy.cli.demo import DEMO_KEY, run_demo
from toolproxy.cli.main import main

PHOENIX = Path(os.environ.get("TOOLPROXY_PHOENIX", REPO / ".venv-phoenix" / "bin" / "phoenix"))


class Phoenix:
    def __init__(self, url: str, process: subprocess.Popen[bytes], log: Path) -> None:
        self.url, self.process, self.log = url, process, log

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=30) as reply:
            return json.loads(reply.read())

    def spans(self, project: str) -> list[dict]:
        """Every span of the project (REST pages followed)."""
        out: list[dict] = []
        cursor = ""
        while True:
            page = self.get(f"/v1/projects/{project}/spans?limit=1000{cursor}")
            out += page["data"]
            if not page.get("next_cursor"):
                return out
            cursor = f"&cursor={page['next_cursor']}"

    def wait_spans(self, project: str, expected: int, timeout: float = 120.0) -> list[dict]:
        """The project's spans once `expected` are stored (Phoenix accepts a batch, then
        writes it in the background)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                found = self.spans(project)
            except OSError:  # the project does not exist yet
                found = []
            if len(found) >= expected or time.monotonic() > deadline:
                return found
            time.sleep(0.2)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory) -> Iterator[Phoenix]:
    assert PHOENIX.exists(), f"{PHOENIX} is missing: scripts/setup.sh installs Phoenix there"
    home = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(home),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = home / "phoenix.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(PHOENIX), "serve"], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    server = Phoenix(f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + 180
    try:
        while True:
            assert process.poll() is None, f"Phoenix exited:\n{log.read_text()[-3000:]}"
            try:
                server.get("/v1/projects")
                break
            except OSError:
                assert time.monotonic() < deadline, f"Phoenix never answered:\n{log.read_text()}"
                time.sleep(0.5)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="module")
def graded_demo(tmp_path_factory) -> Path:
    """The demo's capture, labeled and graded (run `demo`: one hallucination, one
    truncation), as the README's workflow does it."""
    home = tmp_path_factory.mktemp("demo")
    capture, cases = home / "cap", home / "cases.yaml"
    run_demo(capture, out=lambda line: None)
    assert main(["label", "-c", str(capture), "--out", str(cases), "--no-calls"]) == 0
    cases.write_text(cases.read_text().replace("city: Tokyo", "city: Osaka"))
    assert main(["grade", str(cases), "-c", str(capture), "--run", "demo"]) == 0
    return capture


def counts(capture: Path, sql: str) -> int:
    return int(store.query(capture, sql)[1][0][0])


def test_a_graded_capture_opens_in_phoenix(phoenix, graded_demo, seeded_capture, capsys):
    capture = graded_demo
    assert main(["export", "-c", str(capture), "--otlp", phoenix.url, "--project", "demo"]) == 0
    said = capsys.readouterr().err
    sessions = counts(capture, "SELECT count(DISTINCT session_id) FROM exchanges")
    exchanges = counts(capture, "SELECT count(*) FROM exchanges")
    answered = counts(capture, "SELECT count(*) FROM call_results WHERE result IS NOT NULL")
    assert f"exported {sessions} sessions as traces" in said
    assert phoenix.url in said

    spans = phoenix.wait_spans("demo", sessions + exchanges + answered)
    kinds = [s["span_kind"] for s in spans]
    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == kinds.count("AGENT") == sessions
    assert len({s["context"]["trace_id"] for s in spans}) == sessions  # a trace per session
    assert len(spans) == sessions + exchanges + answered
    assert kinds.count("TOOL") == answered > 0
    by_id = {s["context"]["span_id"]: s for s in spans}
    for s in spans:  # every parent is its trace's root
        if s["parent_id"] is not None:
            parent = by_id[s["parent_id"]]
            assert parent["parent_id"] is None
            assert parent["context"]["trace_id"] == s["context"]["trace_id"]

    llm = [s for s in spans if s["span_kind"] == "LLM"]
    for s in llm:
        a = s["attributes"]
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.provider.name"] in ("openai", "anthropic")
        assert a["session.id"] == a["gen_ai.conversation.id"]
    with_usage = [s for s in llm if "gen_ai.usage.input_tokens" in s["attributes"]]
    assert with_usage and all(
        s["attributes"]["llm.token_count.prompt"] == s["attributes"]["gen_ai.usage.input_tokens"]
        for s in with_usage
    )
    tool = next(s for s in spans if s["span_kind"] == "TOOL")
    assert tool["attributes"]["gen_ai.operation.name"] == "execute_tool"
    assert tool["name"] == f"execute_tool {tool['attributes']['gen_ai.tool.name']}"
    assert tool["start_time"] <= tool["end_time"]

    grades = [e for s in spans for e in s["events"] if e["name"] == "toolproxy.grade"]
    assert len(grades) == counts(capture, "SELECT count(*) FROM grades")
    labels = sorted(e["attributes"]["toolproxy.grade.label"] for e in grades
                    if not e["attributes"]["toolproxy.grade.passed"])  # fmt: skip
    assert labels == ["hallucinated_param", "truncation"]
    assert DEMO_KEY not in json.dumps(spans)

    # the same capture again: the same ids, so Phoenix keeps one copy of each span; then a
    # session of another capture (2 spans), stored after the repeat was
    assert main(["export", "-c", str(capture), "--otlp", phoenix.url, "--project", "demo"]) == 0
    other = ["export", "-c", str(seeded_capture), "--session", "s-c", "--project", "demo"]
    assert main([*other, "--otlp", phoenix.url]) == 0
    again = phoenix.wait_spans("demo", len(spans) + 2)
    assert len(again) == len(spans) + 2


def test_the_file_form_holds_the_spans_the_endpoint_got(phoenix, graded_demo, tmp_path):
    out = tmp_path / "traces.otlp.jsonl"
    assert main(["export", "-c", str(graded_demo), "--otlp-file", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    spans = [
        span
        for request in lines
        for rs in request["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
    ]
    # Phoenix keeps a span id once, whatever the project: the same spans as the first test's
    sent = ["export", "-c", str(graded_demo), "--project", "demo", "--otlp", phoenix.url]
    assert main(sent) == 0
    stored = {s["context"]["span_id"]: s for s in phoenix.wait_spans("demo", len(spans))}
    assert {s["spanId"] for s in spans} <= set(stored)
    assert all(stored[s["spanId"]]["name"] == s["name"] for s in spans)
    assert DEMO_KEY not in out.read_text()
