import base64
import gzip
import json

from toolproxy.capture.link import Linker
from toolproxy.capture.redact import REDACTED, Redactor
from toolproxy.capture.rows import (
    ERROR_KINDS,
    build_rows,
    classify_error,
    decode_tps,
    fallback_rows,
    sse_times,
)
from toolproxy.capture.session import SessionTracker
from toolproxy.capture.tap import RawExchange
from toolproxy.records import ParsedResponse
from toolproxy.wire.eventstream import encode

KEY = "sk-capture-secret-123456"
REQUEST = {
    "model": "gpt-x",
    "temperature": 0.2,
    "tool_choice": "auto",
    "messages": [{"role": "user", "content": "weather?"}],
    "tools": [
        {
            "type": "function",
            "function": {"name": "get_weather", "parameters": {"type": "object"}},
        }
    ],
}
RESPONSE = {
    "id": "c1",
    "model": "gpt-x-1",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20},
}


def raw(**kw) -> RawExchange:
    base = dict(
        exchange_id="ex1",
        started_at=100.0,
        method="POST",
        scheme="https",
        host="api.example.com",
        port=443,
        path="/v1/chat/completions",
        request_headers=[("authorization", f"Bearer {KEY}"), ("content-type", "application/json")],
        request_body=json.dumps(REQUEST).encode(),
        request_size=10,
        request_end=100.1,
        status_code=200,
        response_headers=[("content-type", "application/json")],
        response_started=100.5,
        response_body=json.dumps(RESPONSE).encode(),
        response_size=20,
        first_byte=100.6,
        last_byte=100.9,
        ended_at=101.1,
    )
    base.update(kw)
    return RawExchange(**base)


def build(r, redactor=None, tracker=None, linker=None):
    return build_rows(
        r, "proxy-1", redactor or Redactor.build(), tracker or SessionTracker(), linker
    )


def test_rows_for_a_chat_exchange():
    exchange, rows = build(raw())
    ex = rows["exchanges"][0]
    assert ex["wire_format"] == "openai_chat" and ex["parse_status"] == "ok"
    assert ex["model_requested"] == "gpt-x" and ex["model_returned"] == "gpt-x-1"
    assert ex["request_params"] == {"temperature": 0.2, "tool_choice": "auto"}
    assert ex["ttfb_ms"] == 500.0 and ex["latency_ms"] == 1100.0
    assert ex["decode_tps"] == round(8 / 1.0, 3)  # not streamed: request end -> response end
    assert ex["request_headers"]["authorization"] == REDACTED
    assert ex["input_tokens"] == 12 and ex["output_tokens"] == 8
    assert ex["session_source"] == "new" and ex["conversation_key"]
    call = rows["tool_calls"][0]
    assert call["exchange_id"] == "ex1" and call["session_id"] == ex["session_id"]
    assert call["arguments"] == {"city": "Oslo"} and call["arguments_raw"] == '{"city":"Oslo"}'
    assert rows["tools_offered"][0]["name"] == "get_weather"
    assert rows["tool_results"] == []
    assert exchange.exchange_id == "ex1"


def test_keys_are_scrubbed_from_every_row_even_when_echoed():
    echoed = {"error": {"message": f"Incorrect API key provided: {KEY}"}}
    _, rows = build(
        raw(
            status_code=401,
            response_body=json.dumps(echoed).encode(),
            path=f"/v1/chat/completions?key={KEY}",
        )
    )
    assert KEY not in json.dumps(rows)
    ex = rows["exchanges"][0]
    assert ex["error_kind"] == "http_4xx" and REDACTED in ex["error_message"]


def test_gzip_response_is_decoded_before_parsing():
    body = gzip.compress(json.dumps(RESPONSE).encode())
    _, rows = build(
        raw(
            response_body=body,
            response_headers=[("content-type", "application/json"), ("content-encoding", "gzip")],
        )
    )
    assert rows["exchanges"][0]["parse_status"] == "ok"
    assert rows["tool_calls"][0]["name"] == "get_weather"


def test_binary_body_is_kept_as_base64():
    blob = bytes(range(256))
    _, rows = build(
        raw(
            method="GET",
            path="/file",
            request_body=b"",
            response_body=blob,
            response_headers=[("content-type", "application/octet-stream")],
        )
    )
    ex = rows["exchanges"][0]
    assert ex["body_encoding"] == "base64" and base64.b64decode(ex["response_body"]) == blob
    assert ex["wire_format"] == "unknown" and ex["parse_status"] == "unparsed"


