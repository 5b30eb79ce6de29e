"""OpenAI Responses (``POST .../responses``), streamed or not.

Tool calls are ``function_call`` items and, for custom (grammar) tools, ``custom_tool_call``
items whose free-text ``input`` stands as its own parsed value. A hosted MCP server's calls
(an ``mcp`` tool: the provider runs them) are the model's calls too, recorded with the
server's label as ``mcp_server``: ``mcp_call`` items, and ``mcp_approval_request`` items (the
call chosen, held for the agent's approval; the ``mcp_call`` that runs it once approved names
its ``approval_request_id`` and is not a second call). The tools such a server has, as the
provider listed them to the model (``mcp_list_tools``, in the answer or sent back in
``input``), are offered tools of kind ``mcp_tool`` with their input schemas. The results the
provider got stay in the bodies (they are not the agent's). Other built-in tools
(web_search_call, ...) are not the agent's calls and are not recorded.

finish_reason, since Responses has none: ``tool_calls`` when a completed response holds
function calls, else the status (``completed``, ``failed``, ``cancelled``), or
``incomplete:<reason>`` (``incomplete:max_output_tokens``); None while in progress.
"""

from __future__ import annotations

from typing import Any

from toolproxy.records import (
    ParsedRequest,
    ParsedResponse,
    ToolCall,
    ToolOffered,
    ToolResult,
    Turn,
    Usage,
    canonical_json,
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
    join_text,
    joined_text,
    make_call,
    offered,
    reply_turn,
    request_params,
    text_parts,
)

_CALLS = ("function_call", "custom_tool_call")
_HOSTED = ("mcp_call", "mcp_approval_request")  # a hosted MCP server's (`hosted_call`)
_RESULTS = ("function_call_output", "custom_tool_call_output")
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")
# Stream events "<prefix>.delta" / "<prefix>.done" and the item field they build.
_DELTA_FIELDS = {
    "response.function_call_arguments": "arguments",
    "response.mcp_call_arguments": "arguments",
    "response.custom_tool_call_input": "input",
    "response.output_text": "text",
    "response.refusal": "refusal",
}
_PARTS = {"text": "output_text", "refusal": "refusal"}  # a content part's type, by field


def parse_request(body: JsonObject) -> ParsedRequest:
    """A Responses request: `instructions` is the system text, `input` the messages."""
    items = body.get("input")
    tools = []
    for position, tool in enumerate(as_list(body.get("tools"))):
        tool = as_dict(tool)
        kind = as_str(tool.get("type")) or "function"
        name = tool.get("name") or tool.get("server_label")
        server = tool.get("server_label") if kind == "mcp" else None
        parameters = tool.get("parameters")
        tools.append(offered(position, kind, name, tool.get("description"), parameters, server))
    results = []
    for index, item in enumerate(as_list(items)):
        item = as_dict(item)
        if item.get("type") == "mcp_list_tools":
            tools += listed_tools(item, len(tools))
        elif item.get("type") in _RESULTS:
            results.append(
                ToolResult(
                    message_index=index,
                    call_id=as_str(item.get("call_id")),
                    content=join_text(item.get("output")),
                )
            )
    instructions = as_str(body.get("instructions"))
    return ParsedRequest(
        wire_format="openai_responses",
        model=as_str(body.get("model")),
        stream=body.get("stream") is True,
        params=request_params(body),
        system=instructions,
        messages=items,
        tools=tools,
        tool_results=results,
        turns=build_turns(instructions, items),
        previous_response_id=as_str(body.get("previous_response_id")),
        conversation=as_str(body.get("conversation"))
        or as_str(as_dict(body.get("conversation")).get("id")),
    )


def hosted_call(item: JsonObject) -> bool:
    """Whether an output or input item is a hosted MCP server's call the model made (not
    the `mcp_call` that runs an approved request: that one was the request)."""
    return item.get("type") in _HOSTED and not item.get("approval_request_id")


def listed_tools(item: JsonObject, start: int) -> list[ToolOffered]:
    """The tools of an `mcp_list_tools` item, as offered tools numbered from `start`."""
    server = item.get("server_label")
    tools = [as_dict(tool) for tool in as_list(item.get("tools"))]
    return [
        offered(
            start + i,
            "mcp_tool",
            tool.get("name"),
            tool.get("description"),
            tool.get("input_schema"),
            server,
        )
        for i, tool in enumerate(tools)
    ]


