"""Typed records that flow from the wire parsers into the capture store.

Pure data: no I/O, no SDK imports. Every later stage (grade, replay, report, tui) reads
these shapes back from the store, so field names here are the store's column names.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from toolproxy.util.jsonfast import canonical_dumps, text_sha256

WireFormat = Literal[
    "openai_chat",
    "openai_responses",
    "anthropic_messages",
    "ollama_chat",
    "gemini",
    "bedrock_converse",
    "mcp",
    "unknown",
]

# How far parsing got. Stable strings, documented in README "Store schema".
#   ok        request and response parsed completely
#   partial   parsed, but the response was cut short (stream ended before its terminator,
#             connection reset mid-body) or a part of it was unparseable
#   error     the body could not be parsed at all (kept raw, see parse_error)
#   unparsed  not a known model API endpoint; kept raw with its endpoint
ParseStatus = Literal["ok", "partial", "error", "unparsed"]

MAX_BODY = 64 * 1024 * 1024  # bytes of each body a capture keeps, by default


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace: the form hashes are taken of
    (`json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`)."""
    return canonical_dumps(value)


def schema_hash(schema: Any) -> str:
    """Stable 16-hex-digit hash of a JSON Schema (key order and whitespace do not matter)."""
    return text_schema_hash(canonical_dumps(schema))


def text_schema_hash(text: str) -> str:
    """`schema_hash` of the schema whose canonical text (`canonical_dumps`) is `text`."""
    return text_sha256(text)[:16]


class ToolOffered(BaseModel):
    """One tool in the request's tools block."""

    position: int = Field(description="0-based position in the tools array")
    name: str = Field(description="tool name as offered to the model")
    kind: str = Field(
        default="function",
        description="'function' for callable tools; provider built-ins keep their type",
    )
    description: str | None = Field(default=None, description="tool description")
    parameters: Any = Field(default=None, description="JSON Schema of the arguments")
    schema_hash: str = Field(description="schema_hash(parameters)")
    mcp_server: str | None = Field(
        default=None,
        description="the MCP server the provider runs it on (kind 'mcp': the server itself,"
        " 'mcp_tool': one of its tools, as the provider listed it); null: not hosted",
    )


class ToolCall(BaseModel):
    """One tool call the model emitted in a response: the one model of a call, whether
    captured, observed by the grader or recorded for a replay to compare with."""

    index: int = Field(default=0, description="0-based position among this response's calls")
    call_id: str | None = Field(default=None, description="provider's call id")
    name: str | None = Field(default=None, description="tool name the model chose")
    arguments_raw: str = Field(
        default="",
        description="argument text exactly as emitted (stream deltas concatenated)",
    )
    arguments: Any = Field(default=None, description="parsed arguments, when they parse")
    parse_error: str | None = Field(
        default=None, description="why arguments_raw did not parse as JSON, else null"
    )
    mcp_server: str | None = Field(
        default=None,
        description="the MCP server the provider ran it on for the model (Responses'"
        " server_label, Anthropic's server_name); null: a call the agent runs",
    )


class ToolResult(BaseModel):
    """A tool result the agent sent back to the model in a later request."""

    message_index: int = Field(description="position of the carrying message/item/block")
    call_id: str | None = Field(default=None, description="id of the call it answers")
    content: str = Field(default="", description="result text (parts joined)")
    is_error: bool | None = Field(default=None, description="agent-flagged error, if said")
    call_exchange_id: str | None = Field(
        default=None,
        description="exchange whose response made the call this answers (null: not seen)",
    )
    call_index: int | None = Field(
        default=None, description="that call's index among the exchange's tool calls"
    )


