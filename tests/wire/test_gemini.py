"""Gemini generateContent: toolproxy.wire.gemini, through parse_exchange (the path names
the model and says whether it streams; a stream is SSE or one JSON array)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from tests import paths
from toolproxy.records import Turn
from toolproxy.wire import detect_format, parse_exchange
from toolproxy.wire.gemini import json_schema, parse_request, parse_response

FIXTURES = paths.FIXTURES / "wire"
SSE = (FIXTURES / "gemini_stream.sse").read_bytes()
PATH = "/v1beta/models/gemini-2.5-flash"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def exchange(method: str, body: bytes, content_type: str | None, complete: bool = True):
    request = (FIXTURES / "gemini_request.json").read_bytes()
    path = f"{PATH}:{method}"
    return parse_exchange("POST", path, request, 200, content_type, body, complete)


def chunks() -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in SSE.decode().split("\r\n\r\n") if line]


def test_the_path_says_it_the_gemini_api_s_and_vertex_ai_s():
    assert detect_format("POST", f"{PATH}:generateContent") == "gemini"
    assert detect_format("POST", f"{PATH}:streamGenerateContent?alt=sse") == "gemini"
    vertex = "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro"
    assert detect_format("POST", f"{vertex}:generateContent") == "gemini"
    assert detect_format("POST", f"{PATH}:countTokens") == "unknown"


def test_request_tools_schemas_system_and_params():
    request = parse_request(load("gemini_request.json"))
    assert (request.wire_format, request.system) == ("gemini", "Be brief.")
    names = [(t.position, t.name, t.kind) for t in request.tools]
    assert names == [
        (0, "get_weather", "function"),
        (1, "get_time", "function"),
        (2, "googleSearch", "googleSearch"),
    ]
    # the API's own schema, as the JSON Schema it means
    assert request.tools[0].parameters == {
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": ["string", "null"], "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
        "type": "object",
    }
    jsonschema.Draft202012Validator.check_schema(request.tools[0].parameters)
    assert request.tools[1].parameters["required"] == ["timezone"]  # parametersJsonSchema
    assert set(request.params) == {"toolConfig", "generationConfig"}
    assert request.turns == [
        Turn(role="system", text="Be brief."),
        Turn(role="user", text="What's the weather in Paris, and the time there?"),
    ]


def test_schema_spellings_and_nesting():
    number, boolean = {"type": "NUMBER"}, {"type": "BOOLEAN"}
    api = {
        "type": "ARRAY",
        "items": {
            "type": "OBJECT",
            "nullable": True,
            "properties": {
                "n": {"type": "INTEGER", "format": "int32"},
                "any": {"anyOf": [number, boolean]},
            },
        },
        "minItems": "1",  # int64: a string in the API's JSON
        "maxItems": 3,
    }
    assert json_schema(api) == {
        "type": "array",
        "items": {
            "type": ["object", "null"],
            "properties": {
                "n": {"type": "integer", "format": "int32"},
                "any": {"anyOf": [{"type": "number"}, {"type": "boolean"}]},
            },
        },
        "minItems": 1,
        "maxItems": 3,
    }
    snake = parse_request(
        {"tools": [{"function_declarations": [{"name": "f", "parameters": {"type": "STRING"}}]}]}
    )
    assert snake.tools[0].parameters == {"type": "string"}


def test_response_calls_text_finish_and_usage():
    response = parse_response(load("gemini_response_function_call.json"))
    assert [(c.index, c.call_id, c.name, c.arguments) for c in response.tool_calls] == [
        (0, None, "get_weather", {"city": "Paris", "unit": "celsius"}),
        (1, None, "get_time", {"timezone": "Europe/Paris"}),
    ]
    assert response.text == "Let me look that up."
    assert (response.finish_reason, response.model) == ("STOP", "gemini-2.5-flash")
    usage = response.usage
    assert (
        usage.input_tokens,
        usage.output_tokens,
        usage.total_tokens,
        usage.reasoning_tokens,
    ) == (96, 31, 139, 12)


def test_a_stream_as_sse_or_as_one_array_matches_the_whole_answer():
    whole = parse_response(load("gemini_response_function_call.json"))
    sse = exchange("streamGenerateContent?alt=sse", SSE, "text/event-stream")
    array = b"[" + b",\r\n".join(json.dumps(c).encode() for c in chunks()) + b"]"
    listed = exchange("streamGenerateContent", array, "application/json")
    for result in (sse, listed):
        assert (result.parse_status, result.parse_error) == ("ok", None)
        assert result.request.stream and result.request.model == "gemini-2.5-flash"
        got = result.response
        assert got.complete and got.events == 4
        assert got.text == whole.text  # the thought left out
        assert got.tool_calls == whole.tool_calls and got.usage == whole.usage
    plain = exchange(
        "generateContent",
        json.dumps(load("gemini_response_function_call.json")).encode(),
        "application/json",
    )
    assert not plain.request.stream and plain.response.tool_calls == whole.tool_calls


def test_a_cut_stream_keeps_what_came():
    array = (
        b"["
        + b",\r\n".join(json.dumps(c).encode() for c in chunks()[:3])
        + b",\r\n"
        + json.dumps(chunks()[3]).encode()[:40]
    )
    cut = exchange("streamGenerateContent", array, "application/json", complete=False)
    assert cut.parse_status == "partial" and not cut.response.complete
    assert cut.response.text == "Let me look that up." and cut.response.tool_calls == []
    assert "stream cut or broken in element 3" in cut.parse_error
    sse = exchange(
        "streamGenerateContent?alt=sse",
        SSE.split(b"\r\n\r\n")[0] + b"\r\n\r\n",
        "text/event-stream",
    )
    assert sse.parse_status == "partial" and "before a finishReason" in sse.parse_error


def test_results_name_no_call_and_the_reply_comes_back_as_its_turn():
    answer = load("gemini_response_function_call.json")
    reply = parse_response(answer).reply
    body = load("gemini_request.json")
    body["contents"] += [
        answer["candidates"][0]["content"],
        {"role": "user", "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"temp": 18}}},
            {"functionResponse": {"name": "get_time", "response": {"time": "09:00"}}},
            {"text": "Thanks!"}]},
    ]  # fmt: skip
    request = parse_request(body)
    assert request.turns[2] == reply
    assert request.turns[3:] == [
        Turn(role="tool", text='{"temp":18}'),
        Turn(role="tool", text='{"time":"09:00"}'),
        Turn(role="user", text="Thanks!"),
    ]
    assert [(r.message_index, r.call_id, r.content) for r in request.tool_results] == [
        (2, None, '{"temp":18}'),
        (2, None, '{"time":"09:00"}'),
    ]