def build_turns(instructions: str | None, items: Any) -> list[Turn]:
    """Turns of an input: instructions first (as 'system'), a string input is one user turn.

    Consecutive assistant `message` and call items (a hosted MCP server's too) make one
    assistant turn, the shape a response's output has; `reasoning` and other provider-side
    items neither count nor split it. An `mcp_approval_response` (the agent's answer to
    a held call) ends the assistant turn, as the response that held the call ended there.
    """
    turns = [Turn(role="system", text=instructions)] if instructions else []
    if isinstance(items, str):
        return [*turns, Turn(role="user", text=items)]
    assistant: tuple[list[str], list[CallKey]] | None = None  # the open assistant turn
    for item in as_list(items):
        item = as_dict(item)
        kind = item.get("type") or ("message" if "role" in item else None)
        role = as_str(item.get("role")) or "user"
        call = kind in _CALLS or hosted_call(item)
        if call or (kind == "message" and role == "assistant"):
            assistant = assistant or ([], [])
            if call:
                assistant[1].append(_sent_call_key(item))
            else:
                assistant[0].extend(text_parts(item.get("content")))
            continue
        if kind == "mcp_approval_response" and assistant:
            turns.append(_assistant_turn(*assistant))
            assistant = None
        if kind != "message" and kind not in _RESULTS:
            continue
        if assistant:
            turns.append(_assistant_turn(*assistant))
            assistant = None
        if kind == "message":
            turns.append(Turn(role=role, text=join_text(item.get("content"))))
        else:
            call_id = as_str(item.get("call_id"))
            turns.append(Turn(role="tool", text=join_text(item.get("output")), call_id=call_id))
    if assistant:
        turns.append(_assistant_turn(*assistant))
    return turns


def _assistant_turn(texts: list[str], calls: list[CallKey]) -> Turn:
    return Turn(role="assistant", text="\n".join(texts), calls=calls)


def _sent_call_key(item: JsonObject) -> CallKey:
    if item.get("type") == "custom_tool_call":
        arguments = canonical_json(item.get("input", ""))
    else:
        arguments = arguments_key(item.get("arguments", ""))
    call_id = item.get("id") if item.get("type") in _HOSTED else item.get("call_id")
    return (as_str(call_id), as_str(item.get("name")), arguments)


def parse_response(body: JsonObject) -> ParsedResponse:
    """A non-streamed response object (or an error body)."""
    texts: list[str] = []
    refused: list[str] = []
    calls: list[ToolCall] = []
    listed: list[ToolOffered] = []
    for item in as_list(body.get("output")):
        item = as_dict(item)
        kind = item.get("type")
        if kind == "message":
            texts += text_parts(item.get("content"))
            refused += [
                as_str(part.get("refusal")) or ""
                for part in map(as_dict, as_list(item.get("content")))
                if part.get("type") == "refusal"
            ]
        elif kind in _CALLS:
            custom = kind == "custom_tool_call"
            raw = item.get("input" if custom else "arguments", "")
            calls.append(
                make_call(len(calls), item.get("call_id"), item.get("name"), raw, free_text=custom)
            )
        elif hosted_call(item):
            raw, server = item.get("arguments", ""), item.get("server_label")
            calls.append(
                make_call(len(calls), item.get("id"), item.get("name"), raw, mcp_server=server)
            )
        elif kind == "mcp_list_tools":
            listed += listed_tools(item, len(listed))
    agents = any(call.mcp_server is None for call in calls)  # calls the agent is to run
    response = ParsedResponse(
        response_id=as_str(body.get("id")),
        model=as_str(body.get("model")),
        text=joined_text(texts),
        refusal=joined_text(refused),
        tool_calls=calls,
        tools=listed,
        finish_reason=_finish_reason(body, agents),
        usage=_usage(body.get("usage")),
        error=error_message(body),
    )
    response.reply = reply_turn(response)
    return response


def _finish_reason(body: JsonObject, has_calls: bool) -> str | None:
    status = as_str(body.get("status"))
    if status == "completed":
        return "tool_calls" if has_calls else "completed"
    if status == "incomplete":
        reason = as_str(as_dict(body.get("incomplete_details")).get("reason"))
        return f"incomplete:{reason}" if reason else "incomplete"
    if status in ("failed", "cancelled"):
        return status
    return None


