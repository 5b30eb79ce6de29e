"""toolproxy.tui.views: table cells and exchanges from the store's rows (the seeded
capture)."""

from __future__ import annotations

import json
import shlex

from toolproxy import store
from toolproxy.store.queries import exchanges
from toolproxy.tui.views import (
    calls_json,
    confusion_grid,
    curl_command,
    exchange_text,
    expected_cell,
    metrics_line,
    pretty,
    session_cells,
    table_csv,
    turn_cells,
)


def details(capture, *ids):
    with store.reading(capture) as r:
        return exchanges.details(r, list(ids))


def test_a_session_row_and_a_turn_row(seeded_capture):
    with store.reading(seeded_capture) as r:
        a = next(s for s in exchanges.sessions(r).items if s.session_id == "s-a")
    assert session_cells(a) == (
        "s-a",
        "gpt-a-2026",
        "2026-03-01 12:00:00",
        "2026-03-01 12:00:02",
        "3",
        "2",
        "0",
        "0",
        "30",
        "15",
        "",
    )
    (b1,) = details(seeded_capture, "b-1")
    assert turn_cells(b1)[2:5] == ("anthropic_messages", "upstream", "ok")
    assert turn_cells(b1)[-1] == ""


def test_the_expected_column_says_what_the_turns_case_expects():
    from toolproxy.grade.model import Case, ExpectedCall

    calls = [ExpectedCall(tool="a"), ExpectedCall(tool="b")]
    assert expected_cell(None) == ""
    assert expected_cell(Case(id="x", exchange_id="e", calls=calls)) == "a+b"
    assert expected_cell(Case(id="x", exchange_id="e", expect="no_call")) == "no call"


def test_an_exchange_shows_its_request_and_its_parse(seeded_capture):
    (c0,) = details(seeded_capture, "c-0")
    text = "\n".join(exchange_text(c0))
    assert text.startswith("POST http://h:80/v1/responses")
    assert "parse partial" in text
    assert pretty('{"a":1}') == '{\n  "a": 1\n}'
    assert pretty("not json") == "not json"


def test_calls_as_json_and_the_request_as_curl(seeded_capture, tmp_path):
    (a0,) = details(seeded_capture, "a-0")
    assert json.loads(calls_json(a0)) == [
        {"name": "get_weather", "call_id": "c1", "arguments": {"city": "Paris"}}
    ]
    words = shlex.split(curl_command(a0))
    assert words[:4] == ["curl", "-X", "POST", "http://h/v1/chat/completions"]


def test_a_curl_keeps_stored_headers_redacted_and_drops_the_ones_curl_sets():
    from datetime import UTC, datetime

    from toolproxy.store.rows import ExchangeDetail, ExchangeRow

    row = ExchangeRow(
        "x",
        "s",
        datetime(2026, 1, 1, tzinfo=UTC),
        "openai_chat",
        "m",
        False,
        200,
        None,
        "ok",
        "stop",
        1.0,
        2.0,
        1,
        1,
        0,
        "p",
    )
    request = {
        "method": "POST",
        "scheme": "https",
        "host": "api.openai.com",
        "port": 443,
        "path": "/v1/chat/completions",
        "body_encoding": "utf-8",
        "request_headers": '{"authorization": "Bearer [REDACTED]", "content-length": "9", '
        '"content-type": "application/json"}',
        "request_body": '{"a":"it\'s"}',
    }
    command = curl_command(ExchangeDetail(row, request, [], [], [], []))
    assert shlex.split(command) == [
        "curl",
        "-X",
        "POST",
        "https://api.openai.com/v1/chat/completions",
        "-H",
        "authorization: Bearer [REDACTED]",
        "-H",
        "content-type: application/json",
        "--data-raw",
        '{"a":"it\'s"}',
    ]


def test_a_table_as_csv():
    assert table_csv(("a", "b"), [("1", "x,y")]) == 'a,b\r\n1,"x,y"\r\n'


def test_the_confusion_grid_marks_the_diagonal():
    columns, rows = confusion_grid({"a": {"a": 4, "b": 1}, "(none)": {"b": 2}})
    assert columns == ["expected \\ called", "a", "b"]
    assert rows == [
        [("(none)", "bold"), ("·", "dim"), ("2", "bold red")],
        [("a", "bold"), ("4", "bold green"), ("1", "red")],
    ]
    assert confusion_grid({}) == (["expected \\ called"], [])


def test_the_metrics_line_says_n_a_for_empty_denominators():
    from toolproxy.grade.metrics import compute_run

    line = metrics_line(compute_run("r", []))
    assert line.startswith("0 cases, 0 graded · pass n/a · selection n/a")


def test_an_event_stream_as_one_line_per_event():
    from toolproxy.tui.views import sse_lines

    body = 'event: delta\ndata: {"a":1}\n\ndata: ' + "x" * 200
    lines = sse_lines(body, "utf-8", [12.5, 40.0])
    assert lines[0] == "SSE events (2, cut short):"
    assert lines[1] == '  +     12.5 ms  delta                  {"a":1}'
    assert lines[2].endswith("x" * 160 + "…") and lines[-1] == ""
    assert sse_lines(body, "utf-8", [1.0])[1].startswith("  #    1  delta")  # times don't fit
    assert sse_lines(body, "base64", None) == [] and sse_lines('{"a": 1}', "utf-8", None) == []


def test_an_aws_event_stream_as_one_line_per_message():
    import base64

    from toolproxy.tui.views import sse_lines
    from toolproxy.wire.eventstream import encode

    body = encode({":event-type": "messageStart"}, b'{"role":"assistant"}') + encode(
        {":message-type": "exception", ":exception-type": "throttlingException"},
        b'{"message":"slow down"}',
    )
    stored = base64.b64encode(body + body[:9]).decode()  # the capture keeps binary as base64
    lines = sse_lines(stored, "base64", [5.0, 9.5])
    assert lines[0] == "AWS event-stream messages (2, cut short):"
    assert lines[1] == '  +      5.0 ms  messageStart           {"role":"assistant"}'
    assert lines[2].startswith('  +      9.5 ms  throttlingException    {"message"')
    assert sse_lines(base64.b64encode(b"\x89PNG binary").decode(), "base64", None) == []
