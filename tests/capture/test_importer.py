"""toolproxy.capture.importer: flow files and HAR files into a capture, as live capture.

The flows here are mitmproxy's own (its test helper `tflow` and its `FlowWriter`); the
end-to-end comparison with a live capture is in tests/e2e/test_import.py.
"""

from __future__ import annotations

import base64
import json

import pytest
from mitmproxy import http
from mitmproxy.io import FlowWriter
from mitmproxy.test import tflow, tutils

from tests.capture.test_addon import CHAT_REQUEST
from tests.capture.test_addon import CHAT_RESPONSE as CHAT_REPLY
from toolproxy import store
from toolproxy.capture.importer import (
    FLOWS,
    HAR,
    flow_exchange,
    import_traffic,
    read_flow_file,
    read_har,
    traffic_kind,
)

SECRET = "sk-live-abcdef0123456789"


def chat_flow(started: float = 1_700_000_000.0, key: str = SECRET) -> http.HTTPFlow:
    request = tutils.treq(
        method=b"POST",
        scheme=b"https",
        host="api.openai.com",
        port=443,
        path=b"/v1/chat/completions?api-key=" + key.encode(),
        headers=http.Headers(
            content_type="application/json", authorization=f"Bearer {key}", host="api.openai.com"
        ),
        content=json.dumps(CHAT_REQUEST).encode(),
        timestamp_start=started,
        timestamp_end=started + 0.01,
    )
    response = tutils.tresp(
        headers=http.Headers(content_type="application/json"),
        content=json.dumps(CHAT_REPLY).encode(),
        timestamp_start=started + 0.4,
        timestamp_end=started + 0.5,
    )
    return tflow.tflow(req=request, resp=response)


def write_flows(path, flows):
    with path.open("wb") as f:
        writer = FlowWriter(f)
        for flow in flows:
            writer.add(flow)
    return path


def har_entry(started: str = "2026-11-01T10:00:00.000Z", key: str = SECRET) -> dict:
    return {
        "startedDateTime": started,
        "time": 500,
        "request": {
            "method": "POST",
            "url": f"https://api.openai.com/v1/chat/completions?key={key}",
            "httpVersion": "HTTP/1.1",
            "headers": [
                {"name": "Authorization", "value": f"Bearer {key}"},
                {"name": "Content-Type", "value": "application/json"},
            ],
            "postData": {"mimeType": "application/json", "text": json.dumps(CHAT_REQUEST)},
        },
        "response": {
            "status": 200,
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": "Content-Type", "value": "application/json"}],
            "content": {
                "mimeType": "application/json",
                "encoding": "base64",
                "text": base64.b64encode(json.dumps(CHAT_REPLY).encode()).decode(),
            },
        },
    }


def write_har(path, entries):
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))
    return path


def test_kind_by_content(tmp_path):
    assert traffic_kind(write_flows(tmp_path / "a.bin", [chat_flow()])) == FLOWS
    assert traffic_kind(write_har(tmp_path / "a.json", [])) == HAR
    (tmp_path / "bom.har").write_bytes(b"\xef\xbb\xbf  {}")  # Fiddler writes a BOM
    assert traffic_kind(tmp_path / "bom.har") == HAR
    (tmp_path / "text.txt").write_text("hello")
    with pytest.raises(ValueError, match="neither a mitmproxy flow file"):
        traffic_kind(tmp_path / "text.txt")


def test_flow_exchange_keeps_the_flow_as_recorded():
    flow = chat_flow()
    raw = flow_exchange(flow)
    assert raw.exchange_id == flow.id
    assert raw.method == "POST" and raw.host == "api.openai.com" and raw.status_code == 200
    assert json.loads(raw.response_body) == CHAT_REPLY
    assert raw.response_complete and not raw.truncated
    assert raw.first_byte is None and raw.arrivals == []  # a flow file dates no chunk
    assert raw.ended_at == pytest.approx(1_700_000_000.5)


def test_flow_exchange_caps_bodies():
    raw = flow_exchange(chat_flow(), limit=100)
    assert len(raw.response_body) == 100 and raw.truncated


