"""The control corpus through the whole path, not only the function.

For every item of `tests/fixtures/corpus`, the scripted upstream plays the item's raw
tool-call text (streamed for every other item; truncation items are cut right after their
arguments, with no finish event and no `[DONE]`), the real openai SDK sends the item's
tools through real mitmdump + toolproxy, an expectations file (written with
`dump_cases`) points at the recorded exchanges, `toolproxy grade` grades them, and every
item's label, buckets, not-graded flag and schema source are read back from `grades`.

Items are graded in groups that share their grading settings: real MCP schemas (written
as an `mcp_tools` pull just before their group is graded) and the LLM judge (the scripted
upstream plays the judge too, with the corpus' `keyword_judge` verdicts).
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from typing import Any

import openai
import pytest

from tests.fixtures.corpus import ITEMS, CorpusItem, keyword_judge
from toolproxy.cli.main import main
from toolproxy.grade.expectations import dump_cases
from toolproxy.records import McpTool, schema_hash
from toolproxy.scripted import Reply, Script, ScriptedCall
from toolproxy.store.segments import SegmentWriter

from .conftest import rows, wait_rows

ARGS_CHUNK = 7
JUDGE_MODEL = "control-judge"
KEY_ENV = "CONTROL_JUDGE_KEY"
JUDGE_KEY = "sk-control-judge-4b9e17"


def is_cut(item: CorpusItem) -> bool:
    """Play the stream cut after the arguments: truncation the proxy sees happen."""
    return not item.complete or (item.label == "truncation" and item.finish_reason is None)


def is_streamed(index: int, item: CorpusItem) -> bool:
    return is_cut(item) or index % 2 == 1


def reply_for(item: CorpusItem) -> Reply:
    calls = [ScriptedCall(name=name, arguments=raw) for name, raw in item.calls]
    reply = Reply(
        text=item.text,
        tool_calls=calls,
        finish_reason=item.finish_reason,
        args_chunk_size=ARGS_CHUNK,
        text_chunk_size=ARGS_CHUNK,
    )
    if not is_cut(item):
        return reply
    # events: the role, the text's pieces, each call's header, then its argument pieces
    text_events = math.ceil(len(item.text or "") / ARGS_CHUNK)
    arg_events = sum(math.ceil(len(raw) / ARGS_CHUNK) for _, raw in item.calls)
    return reply.model_copy(update={"cut_after_events": 1 + text_events + len(calls) + arg_events})


def send(client: openai.OpenAI, index: int, item: CorpusItem) -> None:
    tools = [{"type": "function", "function": dict(t)} for t in item.offered]
    args: dict[str, Any] = {
        "model": item.id,  # picks the item's reply (an x-scripted-key header value would
        # be scrubbed from the capture as a secret: its name contains "key")
        "messages": [{"role": "user", "content": f"control item {item.id}"}],
        "extra_headers": {"x-toolproxy-session": f"control-{item.id}"},
    }
    if tools:
        args["tools"] = tools
    if item.response_format:
        args["response_format"] = item.response_format
    try:
        if is_streamed(index, item):
            for _ in client.chat.completions.create(stream=True, **args):
                pass
        else:
            client.chat.completions.create(**args)
    except openai.APIError:
        assert is_cut(item), f"{item.id}: only cut streams may fail on the client"


def judge_verdicts(items: list[CorpusItem]) -> list[tuple[str, Any, bool, str]]:
    """(criterion, value, verdict, reason) of each judge call, in grading order."""
    seen: list[tuple[str, Any, bool, str]] = []
    for item in items:
        for expected, (_, raw) in zip(item.case.calls, item.calls, strict=False):
            try:
                emitted = json.loads(raw)
            except ValueError:
                continue  # unparseable arguments never reach the judge
            if not isinstance(emitted, dict):
                continue
            for name, matcher in expected.args.items():
                if matcher.kind == "judge" and name in emitted:
                    criterion = matcher.criterion or ""
                    if (criterion, emitted[name]) not in [(c, v) for c, v, _, _ in seen]:
                        seen.append(
                            (criterion, emitted[name], *keyword_judge(criterion, emitted[name]))
                        )
    return seen


def groups(items: tuple[CorpusItem, ...]) -> list[tuple[tuple[Any, ...], bool, list[CorpusItem]]]:
    """Items by (server_tools, use_judge), the groups without MCP schemas first."""
    by: dict[tuple[str, bool], tuple[tuple[Any, ...], list[CorpusItem]]] = {}
    for item in items:
        key = (json.dumps(item.server_tools, sort_keys=True), item.use_judge)
        by.setdefault(key, (item.server_tools, []))[1].append(item)
    ordered = sorted(by.items(), key=lambda kv: bool(kv[1][0]))
    return [(tools, judge, members) for (_, judge), (tools, members) in ordered]


def pull(capture, server_tools: tuple[Any, ...], at: datetime) -> None:
    """Record an `mcp tools` pull of these real schemas, as `toolproxy mcp pull` would."""
    pull_id = f"control-{at:%H%M%S%f}"
    tools = [
        McpTool(
            pull_id=pull_id,
            pulled_at=at,
            server=server,
            transport="stdio",
            name=name,
            input_schema=schema,
            schema_hash=schema_hash(schema),
            definition_hash=schema_hash(schema),
        ).model_dump(mode="json")
        for server, name, schema in server_tools
    ]
    SegmentWriter(capture, f"pull-{pull_id}", sync=False).write({"mcp_tools": tools})
    latest = rows(capture, "SELECT server, name FROM mcp_tools_latest ORDER BY 1, 2")
    assert latest == sorted((s, n) for s, n, _ in server_tools), "groups' servers overlap"


@pytest.mark.e2e
def test_control_corpus_through_the_proxy_is_graded_as_labeled(
    upstream, proxy, capture, tmp_path, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, JUDGE_KEY)
    judged = judge_verdicts([i for i in ITEMS if i.use_judge])
    verdicts = [Reply(text=json.dumps({"verdict": v, "reason": r})) for _, _, v, r in judged]
    replies = {i.id: [reply_for(i)] for i in ITEMS} | {JUDGE_MODEL: verdicts}
    upstream.set_script(Script(replies=replies))

    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="sk-control", max_retries=0)
    for index, item in enumerate(ITEMS):
        send(client, index, item)
    recorded = wait_rows(capture, "SELECT session_id, exchange_id FROM exchanges", len(ITEMS))
    exchange_of = {session.removeprefix("control-"): eid for session, eid in recorded}
    assert set(exchange_of) == {i.id for i in ITEMS}
    # the proxy recorded every call's text exactly as the scripted model emitted it
    emitted = {
        (eid, index): text
        for eid, index, text in rows(
            capture, "SELECT exchange_id, index, arguments_raw FROM tool_calls"
        )
    }
    for item in ITEMS:
        got = [emitted.get((exchange_of[item.id], i)) for i in range(len(item.calls))]
        assert got == [raw for _, raw in item.calls], item.id
    cut = {
        sid.removeprefix("control-")
        for (sid,) in rows(
            capture, "SELECT session_id FROM exchanges WHERE parse_status = 'partial'"
        )
    }
    assert cut == {i.id for i in ITEMS if is_cut(i)}

    at = datetime.now(UTC)
    for n, (server_tools, use_judge, items) in enumerate(groups(ITEMS)):
        if server_tools:
            at += timedelta(seconds=1)
            pull(capture, server_tools, at)
        path = tmp_path / f"group-{n}.yaml"
        dump_cases(
            [i.case.model_copy(update={"exchange_id": exchange_of[i.id]}) for i in items], path
        )
        judge = (
            [
                "--judge-url",
                f"{upstream.url}/v1",
                "--judge-model",
                JUDGE_MODEL,
                "--judge-key-env",
                KEY_ENV,
            ]
            if use_judge
            else []
        )
        argv = ["grade", str(path), "--capture", str(capture), "--run", f"control-{n}", *judge]
        assert main(argv) == 0

    graded = {
        case_id: (passed, label, not_graded, json.loads(calls), leaked)
        for case_id, passed, label, not_graded, calls, *leaked in rows(
            capture,
            "SELECT case_id, passed, label, not_graded, calls, leaked_format, leaked_label "
            "FROM grades",
        )
    }
    assert set(graded) == {i.id for i in ITEMS}
    wrong = {}
    for item in ITEMS:
        passed, label, not_graded, calls, leaked = graded[item.id]
        expected = (item.label, item.label is None and not item.not_graded, item.not_graded)
        buckets = tuple({a["name"]: a["bucket"] for a in c["args"]} for c in calls)
        source = calls[0]["schema_source"] if item.schema_source else None
        if (label, passed, not_graded, buckets, source, tuple(leaked)) != (
            *expected,
            item.buckets,
            item.schema_source,
            item.leaked or (None, None),
        ):
            wrong[item.id] = {
                "label": label,
                "leaked": leaked,
                "buckets": buckets,
                "source": source,
                "errors": [c["errors"] for c in calls],
            }
    assert wrong == {}

    # the judge was asked exactly once per distinct (criterion, value), with the key
    asked = [r for r in upstream.requests if r.body.get("model") == JUDGE_MODEL]
    assert len(asked) == len(judged) > 0
    assert all(r.headers["authorization"] == f"Bearer {JUDGE_KEY}" for r in asked)
    files = [p for p in capture.rglob("*") if p.is_file()]
    assert all(JUDGE_KEY.encode() not in p.read_bytes() for p in files)
