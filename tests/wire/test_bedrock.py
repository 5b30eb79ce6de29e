"""Bedrock's Converse API, whole and streamed, and Bedrock's InvokeModel with Anthropic's
Messages body: what the wire says, read as every other format's."""

from __future__ import annotations

import base64
import json

from tests import paths
from toolproxy.wire import detect_format, parse_exchange
from toolproxy.wire.bedrock import from_path, model_in_path, parse_request, parse_response
from toolproxy.wire.eventstream import encode

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
PATH = "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse"
REQUEST = json.loads((paths.FIXTURES / "wire" / "bedrock_request.json").read_text())
SCHEMA = REQUEST["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]


def _event(kind: str, payload: object) -> bytes:
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return encode(headers, json.dumps(payload).encode())


def _stream(*events: bytes) -> bytes:
    return b"".join(events)


def test_the_request_reads_the_conversation_tools_results_and_params():
    request = parse_request(REQUEST)
    from_path(request, PATH)
    assert request.wire_format == "bedrock_converse"
    assert (request.model, request.stream, request.system) == (MODEL, False, "Be brief.")
    assert [(t.position, t.name, t.kind) for t in request.tools] == [
        (0, "get_weather", "function"),
        (1, "get_time", "function"),
        (2, "nova_grounding", "system_tool"),
    ]
    assert request.tools[0].parameters == SCHEMA and request.tools[2].parameters is None
    assert [(r.message_index, r.call_id, r.content, r.is_error) for r in request.tool_results] == [
        (2, "tu_1", '{"temp":18}', None),
        (2, "tu_2", "no clock", True),
    ]
    assert set(request.params) == {"toolConfig", "inferenceConfig", "additionalModelRequestFields"}
    assert [(t.role, t.text, t.call_id) for t in request.turns] == [
        ("system", "Be brief.", None),
        ("user", "Paris?", None),
        ("assistant", "Checking.", None),
        ("tool", '{"temp":18}', "tu_1"),
        ("tool", "no clock", "tu_2"),
        ("user", "Thanks.", None),
    ]
    assert request.turns[2].calls == [
        ("tu_1", "get_weather", '{"city":"Paris"}'),
        ("tu_2", "get_time", "{}"),
    ]


def test_the_path_gives_the_model_url_decoded_and_the_streaming():
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-v2"
    encoded = arn.replace(":", "%3A").replace("/", "%2F")
    assert model_in_path(f"/model/{encoded}/converse-stream", ("converse", "converse-stream")) == (
        arn,
        "converse-stream",
    )
    assert model_in_path("/converse", ("converse",)) == (None, "")
    request = parse_request({"messages": []})
    from_path(request, f"/model/{encoded}/converse-stream?x=1")
    assert (request.model, request.stream) == (arn, True)


def test_a_whole_response_reads_text_calls_stop_reason_and_usage():
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "thinking"}}},
                    {"text": "Checking."},
                    {
                        "toolUse": {
                            "toolUseId": "tu_9",
                            "name": "get_weather",
                            "input": {"city": "Oslo"},
                        }
                    },
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {
            "inputTokens": 30,
            "outputTokens": 9,
            "totalTokens": 39,
            "cacheReadInputTokens": 20,
        },
        "metrics": {"latencyMs": 412},
    }
    response = parse_response(body)
    assert response.text == "Checking." and response.finish_reason == "tool_use"
    (call,) = response.tool_calls
    assert (call.call_id, call.name, call.arguments_raw, call.arguments) == (
        "tu_9",
        "get_weather",
        '{"city":"Oslo"}',
        {"city": "Oslo"},
    )
    assert (response.usage.input_tokens, response.usage.cached_input_tokens) == (30, 20)
    assert response.reply is not None and response.reply.calls[0][0] == "tu_9"


def test_an_error_body_is_the_error():
    result = parse_exchange(
        "POST",
        PATH,
        json.dumps(REQUEST).encode(),
        400,
        "application/json",
        b'{"message":"Malformed input request: #: required key [messages] not found"}',
    )
    assert result.parse_status == "ok"
    assert result.response is not None
    assert result.response.error == "Malformed input request: #: required key [messages] not found"
    assert result.response.reply is None


def test_a_stream_joins_text_and_tool_input_pieces_exactly():
    body = _stream(
        _event("messageStart", {"role": "assistant"}),
        _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Let "}, "p": "ab"}),
        _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "me."}}),
        _event("contentBlockStop", {"contentBlockIndex": 0}),
        _event(
            "contentBlockStart",
            {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tu_1", "name": "f"}}},
        ),
        _event(
            "contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"a": '}}}
        ),
        _event(
            "contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "1}"}}}
        ),
        _event(
            "contentBlockStart",
            {"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tu_2", "name": "g"}}},
        ),
        _event("messageStop", {"stopReason": "tool_use"}),
        _event("metadata", {"usage": {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12}}),
    )
    result = parse_exchange(
        "POST",
        PATH + "-stream",
        json.dumps(REQUEST).encode(),
        200,
        "application/vnd.amazon.eventstream",
        body,
    )
    assert (result.parse_status, result.parse_error) == ("ok", None)
    assert result.request is not None and result.request.stream
    response = result.response
    assert response is not None and response.events == 10
    assert response.text == "Let me." and response.finish_reason == "tool_use"
    assert [(c.call_id, c.name, c.arguments_raw, c.arguments) for c in response.tool_calls] == [
        ("tu_1", "f", '{"a": 1}', {"a": 1}),
        ("tu_2", "g", "{}", {}),  # no input text: the API's empty input
    ]
    assert response.usage.output_tokens == 7