def test_import_flows_records_calls_without_secrets(tmp_path):
    capture = tmp_path / "cap"
    path = write_flows(tmp_path / "flows", [chat_flow(), chat_flow(started=1_700_000_060.0)])
    done = import_traffic([path], capture)
    assert (done.exchanges, done.already, done.problems) == (2, 0, [])
    calls = store.query(capture, "SELECT name, arguments_raw FROM tool_calls")[1]
    assert calls == [("get_weather", '{"city":"Paris"}')] * 2
    ex = store.query(
        capture,
        "SELECT wire_format, parse_status, input_tokens, ttfb_ms, latency_ms FROM exchanges",
    )  # time to first byte: to the response's headers, the first byte a flow file dates
    assert ex[1] == [("openai_chat", "ok", 10, pytest.approx(390.0), pytest.approx(500.0))] * 2
    runs = store.query(capture, "SELECT DISTINCT mode FROM proxy_runs")[1]
    assert runs == [("import",)]
    for file in capture.rglob("*"):
        if file.is_file():
            assert SECRET.encode() not in file.read_bytes(), file


def test_import_twice_adds_nothing(tmp_path):
    capture = tmp_path / "cap"
    flows = write_flows(tmp_path / "flows", [chat_flow()])
    har = write_har(tmp_path / "t.har", [har_entry()])
    assert import_traffic([flows, har], capture).exchanges == 2
    again = import_traffic([flows, har], capture)
    assert (again.exchanges, again.already) == (0, 2)
    assert store.query(capture, "SELECT count(*) FROM exchanges")[1] == [(2,)]


def test_har_entries_bad_ones_named_rest_imported(tmp_path):
    broken = har_entry()
    del broken["response"]
    path = write_har(tmp_path / "t.har", [har_entry(), broken, "nonsense"])
    items = list(read_har(path))
    assert isinstance(items[0], http.HTTPFlow)
    assert items[1] == (
        "entry 2 (POST https://api.openai.com/v1/chat/completions): "
        "not a complete HAR entry (missing 'response')"
    )
    assert items[2].startswith("entry 3: not a complete HAR entry")
    done = import_traffic([path], tmp_path / "cap")
    assert done.exchanges == 1
    assert [p.split(": ", 1)[1] for p in done.problems] == items[1:]


def timed(entry: dict, **timings: float) -> dict:
    spent = sum(v for k, v in timings.items() if v > 0 and k != "ssl")  # ssl is in connect
    return {**entry, "time": spent, "timings": timings}


@pytest.mark.parametrize(
    ("timings", "ttfb", "latency"),
    [
        # Chrome's shape: -1 where a phase does not apply; ssl is part of connect
        ({"blocked": 2, "dns": -1, "connect": 30, "ssl": 20, "send": 1, "wait": 400,
          "receive": 67}, 400.0, 500.0),
        ({"send": 0, "wait": 10, "receive": 2}, 10.0, 12.0),
    ],
)  # fmt: skip
def test_har_timings_give_the_exchange_its_times(tmp_path, timings, ttfb, latency):
    # mitmproxy's HAR reader puts the whole entry's time before the request's end and the
    # response's start at the entry's start: a time to first byte of minus the total
    capture = tmp_path / "cap"
    path = write_har(tmp_path / "t.har", [timed(har_entry(), **timings)])
    assert import_traffic([path], capture).exchanges == 1
    _, rows = store.query(capture, "SELECT ttfb_ms, latency_ms FROM exchanges")
    assert rows == [(pytest.approx(ttfb), pytest.approx(latency))]


def test_a_har_mitmproxy_wrote_imports_with_the_flows_own_times(tmp_path):
    # mitmproxy's own HAR export (savehar) of a flow, imported: the time to first byte
    # and the latency the flow had (0.39 s after the request ended; 0.5 s in all)
    from mitmproxy.addons.savehar import SaveHar

    flow = chat_flow()
    entry = SaveHar().flow_entry(flow, {flow.server_conn})  # a kept-alive connection
    path = write_har(tmp_path / "t.har", [entry])
    assert import_traffic([path], tmp_path / "cap").exchanges == 1
    _, rows = store.query(tmp_path / "cap", "SELECT ttfb_ms, latency_ms FROM exchanges")
    assert rows == [(pytest.approx(390.0), pytest.approx(500.0))]


