"""Google's Gemini API (``POST .../models/{model}:generateContent``, and
``:streamGenerateContent``, SSE with ``alt=sse`` or else one JSON array), as the
`google-genai` clients send it to the Gemini API or Vertex AI.

- The request: `contents` (role `user` or `model`, each a list of `parts`: `text`,
  `functionCall` {name, args}, `functionResponse` {name, response}), `systemInstruction`
  (the system text), `tools[].functionDeclarations` (the offered tools), `toolConfig`,
  `generationConfig`, `safetySettings` as params. Field names are read in both of the
  spellings the API accepts (`functionCall` and `function_call`). The model and whether it
  streams are in the path, not the body (`from_path`, which `wire.parse_exchange` calls).
- A tool's schema: `parametersJsonSchema` as it is, else `parameters`, an OpenAPI-style
  schema whose types are upper-case enum names (`OBJECT`, `STRING`) and where `nullable`
  stands for a null type: it is turned into the JSON Schema it means (`json_schema`), so a
  call is checked against what the API checks it against.
- A call: a `functionCall` part of the first candidate, its `args` an object
  (re-serialised compactly); its `id` when the API gives one, else none. A result: a
  `functionResponse` part (its `response` object as compact JSON); naming no call, the k-th
  result after a model turn answers that turn's k-th call (`capture.session`).
- Text: the `text` parts that are not the model's thoughts (`thought: true`).
- finish_reason: the candidate's `finishReason` as sent (`STOP`, `MAX_TOKENS`, `SAFETY`,
  `MALFORMED_FUNCTION_CALL`, ...); usage from `usageMetadata`.
- A stream: each chunk's text parts are joined, its calls appended; the finish reason and
  usage are the last said. Complete when a chunk with a `finishReason` came and the body
  ended (the API sends no terminator).
"""

from __future__ import annotations

import json
from typing import Any

from toolproxy.records import (
    ParsedRequest,
    ParsedResponse,
    ToolCall,
    ToolOffered,
    ToolResult,
    Turn,
    Usage,
)
from toolproxy.wire.common import (
    CallKey,
    Codec,
    DecodedStream,
    JsonObject,
    arguments_key,
    as_dict,
    as_int,
    as_list,
    as_str,
    error_message,
    joined_text,
    make_call,
    offered,
    reply_turn,
)

_NOT_PARAMS = frozenset({"contents", "systemInstruction", "system_instruction", "tools", "model"})
_SCHEMA_TYPES = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})
# int64 fields of the API's Schema, which its JSON spells as strings ("minItems": "1")
_COUNTS = frozenset(
    {"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"}
)


def field(value: JsonObject, camel: str) -> Any:
    """A field by its camelCase name or its snake_case one (the API takes both)."""
    if camel in value:
        return value[camel]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return value.get(snake)


def parse_request(body: JsonObject) -> ParsedRequest:
    """A generateContent request (the model and streaming are set from the path)."""
    contents = body.get("contents")
    system = _text(as_dict(field(body, "systemInstruction")).get("parts"))
    if isinstance(field(body, "systemInstruction"), str):
        system = field(body, "systemInstruction")
    results = [
        ToolResult(
            message_index=index, call_id=as_str(reply.get("id")), content=_response_text(reply)
        )
        for index, content in enumerate(map(as_dict, as_list(contents)))
        for reply in _parts(content, "functionResponse")
    ]
    return ParsedRequest(
        wire_format="gemini",
        model=as_str(body.get("model")),
        stream=False,
        params={k: v for k, v in body.items() if k not in _NOT_PARAMS},
        system=system or None,
        messages=contents,
        tools=offered_tools(body.get("tools")),
        tool_results=results,
        turns=build_turns(system, contents),
    )


def offered_tools(tools: Any) -> list[ToolOffered]:
    """Each function declaration of each tool, then the built-ins (`googleSearch`, ...)."""
    found: list[ToolOffered] = []
    for tool in map(as_dict, as_list(tools)):
        for spec in map(as_dict, as_list(field(tool, "functionDeclarations"))):
            schema = field(spec, "parametersJsonSchema")
            if schema is None and field(spec, "parameters") is not None:
                schema = json_schema(field(spec, "parameters"))
            found.append(
                offered(len(found), "function", spec.get("name"), spec.get("description"), schema)
            )
        for kind in tool:
            if kind not in ("functionDeclarations", "function_declarations"):
                found.append(offered(len(found), kind, None, None, None))
    return found


def json_schema(schema: Any) -> Any:
    """The JSON Schema an API `Schema` means: enum-name types in lower case, `nullable`
    as a null type, counts spelled as strings as numbers, the rest as it stands."""
    if isinstance(schema, list):
        return [json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str) and value.upper() in _SCHEMA_TYPES:
            out[key] = value.lower()
        elif key in _COUNTS and isinstance(value, str) and value.isdigit():
            out[key] = int(value)
        elif key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: json_schema(s) for name, s in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "not", "additionalProperties"):
            out[key] = json_schema(value)
        elif key not in ("nullable", "propertyOrdering", "property_ordering"):
            out[key] = value
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _parts(content: JsonObject, kind: str) -> list[JsonObject]:
    """The `kind` objects (`functionCall`, `functionResponse`) of a content's parts."""
    found = (field(as_dict(p), kind) for p in as_list(content.get("parts")))
    return [value for value in found if isinstance(value, dict)]