def _usage(usage: Any) -> Usage:
    usage = as_dict(usage)
    return Usage(
        input_tokens=as_int(usage.get("input_tokens")),
        output_tokens=as_int(usage.get("output_tokens")),
        total_tokens=as_int(usage.get("total_tokens")),
        cached_input_tokens=as_int(as_dict(usage.get("input_tokens_details")).get("cached_tokens")),
        reasoning_tokens=as_int(
            as_dict(usage.get("output_tokens_details")).get("reasoning_tokens")
        ),
    )


def parse_stream(stream: DecodedStream) -> tuple[ParsedResponse, list[str]]:
    """Reassemble Responses stream events into one response.

    The response object of the terminal event (response.completed / .incomplete / .failed)
    is preferred when its output is filled in; otherwise the output items are rebuilt from
    output_item.added, the argument/text deltas and their .done events (a .done value and
    output_item.done replace what the deltas built, being the server's own final text).
    Complete when a terminal event was seen. A top-level `error` event sets the error.
    """
    head: JsonObject = {}
    final: JsonObject | None = None
    items: dict[int, JsonObject] = {}
    ids: dict[str, int] = {}
    errors: list[str] = []
    for event in stream.objects:
        kind = event.get("type")
        if (error := error_message(event)) is not None:
            errors.append(error)
        elif isinstance(event.get("response"), dict):
            head = event["response"]
            if kind in _TERMINAL:
                final = head
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = dict(as_dict(event.get("item")))
            index = as_int(event.get("output_index"))
            index = len(items) if index is None else index
            items[index] = item
            if isinstance(item.get("id"), str):
                ids[item["id"]] = index
        elif isinstance(kind, str) and (field := _DELTA_FIELDS.get(kind.rpartition(".")[0])):
            _apply_delta(field, kind, event, _locate(items, ids, event))

    body = dict(final if final is not None else head)
    if not as_list(body.get("output")):
        body["output"] = [_join_pieces(items[i]) for i in sorted(items)]
    response = parse_response(body)
    response.error = "; ".join([e for e in [response.error, *errors] if e]) or None
    response.reply = reply_turn(response)
    response.complete = final is not None
    notes = [] if response.complete else ["stream ended before response.completed"]
    return response, notes


def _locate(items: dict[int, JsonObject], ids: dict[str, int], event: JsonObject) -> JsonObject:
    """The item an event refers to, by output_index then item_id; a stub when unknown."""
    index = as_int(event.get("output_index"))
    if index is None:
        index = ids.get(as_str(event.get("item_id")) or "", len(items))
    if index not in items:
        kind = "message" if "content_index" in event else "function_call"
        if str(event.get("type")).startswith("response.mcp_call"):
            kind = "mcp_call"
        items[index] = {"type": kind, "id": event.get("item_id")}
    return items[index]


def _apply_delta(field: str, kind: str, event: JsonObject, item: JsonObject) -> None:
    """Fold one delta/done event into its item.

    Deltas collect in a list under the field (joined once, by _join_pieces: repeated
    string concatenation is quadratic on long arguments); a .done value replaces them.
    """
    target = item
    if field in _PARTS:  # a part of a message's content
        if not isinstance(item.get("content"), list):
            item["content"] = []
        parts = item["content"]
        index = as_int(event.get("content_index")) or 0
        while len(parts) <= index:
            parts.append({"type": _PARTS[field], field: ""})
        if not isinstance(parts[index], dict):
            parts[index] = {"type": _PARTS[field], field: ""}
        target = parts[index]
    if kind.endswith(".delta") and isinstance(delta := event.get("delta"), str):
        pieces = target.get(field)
        if isinstance(pieces, list):
            pieces.append(delta)
        else:
            target[field] = [as_str(pieces) or "", delta]
    elif kind.endswith(".done") and isinstance(value := event.get(field), str):
        target[field] = value


def _join_pieces(item: JsonObject) -> JsonObject:
    """Turn the delta lists _apply_delta left in an item back into strings."""
    for target in [item, *as_list(item.get("content"))]:
        for field in _DELTA_FIELDS.values():
            if isinstance(target, dict) and isinstance(target.get(field), list):
                target[field] = "".join(target[field])
    return item


CODEC = Codec(parse_request, parse_response, parse_stream)