def test_truncated_body_is_flagged():
    _, rows = build(raw(response_body=json.dumps(RESPONSE).encode()[:40], truncated=True))
    ex = rows["exchanges"][0]
    assert ex["truncated"] and "max_body" in ex["parse_error"]


def test_sessions_chain_across_build_calls():
    tracker = SessionTracker()
    _, first = build(raw(), tracker=tracker)
    follow = dict(REQUEST)
    follow["messages"] = REQUEST["messages"] + [
        RESPONSE["choices"][0]["message"],
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    _, second = build(
        raw(exchange_id="ex2", request_body=json.dumps(follow).encode()), tracker=tracker
    )
    assert second["exchanges"][0]["session_id"] == first["exchanges"][0]["session_id"]
    assert second["exchanges"][0]["session_source"] == "continued"
    assert second["tool_results"][0]["call_id"] == "call_1"


def test_classify_error_kinds():
    def r(**kw):
        return raw(**kw)

    assert (
        classify_error(r(error="[Errno 111] Connection refused", status_code=None), None)[0]
        == "connect_failed"
    )
    assert classify_error(r(error="Server timed out"), None)[0] == "timeout"
    assert classify_error(r(error="peer closed connection"), None)[0] == "connection_reset"
    assert classify_error(r(error="something odd"), None)[0] == "upstream_error"
    # The client gave up before the upstream said anything: the upstream timed out.
    waited = classify_error(r(error="Client disconnected.", status_code=None), None)
    assert waited[0] == "timeout" and "before the client hung up" in (waited[1] or "")
    cut = r(error="Client disconnected.", status_code=200)
    assert classify_error(cut, None)[0] == "connection_reset"
    assert classify_error(r(status_code=503), None) == ("http_5xx", "HTTP 503")
    assert classify_error(r(status_code=404), ParsedResponse(error="nope")) == ("http_4xx", "nope")
    assert classify_error(r(), ParsedResponse(complete=False))[0] == "stream_cut"
    assert classify_error(r(), ParsedResponse()) == (None, None)


def test_a_stream_the_provider_ended_with_an_error_keeps_its_message():
    """An error event in a 200 stream (Anthropic's overloaded_error, Bedrock's
    throttlingException) ends it before its terminator: the provider's words, not
    "ended before its terminator", are the message."""
    ended = ParsedResponse(complete=False, error="overloaded_error: Overloaded")
    assert classify_error(raw(status_code=200), ended) == (
        "stream_cut",
        "overloaded_error: Overloaded",
    )


def test_decode_tps_rules():
    streamed = raw(first_byte=1.0, last_byte=3.0)
    assert decode_tps(streamed, True, 10) == 5.0
    assert decode_tps(streamed, True, None) is None
    assert decode_tps(raw(first_byte=1.0, last_byte=1.0), True, 10) is None
    assert decode_tps(raw(request_end=1.0, ended_at=2.0), False, 4) == 4.0


SSE = b'data: {"a":1}\n\n: ping\n\ndata: {"a":2}\n\ndata: [DONE]\n\n'


def test_a_whole_answer_that_says_it_failed_is_the_providers_error():
    """HTTP 200 and a stream that reached its terminator, but the provider says the
    response failed (Responses' `response.failed` with its `error`): an error, not fine."""
    failed = ParsedResponse(complete=True, error="server_error: The model failed.")
    assert classify_error(raw(status_code=200), failed) == (
        "provider_error",
        "server_error: The model failed.",
    )
    assert "provider_error" in ERROR_KINDS


def test_each_event_of_a_stream_gets_the_time_its_last_byte_arrived():
    stream = raw(
        response_headers=[("content-type", "text/event-stream")],
        response_body=SSE,
        arrivals=[(0, 100.5), (10, 100.52), (30, 100.7)],  # chunks: [0,10) [10,30) [30,...)
    )
    assert sse_times(stream) == [520.0, 700.0, 700.0]  # events end at bytes 15, 38, 52
    _, rows = build(stream)
    assert rows["exchanges"][0]["sse_times"] == [520.0, 700.0, 700.0]
    assert sse_times(raw(arrivals=[(0, 100.5)])) is None  # not an event stream
    gzipped = [("content-type", "text/event-stream"), ("content-encoding", "gzip")]
    assert sse_times(raw(response_headers=gzipped, arrivals=[(0, 100.5)])) is None


def test_each_message_of_an_aws_event_stream_gets_its_arrival_too():
    first = encode({":event-type": "messageStart"}, b'{"role":"assistant"}')
    second = encode({":event-type": "messageStop"}, b'{"stopReason":"end_turn"}')
    stream = raw(
        response_headers=[("content-type", "application/vnd.amazon.eventstream")],
        response_body=first + second,
        arrivals=[(0, 100.5), (len(first), 100.75)],
    )
    assert sse_times(stream) == [500.0, 750.0]


def test_fallback_rows_keep_the_raw_exchange_without_secrets():
    rows = fallback_rows(raw(error="peer closed connection"), "p", Redactor.build(), "boom")
    ex = rows["exchanges"][0]
    assert ex["parse_status"] == "error" and "boom" in ex["parse_error"]
    assert ex["error_kind"] == "connection_reset"
    assert KEY not in json.dumps(rows)


# ---------------------------------------------------------------------------- MCP

MCP_SID = "d45a318e3c8f431cac610c3c8c03944c"
MCP_TOKEN = "tok-mcp-bearer-987654321"


def mcp_raw(i, request, response, *, session=True, content_type="application/json", **kw):
    """One MCP exchange as the proxy saw it (bearer token, Mcp-Session-Id on both sides)."""
    headers = [("authorization", f"Bearer {MCP_TOKEN}"), ("content-type", "application/json")]
    if session:
        headers.append(("mcp-session-id", MCP_SID))
    return raw(
        exchange_id=f"mcp{i}",
        started_at=200.0 + i,
        scheme="http",
        host="127.0.0.1",
        port=8000,
        path="/mcp",
        request_headers=headers,
        request_body=json.dumps(request).encode() if request is not None else b"",
        response_headers=[("content-type", content_type), ("mcp-session-id", MCP_SID)],
        response_body=response.encode(),
        **kw,
    )


INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "x"}}
INIT_OK = '{"jsonrpc":"2.0","id":0,"result":{"serverInfo":{"name":"weather","version":"1"}}}'