def _text(parts: Any) -> str:
    """The text of parts that are not thoughts, joined with newlines."""
    return "\n".join(
        as_str(p.get("text")) or ""
        for p in map(as_dict, as_list(parts))
        if isinstance(p.get("text"), str) and p.get("thought") is not True
    )


def _response_text(reply: JsonObject) -> str:
    response = reply.get("response")
    if isinstance(response, str):
        return response
    return json.dumps(response, separators=(",", ":"), ensure_ascii=False)


def _call_key(call: JsonObject) -> CallKey:
    return (as_str(call.get("id")), as_str(call.get("name")), arguments_key(call.get("args", {})))


def build_turns(system: str | None, contents: Any) -> list[Turn]:
    """Turns of a conversation: system first; a model content is an assistant turn; each
    function response is its own tool turn, before the text of the same content."""
    turns = [Turn(role="system", text=system)] if system else []
    for content in map(as_dict, as_list(contents)):
        parts = content.get("parts")
        if content.get("role") == "model":
            calls = [_call_key(c) for c in _parts(content, "functionCall")]
            turns.append(Turn(role="assistant", text=_text(parts), calls=calls))
            continue
        replies = _parts(content, "functionResponse")
        for reply in replies:
            turns.append(
                Turn(role="tool", text=_response_text(reply), call_id=as_str(reply.get("id")))
            )
        text = _text(parts)
        if text or not replies:
            turns.append(Turn(role="user", text=text))
    return turns


def parse_response(body: JsonObject) -> ParsedResponse:
    """A GenerateContentResponse (or an error body): its first candidate."""
    candidate = as_dict(next(iter(as_list(body.get("candidates"))), None))
    content = as_dict(candidate.get("content"))
    calls: list[ToolCall] = []
    for call in _parts(content, "functionCall"):
        calls.append(make_call(len(calls), call.get("id"), call.get("name"), call.get("args", {})))
    response = ParsedResponse(
        response_id=as_str(field(body, "responseId")),
        model=as_str(field(body, "modelVersion")),
        text=joined_text([_text(content.get("parts"))]),
        tool_calls=calls,
        finish_reason=as_str(field(candidate, "finishReason")),
        usage=_usage(field(body, "usageMetadata")),
        error=error_message(body),
    )
    response.reply = reply_turn(response)
    return response


def _usage(usage: Any) -> Usage:
    usage = as_dict(usage)
    return Usage(
        input_tokens=as_int(field(usage, "promptTokenCount")),
        output_tokens=as_int(field(usage, "candidatesTokenCount")),
        total_tokens=as_int(field(usage, "totalTokenCount")),
        cached_input_tokens=as_int(field(usage, "cachedContentTokenCount")),
        reasoning_tokens=as_int(field(usage, "thoughtsTokenCount")),
    )


def parse_stream(stream: DecodedStream) -> tuple[ParsedResponse, list[str]]:
    """Join a stream's chunks into one response (see the module doc)."""
    parts: list[Any] = []
    last: JsonObject = {}
    finish: Any = None
    usage: Any = None
    errors: list[str] = []
    for chunk in stream.objects:
        if (error := error_message(chunk)) is not None:
            errors.append(error)
            continue
        candidate = as_dict(next(iter(as_list(chunk.get("candidates"))), None))
        parts += as_list(as_dict(candidate.get("content")).get("parts"))
        finish = field(candidate, "finishReason") or finish
        usage = field(chunk, "usageMetadata") or usage
        last = chunk
    texts = [as_str(p.get("text")) or "" for p in map(as_dict, parts) if _is_text(p)]
    joined = [{"text": "".join(texts)}] if texts else []
    others = [p for p in parts if not _is_text(as_dict(p))]
    candidate = {"content": {"role": "model", "parts": [*joined, *others]}, "finishReason": finish}
    response = parse_response({**last, "candidates": [candidate], "usageMetadata": usage})
    response.error = "; ".join(errors) or None
    response.reply = reply_turn(response)
    response.complete = finish is not None and stream.ended
    notes = [] if response.complete else ["stream ended before a finishReason"]
    return response, notes


def array_stream(body: bytes, ended: bool) -> DecodedStream:
    """A stream sent as one JSON array (`:streamGenerateContent` without `alt=sse`): each
    element read in turn, so a body cut short keeps the chunks before the cut."""
    text = body.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    stream = DecodedStream(ended=False)
    decoder, at = json.JSONDecoder(), 1
    while True:
        while at < len(text) and text[at] in " \t\r\n,":
            at += 1
        if at >= len(text):
            stream.notes.append("stream cut before the array's end")
            break
        if text[at] == "]":
            stream.ended = ended
            break
        try:
            value, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            stream.notes.append(f"stream cut or broken in element {stream.events}: {exc.msg}")
            break
        stream.events += 1
        if isinstance(value, dict):
            stream.objects.append(value)
    return stream


def _is_text(part: JsonObject) -> bool:
    return isinstance(part.get("text"), str) and part.get("thought") is not True


def from_path(request: ParsedRequest, path: str) -> None:
    """The model (unless the body names one) and whether it streams, from the path:
    `.../models/{model}:generateContent` or `:streamGenerateContent`."""
    model, _, method = path.split("?", 1)[0].rpartition("/")[2].partition(":")
    request.model = request.model or model or None
    request.stream = method.lower() == "streamgeneratecontent"


CODEC = Codec(parse_request, parse_response, parse_stream, from_path, framing="array")
