"""Ollama's own chat API: toolproxy.wire.ollama, and its NDJSON streams through
parse_exchange."""

from __future__ import annotations

import json
from typing import Any

from tests import paths
from toolproxy.records import Turn
from toolproxy.wire import detect_format, parse_exchange
from toolproxy.wire.ndjson import ndjson_stream
from toolproxy.wire.ollama import parse_request, parse_response, parse_stream

FIXTURES = paths.FIXTURES / "wire"
NDJSON = (FIXTURES / "ollama_stream.ndjson").read_bytes()


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def exchange(body: bytes, content_type: str | None = "application/x-ndjson", complete: bool = True):
    request = json.dumps(load("ollama_request.json") | {"stream": True}).encode()
    return parse_exchange("POST", "/api/chat", request, 200, content_type, body, complete)


def test_the_path_says_it_and_the_openai_compatible_one_is_chat():
    assert detect_format("POST", "/api/chat") == "ollama_chat"
    assert detect_format("POST", "/v1/chat/completions") == "openai_chat"
    assert detect_format("POST", "/api/generate") == "unknown"
    assert detect_format("GET", "/api/chat") == "unknown"


def test_request_fields_tools_and_params():
    body = load("ollama_request.json")
    request = parse_request(body)
    assert (request.wire_format, request.model, request.stream) == (
        "ollama_chat",
        "llama3.2",
        False,
    )
    assert request.messages == body["messages"] and request.system is None
    (tool,) = request.tools
    assert (tool.name, tool.kind) == ("get_current_weather", "function")
    assert tool.parameters["required"] == ["location", "format"]
    assert request.params == {"options": {"temperature": 0.2, "num_ctx": 8192}, "keep_alive": "5m"}
    assert parse_request({"model": "m", "messages": []}).stream  # streamed unless told not to


def test_response_tool_call_arguments_object_usage_and_finish():
    response = parse_response(load("ollama_response_tool_calls.json"))
    (call,) = response.tool_calls
    assert (call.index, call.call_id, call.name) == (0, None, "get_current_weather")
    assert call.arguments == {"format": "celsius", "location": "Paris, FR"}
    assert call.arguments_raw == '{"format":"celsius","location":"Paris, FR"}'
    assert response.text is None and response.finish_reason == "stop"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (122, 33, 155)


def test_stream_joins_text_and_appends_calls_and_matches_the_whole_answer():
    result = exchange(NDJSON)
    assert (result.wire_format, result.parse_status, result.parse_error) == (
        "ollama_chat",
        "ok",
        None,
    )
    streamed, plain = result.response, parse_response(load("ollama_response_tool_calls.json"))
    assert streamed is not None and streamed.complete and streamed.events == 4
    assert streamed.text == "Let me check."
    assert streamed.tool_calls == plain.tool_calls and streamed.usage == plain.usage
    # no content type said: four lines of objects are a stream all the same
    assert exchange(NDJSON, content_type=None).response.tool_calls == plain.tool_calls


def test_a_cut_stream_an_error_line_and_a_bad_line():
    lines = NDJSON.splitlines(keepends=True)
    cut = exchange(b"".join(lines[:3]) + lines[3][:20], complete=False)
    assert cut.parse_status == "partial" and not cut.response.complete
    assert "stream cut in the middle of a line" in cut.parse_error
    assert cut.response.tool_calls[0].name == "get_current_weather"  # what arrived is kept
    failed = exchange(lines[0] + b'{"error": "model runner has unexpectedly stopped"}\n')
    assert failed.response.error == "model runner has unexpectedly stopped"
    assert not failed.response.complete
    stream = ndjson_stream(lines[0] + b"not json\n" + lines[3], ended=True)
    assert len(stream.objects) == 2 and stream.notes[0].startswith("1 line(s) not JSON (line 2:")
    response, notes = parse_stream(stream)
    assert response.complete and notes == []


def test_results_name_no_call_and_the_reply_comes_back_as_its_turn():
    answer = load("ollama_response_tool_calls.json")
    reply = parse_response(answer).reply
    body = load("ollama_request.json")
    body["messages"] += [
        answer["message"],
        {"role": "tool", "content": "11 degrees celsius", "tool_name": "get_current_weather"},
    ]
    request = parse_request(body)
    assert request.turns[2] == reply
    assert request.turns[3] == Turn(role="tool", text="11 degrees celsius", call_id=None)
    ((index, call_id, content),) = [
        (r.message_index, r.call_id, r.content) for r in request.tool_results
    ]
    assert (index, call_id, content) == (3, None, "11 degrees celsius")