def weather_call(city):
    params = {"name": "get_weather", "arguments": {"city": city}}
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}


WEATHER_OK = (
    'event: message\ndata: {"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":false}}\n\n'
)


def test_mcp_rows_carry_the_exchange_columns_and_share_the_mcp_session():
    tracker, linker = SessionTracker(), Linker()
    first, init_rows = build(
        mcp_raw(0, INIT, INIT_OK, session=False), tracker=tracker, linker=linker
    )
    assert first.wire_format == "mcp" and first.parse_status == "ok"
    assert first.session_source == "new" and first.model_requested is None
    (row,) = init_rows["mcp_messages"]
    assert row["exchange_id"] == "mcp0" and row["session_id"] == first.session_id
    assert row["started_at"] == first.started_at.isoformat()
    assert row["method"] == "initialize" and row["mcp_session_id"] == MCP_SID
    assert row["result"]["serverInfo"]["name"] == "weather"
    assert init_rows["tool_calls"] == [] and init_rows["tools_offered"] == []
    call, call_rows = build(
        mcp_raw(1, weather_call("Rome"), WEATHER_OK, content_type="text/event-stream"),
        tracker=tracker,
        linker=linker,
    )
    assert (call.session_id, call.session_source) == (first.session_id, "mcp_session")
    assert call.streamed
    (row,) = call_rows["mcp_messages"]
    assert (row["tool_name"], row["is_error"], row["linked_call_id"]) == (
        "get_weather",
        False,
        None,
    )
    closed, close_rows = build(
        mcp_raw(2, None, "", method="DELETE"), tracker=tracker, linker=linker
    )
    assert (closed.wire_format, closed.session_id) == ("mcp", first.session_id)
    assert close_rows["mcp_messages"] == []


def test_a_model_call_links_to_its_mcp_execution_and_shares_its_session():
    tracker, linker = SessionTracker(), Linker()
    model, _ = build(raw(), tracker=tracker, linker=linker)  # get_weather {"city": "Oslo"}
    build(mcp_raw(0, INIT, INIT_OK, session=False), tracker=tracker, linker=linker)
    executed, rows = build(
        mcp_raw(1, weather_call("Oslo"), WEATHER_OK, content_type="text/event-stream"),
        tracker=tracker,
        linker=linker,
    )
    assert (executed.session_id, executed.session_source) == (model.session_id, "linked")
    (row,) = rows["mcp_messages"]
    assert (row["linked_exchange_id"], row["linked_call_id"]) == ("ex1", "call_1")
    assert row["session_id"] == model.session_id
    # without the recorder's linker state nothing links
    alone, rows = build(mcp_raw(3, weather_call("Oslo"), WEATHER_OK))
    assert alone.session_source == "new" and rows["mcp_messages"][0]["linked_call_id"] is None