def test_a_har_entry_without_timings_has_no_time_to_first_byte(tmp_path):
    capture = tmp_path / "cap"
    assert import_traffic([write_har(tmp_path / "t.har", [har_entry()])], capture).exchanges
    _, rows = store.query(capture, "SELECT ttfb_ms, latency_ms FROM exchanges")
    assert rows == [(None, pytest.approx(500.0))]


def test_not_a_har_file(tmp_path):
    path = tmp_path / "x.har"
    path.write_text('{"log": {}}')
    assert list(read_har(path)) == ["not a HAR file (missing 'entries')"]
    path.write_text("{nope")
    assert list(read_har(path))[0].startswith("not a HAR file (")


def test_damaged_flow_file_keeps_what_came_before(tmp_path):
    path = write_flows(tmp_path / "flows", [chat_flow(), chat_flow(started=1_700_000_060.0)])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # the second flow cut short (a killed mitmdump)
    items = list(read_flow_file(path))
    assert isinstance(items[0], http.HTTPFlow)
    assert (
        items[1] == f"flow 2: damaged at byte {_second(data)} (cut short); the rest is unreadable"
    )
    done = import_traffic([path], tmp_path / "cap")
    assert done.exchanges == 1 and len(done.problems) == 1


def _second(data: bytes) -> int:
    """Where the second flow of a flow file starts (a tnetstring: length, ':', payload, type)."""
    length, _ = data.split(b":", 1)
    return len(length) + 1 + int(length) + 1


def test_a_framed_non_flow_is_skipped_alone(tmp_path):
    from mitmproxy.io import tnetstring

    path = tmp_path / "flows"
    with path.open("wb") as f:
        tnetstring.dump([1, 2], f)
        FlowWriter(f).add(chat_flow())
    items = list(read_flow_file(path))
    assert items[0] == "flow 1: not a readable flow (not a flow but a list)"
    assert isinstance(items[1], http.HTTPFlow)


def test_non_http_flows_are_counted_not_recorded(tmp_path):
    path = write_flows(tmp_path / "flows", [tflow.ttcpflow(), chat_flow()])
    done = import_traffic([path], tmp_path / "cap")
    assert (done.exchanges, done.skipped, done.problems) == (1, 1, [])


def test_streamed_flow_without_body_is_named(tmp_path):
    flow = chat_flow()
    flow.response.raw_content = None  # mitmproxy streamed it: the body was never kept
    path = write_flows(tmp_path / "flows", [flow])
    done = import_traffic([path], tmp_path / "cap")
    assert done.exchanges == 0
    assert done.problems == [
        f"{path}: flow {flow.id} (POST https://api.openai.com/v1/chat/completions): "
        "its response body was not saved (streamed through mitmproxy); skipped"
    ]  # the query, which carries the key here, is left out of the message


def test_unreadable_file_is_a_problem_not_a_crash(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    good = write_flows(tmp_path / "flows", [chat_flow()])
    done = import_traffic([text, good], tmp_path / "cap")
    assert done.exchanges == 1
    assert done.problems == [f"{text}: neither a mitmproxy flow file (mitmdump -w) nor a HAR file"]


def test_flows_are_stitched_in_start_order(tmp_path):
    """Two turns of one conversation in two files, the later one first: one session."""
    first = chat_flow(started=1_700_000_000.0)
    second = chat_flow(started=1_700_000_010.0)
    body = dict(CHAT_REQUEST)
    body["messages"] = [
        *CHAT_REQUEST["messages"],
        CHAT_REPLY["choices"][0]["message"],
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    second.request.content = json.dumps(body).encode()
    a = write_flows(tmp_path / "later", [second])
    b = write_flows(tmp_path / "earlier", [first])
    import_traffic([a, b], tmp_path / "cap")
    sessions = store.query(
        tmp_path / "cap",
        "SELECT session_source FROM exchanges ORDER BY started_at",
    )[1]
    assert sessions == [("new",), ("continued",)]
    assert store.query(tmp_path / "cap", "SELECT count(DISTINCT session_id) FROM exchanges")[1] == [
        (1,)
    ]