def test_broken_tool_input_is_the_calls_parse_error_not_the_exchanges():
    body = _stream(
        _event(
            "contentBlockStart",
            {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "tu_1", "name": "f"}}},
        ),
        _event(
            "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"a":'}}}
        ),
        _event("messageStop", {"stopReason": "max_tokens"}),
    )
    result = parse_exchange("POST", PATH + "-stream", b"{}", 200, None, body)
    assert result.parse_status == "ok" and result.response is not None
    (call,) = result.response.tool_calls
    assert call.arguments is None and call.parse_error and call.arguments_raw == '{"a":'


def test_a_stream_cut_or_ended_by_an_exception_is_partial_with_its_reason():
    start = _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hal"}})
    cut = parse_exchange("POST", PATH + "-stream", b"{}", 200, None, start, response_complete=True)
    assert cut.parse_status == "partial"
    assert cut.parse_error == "response: stream ended before messageStop"
    thrown = start + encode(
        {":message-type": "exception", ":exception-type": "modelStreamErrorException"},
        b'{"message":"The model stopped."}',
    )
    result = parse_exchange("POST", PATH + "-stream", b"{}", 200, None, thrown)
    assert result.parse_status == "partial" and result.response is not None
    assert result.response.error == "modelStreamErrorException: The model stopped."
    assert result.response.text == "Hal" and not result.response.complete


def test_a_converse_stream_whose_first_prelude_is_broken_says_so():
    result = parse_exchange(
        "POST", PATH + "-stream", b"{}", 200, None, b"\x00\x00\x00\x00garbage!!"
    )
    assert result.parse_status == "partial"
    assert "stream unreadable from message 0: " in (result.parse_error or "")


def test_detect_format_knows_bedrocks_paths():
    body = {"anthropic_version": "bedrock-2023-05-31", "messages": []}
    assert detect_format("POST", PATH) == "bedrock_converse"
    assert detect_format("POST", PATH + "-stream?x=1") == "bedrock_converse"
    assert detect_format("POST", "/model/m/invoke", body) == "anthropic_messages"
    assert (
        detect_format("POST", "/model/m/invoke-with-response-stream", body) == "anthropic_messages"
    )
    assert detect_format("POST", "/model/amazon.titan/invoke", {"inputText": "hi"}) == "unknown"
    assert detect_format("POST", "/converse") == "unknown"
    assert detect_format("GET", PATH) == "unknown"


def _chunk(event: dict[str, object]) -> bytes:
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    inner = base64.b64encode(json.dumps(event).encode()).decode()
    return encode(headers, json.dumps({"bytes": inner}).encode())


def test_anthropic_on_bedrock_reads_its_chunks_and_its_model_from_the_path():
    request = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 50,
        "messages": [{"role": "user", "content": "Oslo?"}],
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
    }
    use = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 4}}},
        {"type": "content_block_start", "index": 0, "content_block": use},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"x":1}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        {"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 4}},
    ]
    path = "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke-with-response-stream"
    result = parse_exchange(
        "POST",
        path,
        json.dumps(request).encode(),
        200,
        "application/vnd.amazon.eventstream",
        b"".join(_chunk(e) for e in events),
    )
    assert (result.wire_format, result.parse_status) == ("anthropic_messages", "ok")
    assert result.request is not None
    assert (result.request.model, result.request.stream) == (MODEL, True)
    assert result.response is not None and result.response.finish_reason == "tool_use"
    assert [(c.call_id, c.arguments) for c in result.response.tool_calls] == [("toolu_1", {"x": 1})]
    answer = b'{"type":"message","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}'
    invoke = path.removesuffix("-with-response-stream")
    whole = parse_exchange("POST", invoke, json.dumps(request).encode(), 200, None, answer)
    assert whole.request is not None and (whole.request.model, whole.request.stream) == (
        MODEL,
        False,
    )
    assert whole.response is not None and whole.response.text == "hi"


def test_vertex_ais_anthropic_path_gives_the_model():
    request = {"anthropic_version": "vertex-2023-10-16", "messages": [], "stream": True}
    path = (
        "/v1/projects/p/locations/us-east5/publishers/anthropic/models/"
        "claude-3-5-haiku@20241022:streamRawPredict"
    )
    result = parse_exchange("POST", path, json.dumps(request).encode(), 200, None, b"")
    assert result.request is not None
    assert (result.request.model, result.request.stream) == ("claude-3-5-haiku@20241022", True)