def test_mcp_rows_are_scrubbed_of_the_bearer_token():
    echo = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": MCP_TOKEN}]}}
    request = weather_call(f"token {MCP_TOKEN}")
    _, rows = build(mcp_raw(0, request, json.dumps(echo)))
    assert MCP_TOKEN not in json.dumps(rows)
    (row,) = rows["mcp_messages"]
    assert row["arguments"] == {"city": f"token {REDACTED}"}
    assert row["result"]["content"][0]["text"] == REDACTED
    assert rows["exchanges"][0]["request_headers"]["authorization"] == REDACTED


def test_mcp_client_hanging_up_on_an_answered_stream_is_not_an_error():
    hung_up = dict(error="Client disconnected.", response_complete=False)
    answered, _ = build(
        mcp_raw(0, weather_call("Rome"), WEATHER_OK, content_type="text/event-stream", **hung_up)
    )
    assert (answered.parse_status, answered.error_kind, answered.error_message) == (
        "ok",
        None,
        None,
    )
    cut, _ = build(
        mcp_raw(1, weather_call("Rome"), "", content_type="text/event-stream", **hung_up)
    )
    assert (cut.parse_status, cut.error_kind) == ("partial", "connection_reset")
    assert cut.parse_error == "response: no response to request id 2"


def test_a_client_hanging_up_after_done_is_not_an_error():
    """The openai SDK closes at `data: [DONE]`; the upstream's end of body may come after."""
    hung_up = dict(error="Client disconnected.", response_complete=False)
    events = [
        {"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hi"}}]},
        {"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    body = b"".join(b"data: %s\n\n" % json.dumps(e).encode() for e in events)
    stream = [("content-type", "text/event-stream")]
    whole, _ = build(
        raw(response_headers=stream, response_body=body + b"data: [DONE]\n\n", **hung_up)
    )
    assert (whole.parse_status, whole.error_kind, whole.error_message) == ("ok", None, None)
    assert whole.finish_reason == "stop" and whole.assistant_text == "Hi"
    # before [DONE] the same hang-up cut the stream; a JSON body has no terminator to see
    cut, _ = build(raw(response_headers=stream, response_body=body, **hung_up))
    assert (cut.parse_status, cut.error_kind) == ("partial", "connection_reset")
    plain, _ = build(raw(**hung_up))
    assert (plain.parse_status, plain.error_kind) == ("partial", "connection_reset")


def test_the_tools_a_hosted_mcp_server_listed_are_offered_and_its_calls_name_it():
    from tests import paths

    answer = json.loads((paths.FIXTURES / "wire" / "responses_response_mcp.json").read_text())
    tool = answer["tools"][0]
    # the request already holds one of the listed tools (sent back): it is not offered twice
    held = {
        "type": "mcp_list_tools",
        "server_label": "deepwiki",
        "tools": answer["output"][0]["tools"][:1],
    }
    request = {
        "model": "gpt-4.1",
        "tools": [tool],
        "input": [held, {"role": "user", "content": "q"}],
    }
    _, rows = build_rows(
        raw(
            path="/v1/responses",
            request_body=json.dumps(request).encode(),
            response_body=json.dumps(answer).encode(),
        ),
        "p1",
        Redactor.build(),
        SessionTracker(),
    )
    offered = [
        (t["position"], t["name"], t["kind"], t["mcp_server"]) for t in rows["tools_offered"]
    ]
    assert offered == [
        (0, "deepwiki", "mcp", "deepwiki"),
        (1, "read_wiki_structure", "mcp_tool", "deepwiki"),
        (2, "ask_question", "mcp_tool", "deepwiki"),
    ]
    assert rows["tools_offered"][2]["parameters"]["required"] == ["repoName", "question"]
    ((name, server),) = [(c["name"], c["mcp_server"]) for c in rows["tool_calls"]]
    assert (name, server) == ("ask_question", "deepwiki")
    assert rows["exchanges"][0]["finish_reason"] == "completed"