class Usage(BaseModel):
    """Provider-reported token usage, normalised across formats."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None


class Turn(BaseModel):
    """A conversation turn reduced to what identifies it across formats.

    Used only to chain exchanges into sessions: the assistant turn built from a response
    must equal the same turn when the agent sends it back in its next request.
    """

    role: str
    text: str = ""
    calls: list[tuple[str | None, str | None, str]] = Field(
        default_factory=list, description="(call_id, name, canonical arguments)"
    )
    call_id: str | None = Field(default=None, description="for tool results")


class ParsedRequest(BaseModel):
    """What a model request says, in a format-independent shape."""

    wire_format: WireFormat
    model: str | None = None
    stream: bool = False
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="request parameters other than messages/input/system/tools",
    )
    system: str | None = None
    messages: Any = Field(default=None, description="messages / input exactly as sent")
    tools: list[ToolOffered] = Field(default_factory=list)
    tool_results: list[ToolResult] = Field(default_factory=list)
    turns: list[Turn] = Field(default_factory=list)
    previous_response_id: str | None = None
    conversation: str | None = Field(
        default=None,
        description="the stored conversation a Responses request goes on (its `conversation`"
        " param: an id, or an object's `id`)",
    )


class ParsedResponse(BaseModel):
    """What a model response says, streamed or not, in a format-independent shape."""

    response_id: str | None = None
    model: str | None = None
    text: str | None = Field(default=None, description="assistant text, parts joined")
    refusal: str | None = Field(
        default=None,
        description="what the model said refusing, apart from its text (Chat's"
        " `message.refusal`, Responses' `refusal` parts); null: no refusal",
    )
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tools: list[ToolOffered] = Field(
        default_factory=list,
        description="tools the answer lists for the model: a hosted MCP server's (Responses"
        " `mcp_list_tools`), kind 'mcp_tool'",
    )
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    complete: bool = Field(
        default=True,
        description="False when a stream ended before its terminator / final event",
    )
    error: str | None = Field(default=None, description="API error message in the body")
    events: int = Field(default=0, description="SSE events seen (0 when not streamed)")
    reply: Turn | None = Field(default=None, description="the assistant turn produced")


class WireResult(BaseModel):
    """Outcome of parsing one exchange: errors are values, never exceptions."""

    wire_format: WireFormat = "unknown"
    parse_status: ParseStatus = "unparsed"
    parse_error: str | None = None
    request: ParsedRequest | None = None
    response: ParsedResponse | None = None
    mcp: list[McpMessage] = Field(
        default_factory=list, description="the JSON-RPC messages, for wire_format 'mcp'"
    )


class Exchange(BaseModel):
    """One HTTP request/response through the proxy: a row of the `exchanges` table."""

    exchange_id: str
    proxy_id: str
    session_id: str
    session_source: Literal[
        "header",
        "continued",
        "retry",
        "previous_response",
        "conversation",
        "linked",
        "mcp_session",
        "new",
    ]
    started_at: datetime
    ended_at: datetime | None = None
    ttfb_ms: float | None = Field(default=None, description="request end -> first body byte")
    latency_ms: float | None = Field(default=None, description="request start -> response end")
    method: str
    scheme: str
    host: str
    port: int
    path: str = Field(description="path with secret query parameters removed")
    wire_format: WireFormat
    streamed: bool = False
    status_code: int | None = None
    error_kind: str | None = None
    error_message: str | None = None
    parse_status: ParseStatus
    parse_error: str | None = None
    model_requested: str | None = None
    model_returned: str | None = None
    request_params: dict[str, Any] = Field(default_factory=dict)
    system: str | None = None
    messages: Any = None
    assistant_text: str | None = None
    refusal: str | None = None
    finish_reason: str | None = None
    response_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cached_input_tokens: int | None = None
    decode_tps: float | None = None
    sse_times: list[float] | None = Field(
        default=None,
        description="an event stream's events' arrival times, ms after the request started "
        "(one per event of the stored body, in order)",
    )
    request_headers: dict[str, str] = Field(default_factory=dict)
    response_headers: dict[str, str] = Field(default_factory=dict)
    request_body: str | None = None
    response_body: str | None = None
    body_encoding: Literal["utf-8", "base64"] = "utf-8"
    request_bytes: int = 0
    response_bytes: int = 0
    truncated: bool = Field(default=False, description="a body was cut at the max_body cap")
    conversation_key: str | None = Field(
        default=None, description="hash of the request's turns plus the reply"
    )


class SchemaVerdict(BaseModel):
    """Whether a tool schema is valid against its JSON Schema metaschema: a row of the
    `schema_checks` table, so grading checks each schema version once per capture."""

    schema_hash: str = Field(description="schema_hash(schema)")
    checker: str = Field(description="what checked it, e.g. 'jsonschema 4.26.0'")
    valid: bool = Field(description="the schema passed its metaschema")
    error: str | None = Field(default=None, description="why it is unusable, as graders say it")
    checked_at: str = Field(description="ISO-8601 UTC time of the check")


class McpTool(BaseModel):
    """One tool as an MCP server exposed it in one pull: a row of `mcp_tools`.

    Rows are observations, never overwritten: a changed schema shows up as a new
    `schema_hash` (see the `mcp_tool_versions` view for first/last seen per version).
    """

    pull_id: str = Field(description="id shared by every row of one `toolproxy mcp pull`")
    pulled_at: datetime
    server: str = Field(description="server name from the MCP config (or ad hoc)")
    transport: str = Field(description="stdio | http | sse")
    server_name: str | None = Field(default=None, description="serverInfo.name")
    server_version: str | None = Field(default=None, description="serverInfo.version")
    protocol_version: str | None = Field(default=None, description="negotiated MCP version")
    name: str
    title: str | None = None
    description: str | None = None
    input_schema: Any = Field(default=None, description="inputSchema (JSON Schema)")
    output_schema: Any = Field(default=None, description="outputSchema, if declared")
    annotations: Any = Field(default=None, description="readOnlyHint, destructiveHint, ...")
    schema_hash: str = Field(description="schema_hash(input_schema)")
    definition_hash: str = Field(description="hash of the whole tool definition")


class McpMessage(BaseModel):
    """One JSON-RPC message of MCP traffic through the proxy: a row of `mcp_messages`.

    A request and its response share a row (the response fields fill in); notifications
    and server-initiated requests get rows of their own.
    """

    position: int = Field(description="order within the exchange")
    direction: Literal["client", "server"] = Field(description="who sent the message")
    mcp_session_id: str | None = Field(default=None, description="Mcp-Session-Id header")
    rpc_id: str | None = Field(default=None, description="JSON-RPC id, as text")
    method: str | None = Field(default=None, description="e.g. initialize, tools/call")
    params: Any = None
    tool_name: str | None = Field(default=None, description="for tools/call")
    arguments: Any = Field(default=None, description="for tools/call")
    result: Any = None
    is_error: bool | None = Field(default=None, description="tools/call result.isError")
    error_code: int | None = Field(default=None, description="JSON-RPC error code")
    error_message: str | None = None
    linked_exchange_id: str | None = Field(
        default=None, description="model exchange whose tool call this tools/call executed"
    )
    linked_call_id: str | None = Field(default=None, description="that model tool call's id")
