import time

import toolproxy
from toolproxy import store
from toolproxy.capture.recorder import Recorder
from toolproxy.capture.redact import Redactor
from toolproxy.capture.session import SessionTracker
from toolproxy.capture.tap import RawExchange


def raw(i, **kw):
    base = dict(
        exchange_id=f"ex-{i}",
        started_at=time.time(),
        method="GET",
        scheme="http",
        host="h",
        port=80,
        path="/v1/models",
        request_headers=[],
        request_body=b"",
        status_code=200,
        response_body=b"{}",
        ended_at=time.time(),
    )
    base.update(kw)
    return RawExchange(**base)


def recorder(capture, logs):
    return Recorder(
        capture,
        "rec-1",
        Redactor.build(),
        SessionTracker(),
        flush_interval=0.05,
        run_info={"mode": "reverse:http://x"},
        log=logs.append,
    )


def rows(capture, sql):
    store.init_capture(capture)
    return store.query(capture, sql)[1]


def test_records_flush_in_batches_and_run_rows(tmp_path):
    capture, logs = tmp_path / "cap", []
    rec = recorder(capture, logs)
    rec.start()
    for i in range(30):
        rec.submit(raw(i))
    rec.close()
    assert rows(capture, "SELECT count(*) FROM exchanges") == [(30,)]
    runs = rows(capture, 'SELECT event, exchanges, mode FROM proxy_runs ORDER BY "at"')
    assert runs == [("start", 0, "reverse:http://x"), ("stop", 30, "reverse:http://x")]
    assert rec.submitted == 30 and logs == []
    # which toolproxy recorded it, for a bug report on a capture (`toolproxy --version`)
    versions = rows(capture, "SELECT DISTINCT toolproxy_version FROM proxy_runs")
    assert versions == [(toolproxy.__version__,)]


def test_an_exchange_that_breaks_processing_is_still_recorded(tmp_path):
    capture, logs = tmp_path / "cap", []
    rec = recorder(capture, logs)
    rec.start()
    rec.submit(raw(1, request_headers=None))  # a bug-shaped input: build_rows raises
    rec.submit(raw(2, request_headers=None))
    rec.close()
    got = rows(capture, "SELECT parse_status, parse_error LIKE 'internal error%' FROM exchanges")
    assert got == [("error", True), ("error", True)]
    assert rec.internal_errors == 2
    assert len([line for line in logs if "could not process" in line]) == 1  # logged once


def test_parse_failures_are_counted_and_logged_once(tmp_path):
    capture, logs = tmp_path / "cap", []
    rec = recorder(capture, logs)
    rec.start()
    for i in range(3):
        rec.submit(raw(i, method="POST", path="/v1/chat/completions", request_body=b"{bad"))
    rec.close()
    assert rec.parse_failures == 3 and len(logs) == 1 and "kept raw" in logs[0]


def test_write_failure_keeps_rows_and_retries(tmp_path):
    capture, logs = tmp_path / "cap", []
    capture.mkdir()
    blocker = capture / "segments"
    blocker.write_text("not a directory")  # the writer cannot create its segment dir
    rec = recorder(capture, logs)
    rec.start()
    rec.submit(raw(1))
    deadline = time.monotonic() + 20
    while rec.internal_errors < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert rec.internal_errors >= 1 and any("will retry" in line for line in logs)
    blocker.unlink()
    rec.submit(raw(2))
    rec.close()
    assert rows(capture, "SELECT exchange_id FROM exchanges ORDER BY exchange_id") == [
        ("ex-1",),
        ("ex-2",),
    ]


def test_close_twice_and_count_error(tmp_path):
    capture, logs = tmp_path / "cap", []
    rec = recorder(capture, logs)
    rec.start()
    rec.count_error("hook:x", "hook x failed")
    rec.count_error("hook:x", "hook x failed again")
    rec.close()
    rec.close()
    assert rec.internal_errors == 2 and len(logs) == 1


def test_periodic_stats_rows_when_counters_move(tmp_path, monkeypatch):
    import toolproxy.capture.recorder as recorder_module

    monkeypatch.setattr(recorder_module, "STATS_INTERVAL_S", 0.1)
    capture, logs = tmp_path / "cap", []
    rec = recorder(capture, logs)
    rec.start()
    rec.submit(raw(1))
    deadline = time.monotonic() + 20
    while rec.exchanges < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    # past the (patched) stats interval, a flush writes a stats row: wait for it to land
    store.init_capture(capture)
    query = "SELECT count(*) FROM proxy_runs WHERE event = 'stats'"
    while store.query(capture, query)[1] == [(0,)] and time.monotonic() < deadline:
        time.sleep(0.05)
    rec.submit(raw(2))
    rec.close()
    stats = rows(capture, "SELECT exchanges FROM proxy_runs WHERE event = 'stats' ORDER BY 1")
    assert stats and stats[0][0] >= 1


def test_linker_state_carries_model_calls_to_later_mcp_exchanges(tmp_path):
    import json

    capture, logs = tmp_path / "cap", []
    rec = recorder(capture, logs)
    call = {"id": "call_9", "type": "function"}
    call["function"] = {"name": "mcp__weather__get_weather", "arguments": '{"city":"Paris"}'}
    model_reply = {"id": "c", "choices": [{"index": 0, "message": {"tool_calls": [call]}}]}
    request = {"model": "m", "messages": [{"role": "user", "content": "weather?"}]}
    mcp_call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    mcp_call["params"] = {"name": "get_weather", "arguments": {"city": "Paris"}}
    mcp_reply = {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": False}}
    rec.start()
    rec.submit(
        raw(
            "model",
            method="POST",
            path="/v1/chat/completions",
            request_body=json.dumps(request).encode(),
            response_body=json.dumps(model_reply).encode(),
        )
    )
    rec.submit(
        raw(
            "mcp",
            method="POST",
            path="/mcp",
            request_headers=[("mcp-session-id", "abc")],
            request_body=json.dumps(mcp_call).encode(),
            response_body=json.dumps(mcp_reply).encode(),
        )
    )
    rec.close()
    formats = rows(capture, "SELECT exchange_id, wire_format FROM exchanges ORDER BY 1")
    assert formats == [("ex-mcp", "mcp"), ("ex-model", "openai_chat")]
    got = rows(
        capture,
        "SELECT c.tool_name, c.linked_exchange_id, c.linked_call_id, c.session_id = e.session_id "
        "FROM mcp_calls c JOIN exchanges e ON e.exchange_id = c.linked_exchange_id",
    )
    assert got == [("get_weather", "ex-model", "call_9", True)]
    assert rows(capture, "SELECT session_source FROM exchanges WHERE exchange_id = 'ex-mcp'") == [
        ("linked",)
    ]
    assert logs == []
