"""sink: replay turns and cells land in a real capture, shaped like captured traffic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolproxy import store
from toolproxy.grade.observe import load_observations
from toolproxy.records import ToolCall
from toolproxy.replay.model import Candidate, CellResult, ReplayItem, Step, TurnRecord
from toolproxy.replay.sink import StoreSink, session_id, turn_rows, writer_id

KEY = "sk-test-SECRETKEY-0123456789abcdef"
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
CAND = Candidate(name="cand-a", base_url="http://127.0.0.1:9999/v1", model="model-a")
STEP0 = Step(
    exchange_id="rec-0",
    messages=[{"role": "user", "content": "weather in Paris?"}],
    tools=[TOOL],
    params={"tool_choice": "auto", "temperature": 0.2},
    stream=True,
    recorded_calls=[ToolCall(call_id="c1", name="get_weather", arguments_raw='{"city":"Paris"}')],
)
ITEM = ReplayItem(item_id="sess-1", kind="session", steps=[STEP0])


def rows(capture: Path, sql: str, params=None) -> list[dict]:
    names, found = store.query(capture, sql, params)
    return [dict(zip(names, r, strict=True)) for r in found]


def turn(eid: str, **extra) -> TurnRecord:
    base = dict(
        step=0,
        exchange_id=eid,
        calls=[ToolCall(call_id="x1", name="get_weather", arguments_raw='{"city":"Paris"}')],
        finish_reason="tool_calls",
        ttft_ms=12.5,
        tps=40.0,
        input_tokens=30,
        output_tokens=8,
    )
    return TurnRecord(**(base | extra))


def cell(eids: list[str], repeat: int = 0, **extra) -> CellResult:
    base = dict(
        run="r1",
        candidate="cand-a",
        item_id="sess-1",
        repeat=repeat,
        finished_at="2024-05-01T00:00:00+00:00",
        status="completed",
        steps_done=1,
        steps_total=1,
        first_exchange_id=eids[0],
        exchange_ids=eids,
    )
    return CellResult(**(base | extra))


@pytest.fixture
def capture(tmp_path):
    return store.init_capture(tmp_path / "cap")


def test_turn_becomes_rows_like_captured_traffic(capture):
    with StoreSink(capture, "r1", writer_id("r1"), candidates=[CAND], items=[ITEM]) as sink:
        msgs = [*STEP0.messages]
        sink.write_turn("r1", "cand-a", ITEM, 0, 0, STEP0, turn("e1"), msgs)
        sink.write_cell(cell(["e1"], turns=[turn("e1")]))
    [ex] = rows(capture, "SELECT * FROM exchanges")
    assert ex["proxy_id"] == "replay:r1"
    assert (
        ex["session_id"] == session_id("r1", "cand-a", "sess-1", 0) == "replay:r1:cand-a:sess-1:0"
    )
    assert (ex["session_source"], ex["wire_format"], ex["parse_status"]) == (
        "new",
        "openai_chat",
        "ok",
    )
    assert (ex["model_requested"], ex["status_code"], ex["streamed"]) == ("model-a", 200, True)
    assert (ex["host"], ex["port"], ex["path"]) == ("127.0.0.1", 9999, "/v1/chat/completions")
    assert (ex["ttfb_ms"], ex["decode_tps"], ex["input_tokens"], ex["total_tokens"]) == (
        12.5,
        40.0,
        30,
        38,
    )
    params = json.loads(ex["request_params"])
    assert params["tool_choice"] == "auto" and params["temperature"] == 0.2
    assert json.loads(ex["messages"]) == STEP0.messages
    [offered] = rows(capture, "SELECT * FROM tools_offered")
    assert offered["name"] == "get_weather" and offered["exchange_id"] == "e1"
    [call] = rows(capture, "SELECT * FROM tool_calls")
    assert (call["name"], call["arguments_raw"], call["parse_error"]) == (
        "get_weather",
        '{"city":"Paris"}',
        None,
    )
    assert json.loads(call["arguments"]) == {"city": "Paris"}
    [done] = rows(capture, "SELECT * FROM replay_cells")
    assert (done["run"], done["status"], done["first_exchange_id"]) == ("r1", "completed", "e1")
    [diff] = rows(capture, "SELECT * FROM replay_diffs")
    assert diff["same_tool"] and diff["same_arguments"] and diff["label"] is None
    # the grader reads it like any recorded exchange
    obs = load_observations(capture, ["e1"])["e1"]
    assert obs.calls[0].arguments == {"city": "Paris"} and obs.offered[0]["name"] == "get_weather"


def test_fed_back_results_and_unparsed_arguments(capture):
    sent = [
        *STEP0.messages,
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "x1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "x1", "content": "error: arguments are not JSON"},
    ]
    bad = turn(
        "e2", attempt=1, calls=[ToolCall(call_id="x2", name="get_weather", arguments_raw="{")]
    )
    with StoreSink(capture, "r1", writer_id("r1"), candidates=[CAND]) as sink:
        sink.write_turn("r1", CAND, ITEM, 1, 0, STEP0, bad, sent)
        sink.write_cell(cell(["e2"], repeat=1, turns=[bad]))
    [result] = rows(capture, "SELECT * FROM tool_results")
    assert (result["call_id"], result["message_index"]) == ("x1", 2)
    assert result["content"].startswith("error")
    [call] = rows(capture, "SELECT * FROM tool_calls")
    assert call["arguments"] is None and call["parse_error"]
    [diff] = rows(capture, "SELECT * FROM replay_diffs")
    assert diff["label"] == "truncation" and diff["repeat"] == 1


@pytest.mark.parametrize(
    ("extra", "status", "parse_status"),
    [
        ({"error_kind": "rate_limited", "error": "HTTP 429: slow down", "calls": []}, 429, "ok"),
        ({"error_kind": "rate_limited", "error": "slow down", "calls": []}, 429, "ok"),
        ({"error_kind": "server_error", "error": "HTTP 503: busy", "calls": []}, 503, "ok"),
        ({"error_kind": "client_error", "error": "HTTP 400: bad", "calls": []}, 400, "ok"),
        ({"error_kind": "timeout", "error": "no answer", "calls": []}, None, "error"),
        ({"error_kind": "connection", "error": "refused", "calls": []}, None, "error"),
        ({"error_kind": "bad_response", "error": "not JSON", "calls": []}, 200, "error"),
        ({"error_kind": "cut_stream", "error": "stream ended early"}, 200, "partial"),
        ({"error_kind": "cut_stream", "error": "cut", "calls": []}, 200, "error"),
    ],
)
def test_failures(capture, extra, status, parse_status):
    failed = turn("e3", **extra)
    with StoreSink(capture, "r1", writer_id("r1"), candidates=[CAND]) as sink:
        sink.write_turn("r1", "cand-a", ITEM, 0, 0, STEP0, failed, STEP0.messages)
        sink.write_cell(cell(["e3"], turns=[failed], status="failed"))
    [ex] = rows(
        capture, "SELECT status_code, parse_status, error_kind, error_message FROM exchanges"
    )
    assert (ex["status_code"], ex["parse_status"]) == (status, parse_status)
    assert (ex["error_kind"], ex["error_message"]) == (extra["error_kind"], extra["error"])


def test_unfinished_cells_are_not_written(capture):
    with StoreSink(capture, "r1", writer_id("r1"), candidates=[CAND]) as sink:
        sink.write_turn("r1", "cand-a", ITEM, 0, 0, STEP0, turn("done"), STEP0.messages)
        sink.write_turn("r1", "cand-a", ITEM, 1, 0, STEP0, turn("half"), STEP0.messages)
        sink.write_cell(cell(["done"], turns=[turn("done")]))
    assert [r["exchange_id"] for r in rows(capture, "SELECT exchange_id FROM exchanges")] == [
        "done"
    ]
    assert len(rows(capture, "SELECT * FROM replay_cells")) == 1


def test_cells_written_together_under_load(capture):
    sink = StoreSink(capture, "r1", writer_id("r1"), candidates=[CAND], flush_interval_s=0.2)
    for i in range(20):
        t = turn(f"e{i}")
        sink.write_turn("r1", "cand-a", ITEM, i, 0, STEP0, t, STEP0.messages)
        sink.write_cell(cell([f"e{i}"], repeat=i, turns=[t]))
    sink.close()
    assert sink.cells_written == 20
    files = list((capture / "segments" / writer_id("r1")).glob("replay_cells.*.jsonl"))
    assert 1 <= len(files) < 20
    got = rows(capture, "SELECT repeat FROM replay_cells ORDER BY repeat")
    assert [r["repeat"] for r in got] == list(range(20))


def test_key_never_reaches_disk(capture):
    echoed = turn("e4", text=f"your key is {KEY}", error_kind=None)
    sent = [{"role": "user", "content": f"Bearer {KEY}"}]
    sink = StoreSink(capture, "r1", writer_id("r1"), candidates=[CAND], secrets=[KEY, ""])
    sink.write_turn("r1", "cand-a", ITEM, 0, 0, STEP0, echoed, sent)
    sink.write_cell(cell(["e4"], turns=[echoed], error=KEY))
    sink.close()
    for path in capture.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    [ex] = rows(capture, "SELECT assistant_text FROM exchanges")
    assert "[REDACTED]" in ex["assistant_text"]


def test_write_error_surfaces(tmp_path):
    sink = StoreSink(tmp_path / "cap", "r1", writer_id("r1"), candidates=[CAND])
    sink._writer.dir.rename(tmp_path / "gone")  # the writer's folder vanishes
    sink.write_turn("r1", "cand-a", ITEM, 0, 0, STEP0, turn("e5"), STEP0.messages)
    sink.write_cell(cell(["e5"], turns=[turn("e5")]))
    with pytest.raises(Exception, match=r"writing replay results failed|No such file"):
        sink.close()
        sink.write_cell(cell(["e5"], turns=[turn("e5")]))


def test_unknown_candidate_name_and_row_helpers():
    rows_ = turn_rows(
        "r", Candidate(name="n", base_url="https://h/v1", model="m"), ITEM, 0, STEP0, turn("e"), []
    )
    [ex] = rows_["exchanges"]
    assert (ex["scheme"], ex["port"]) == ("https", 443)
    assert writer_id("a run/with:odd chars") == "replay-a_run_with_odd_chars"


class Reply:
    """What llm.CandidateReply carries beyond a TurnRecord (duck-typed: the sink reads
    attributes only)."""

    request = {
        "model": "model-a",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [TOOL],
        "tool_choice": "required",
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    status = 200
    model = "model-a-2024"
    latency_ms = 250.0
    stream = True


def test_reply_gives_the_body_sent_status_and_latency(capture):
    with StoreSink(capture, "r1", writer_id("r1"), candidates=[CAND]) as sink:
        sink.write_turn("r1", "cand-a", ITEM, 0, 0, STEP0, turn("e6"), [], reply=Reply())
        sink.write_cell(cell(["e6"], turns=[turn("e6")]))
    [ex] = rows(capture, "SELECT * FROM exchanges")
    assert (ex["model_returned"], ex["latency_ms"], ex["streamed"]) == ("model-a-2024", 250.0, True)
    assert json.loads(ex["request_params"])["tool_choice"] == "required"
    assert json.loads(ex["messages"]) == [{"role": "user", "content": "hi"}]
    assert (ex["ended_at"] - ex["started_at"]).total_seconds() == pytest.approx(0.25)


def test_replayed_exchanges_keep_their_bodies(capture):
    from openai.types.chat import ChatCompletionChunk

    from toolproxy.replay.reply import CandidateReply

    chunk = ChatCompletionChunk.model_validate(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}],
        }
    )
    streamed = CandidateReply(text="hi", finish_reason="stop", stream=True, chunks=[chunk])
    broken = CandidateReply(error_kind="bad_response", error="x", body=b"\xff\xfe not utf-8")
    with StoreSink(capture, "r1", writer_id("r1"), candidates=[CAND]) as sink:
        sink.write_turn("r1", "cand-a", ITEM, 0, 0, STEP0, turn("e7"), [], reply=streamed)
        sink.write_turn("r1", "cand-a", ITEM, 0, 1, STEP0, turn("e8"), [], reply=broken)
        sink.write_cell(cell(["e7", "e8"], turns=[turn("e7"), turn("e8")]))
    got = {r["exchange_id"]: r for r in rows(capture, "SELECT * FROM exchanges")}
    sse = got["e7"]["response_body"]
    assert sse.startswith("data: {") and sse.endswith("data: [DONE]\n\n")
    assert json.loads(sse.split("\n\n")[0][len("data: ") :])["choices"][0]["delta"] == {
        "content": "hi"
    }
    assert json.loads(got["e7"]["request_body"])["stream"] is True
    assert got["e8"]["body_encoding"] == "base64"
    assert got["e8"]["response_bytes"] == len(b"\xff\xfe not utf-8")
