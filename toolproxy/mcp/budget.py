"""`toolproxy mcp budget`: what the tools block costs in prompt tokens.

Two methods, and every number says which one produced it (stable strings):

    provider_usage_diff   measured: the difference in provider-reported input_tokens
                          between two requests of the same conversation whose tools differ
    estimate_chars_div_4  estimated: characters of the tool as the provider receives it
                          (compact JSON in the request's wire format) divided by 4

Measuring. Requests are "the same conversation" when wire format, requested model, system
text, messages and the prompt-shaping parameters (tool_choice, previous_response_id,
conversation) are all equal, compared as canonical JSON.

* A request's whole tools block is measured when its conversation also has a request
  with no tools: block = input_tokens(with) - input_tokens(without). That includes the
  fixed text a provider adds whenever tools are present.
* A single tool is measured from pairs of requests of one conversation, both with tools,
  where one's tools are a strict superset of the other's: a pair that differs by exactly
  that tool measures it directly; a pair whose other differing tools are already measured
  gives the rest to the one left (peeling, repeated until nothing new is learned).
  Several measurements of one tool are averaged. Non-positive results are discarded
  (provider caching or noise), and the estimate is used instead.

Anything not measured is estimated. No tokenizer is used: real ones download vocabularies,
and the providers' own tool rendering is not public anyway.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, computed_field

from toolproxy.records import ToolOffered, canonical_json

if TYPE_CHECKING:
    from toolproxy.store.filters import Origin

Method = Literal["provider_usage_diff", "estimate_chars_div_4"]
MEASURED: Method = "provider_usage_diff"
ESTIMATED: Method = "estimate_chars_div_4"
CHARS_PER_TOKEN = 4
# Request parameters that change what the prompt holds besides messages and tools.
PROMPT_PARAMS = ("tool_choice", "previous_response_id", "conversation")


def wire_tool(tool: ToolOffered, wire_format: str) -> dict[str, Any]:
    """The tool as the provider receives it in `wire_format`'s tools array (a hosted MCP
    server's listed tool, kind `mcp_tool`, as the function it is shown to the model as)."""
    if tool.kind not in ("function", "mcp_tool"):
        return {"type": tool.kind, "name": tool.name}
    spec: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        spec["description"] = tool.description
    if wire_format == "anthropic_messages":
        return {**spec, "input_schema": tool.parameters or {"type": "object"}}
    if wire_format == "bedrock_converse":
        return {
            "toolSpec": {**spec, "inputSchema": {"json": tool.parameters or {"type": "object"}}}
        }
    if wire_format == "gemini":  # a function declaration of its tools' functionDeclarations
        return {**spec, "parameters": tool.parameters} if tool.parameters is not None else spec
    if tool.parameters is not None:
        spec["parameters"] = tool.parameters
    if wire_format == "openai_responses":
        return {"type": "function", **spec}
    return {"type": "function", "function": spec}


def estimate_tokens(text: str) -> int:
    """About four characters per token (rounded up)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def conversation_key(
    wire_format: str, model: str | None, system: Any, messages: Any, params: Any = None
) -> str:
    """Requests with equal keys differ at most in their tools block.

    Of the other request parameters only those that change the prompt count
    (`PROMPT_PARAMS`); sampling settings do not.
    """
    params = params if isinstance(params, dict) else {}
    prompt = {k: params[k] for k in PROMPT_PARAMS if k in params}
    return canonical_json([wire_format, model, system, messages, prompt])


class BudgetRequest(BaseModel):
    """One model request, reduced to what the budget needs."""

    exchange_id: str
    session_id: str | None = None
    started_at: datetime | None = None
    model: str | None = None
    wire_format: str
    input_tokens: int | None = Field(default=None, description="provider-reported prompt")
    conversation: str = Field(description="conversation_key(...)")
    tools: list[ToolOffered] = Field(default_factory=list)


class ToolCost(BaseModel):
    """What one tool costs in one request."""

    name: str
    schema_hash: str
    tokens: int
    method: Method


class RequestCost(BaseModel):
    """What one request's tools block costs."""

    exchange_id: str
    session_id: str | None
    started_at: datetime | None
    model: str | None
    wire_format: str
    input_tokens: int | None
    tools_tokens: int
    method: Method
    tools: list[ToolCost]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def share(self) -> float | None:
        """tools_tokens / input_tokens, when the provider reported usage."""
        return round(self.tools_tokens / self.input_tokens, 4) if self.input_tokens else None


class ToolSummary(BaseModel):
    """One tool definition over the capture, for one method."""

    name: str
    schema_hash: str
    method: Method
    requests: int
    avg_tokens: float
    total_tokens: int


class CaptureBudget(BaseModel):
    """Over the whole capture (or session): how many prompt tokens went to schemas."""

    requests: int
    requests_with_tools: int
    requests_without_usage: int = Field(description="no input_tokens reported: left out below")
    prompt_tokens: int
    schema_tokens: int
    schema_tokens_measured: int
    schema_tokens_estimated: int
    share: float | None
    method: Literal["provider_usage_diff", "estimate_chars_div_4", "mixed", "none"]


class BudgetReport(BaseModel):
    """Per request (most expensive first), per tool, and over the capture."""

    requests: list[RequestCost]
    tools: list[ToolSummary]
    capture: CaptureBudget


def _tool_key(tool: ToolOffered, wire_format: str) -> str:
    return canonical_json(wire_tool(tool, wire_format))


def measure_blocks(requests: Sequence[BudgetRequest]) -> dict[str, int]:
    """exchange_id -> measured whole-block cost, where a no-tools twin exists."""
    bare: dict[str, list[int]] = defaultdict(list)
    for r in requests:
        if not r.tools and r.input_tokens is not None:
            bare[r.conversation].append(r.input_tokens)
    out = {}
    for r in requests:
        if r.tools and r.input_tokens is not None and bare.get(r.conversation):
            cost = r.input_tokens - min(bare[r.conversation])
            if cost > 0:
                out[r.exchange_id] = cost
    return out


def fit_tool_costs(requests: Sequence[BudgetRequest]) -> dict[str, int]:
    """Tool key -> measured cost, from superset pairs within conversations (see module doc)."""
    groups: dict[str, dict[frozenset[str], int]] = defaultdict(dict)
    for r in requests:
        if r.tools and r.input_tokens is not None:
            keys = frozenset(_tool_key(t, r.wire_format) for t in r.tools)
            groups[r.conversation].setdefault(keys, r.input_tokens)
    pairs = [
        (big - small, tokens_big - tokens_small)
        for sets in groups.values()
        for big, tokens_big in sets.items()
        for small, tokens_small in sets.items()
        if small < big
    ]
    known: dict[str, int] = {}
    while True:
        found: dict[str, list[int]] = defaultdict(list)
        for diff, delta in pairs:
            left = [k for k in diff if k not in known]
            cost = delta - sum(known[k] for k in diff if k in known)
            if len(left) == 1 and cost > 0:
                found[left[0]].append(cost)
        new = {k: round(sum(v) / len(v)) for k, v in found.items()}
        if not new:
            return known
        known.update(new)


def cost_requests(requests: Sequence[BudgetRequest]) -> list[RequestCost]:
    """Every request with tools, costed (measured where possible), in input order."""
    blocks = measure_blocks(requests)
    fitted = fit_tool_costs(requests)
    out = []
    for r in requests:
        if not r.tools:
            continue
        tools = []
        for t in r.tools:
            key = _tool_key(t, r.wire_format)
            measured = fitted.get(key)
            tokens, method = (measured, MEASURED) if measured else (estimate_tokens(key), ESTIMATED)
            tools.append(
                ToolCost(name=t.name, schema_hash=t.schema_hash, tokens=tokens, method=method)
            )
        block = blocks.get(r.exchange_id)
        if block is None:
            whole = canonical_json([wire_tool(t, r.wire_format) for t in r.tools])
            total, method = estimate_tokens(whole), ESTIMATED
        else:
            total, method = block, MEASURED
        out.append(
            RequestCost(
                exchange_id=r.exchange_id,
                session_id=r.session_id,
                started_at=r.started_at,
                model=r.model,
                wire_format=r.wire_format,
                input_tokens=r.input_tokens,
                tools_tokens=total,
                method=method,
                tools=tools,
            )
        )
    return out


def summarize_tools(costs: Sequence[RequestCost]) -> list[ToolSummary]:
    """Per (tool, schema, method): in how many requests, average and total tokens."""
    seen: dict[tuple[str, str, Method], list[int]] = defaultdict(list)
    for c in costs:
        for t in c.tools:
            seen[(t.name, t.schema_hash, t.method)].append(t.tokens)
    rows = [
        ToolSummary(
            name=name,
            schema_hash=hash_,
            method=method,
            requests=len(tokens),
            avg_tokens=round(sum(tokens) / len(tokens), 1),
            total_tokens=sum(tokens),
        )
        for (name, hash_, method), tokens in seen.items()
    ]
    return sorted(rows, key=lambda s: (-s.total_tokens, s.name, s.schema_hash, s.method))


def compute_budget(requests: Sequence[BudgetRequest]) -> BudgetReport:
    """The whole report; `requests` are every model request of the capture (or session)."""
    costs = cost_requests(requests)
    usage = [c for c in costs if c.input_tokens is not None]
    measured = sum(c.tools_tokens for c in usage if c.method == MEASURED)
    estimated = sum(c.tools_tokens for c in usage if c.method == ESTIMATED)
    prompt = sum(r.input_tokens for r in requests if r.input_tokens is not None)
    methods = {c.method for c in usage}
    capture = CaptureBudget(
        requests=len(requests),
        requests_with_tools=len(costs),
        requests_without_usage=sum(r.input_tokens is None for r in requests),
        prompt_tokens=prompt,
        schema_tokens=measured + estimated,
        schema_tokens_measured=measured,
        schema_tokens_estimated=estimated,
        share=round((measured + estimated) / prompt, 4) if prompt else None,
        method=methods.pop() if len(methods) == 1 else ("mixed" if methods else "none"),
    )
    ranked = sorted(costs, key=lambda c: (-c.tools_tokens, str(c.started_at), c.exchange_id))
    return BudgetReport(requests=ranked, tools=summarize_tools(costs), capture=capture)


def _loads(text: Any) -> Any:
    return json.loads(text) if isinstance(text, str) else text


def load_requests(
    capture: Path, session: str | None = None, origin: Origin = "any"
) -> list[BudgetRequest]:
    """The model requests of `origin` in a capture (or one session) with their tools
    blocks."""
    from toolproxy import store
    from toolproxy.store.queries.mcp import model_requests

    with store.reading(capture) as r:
        exchanges, offered = model_requests(r, session, origin)
    tools: dict[str, list[ToolOffered]] = defaultdict(list)
    for exchange_id, position, name, kind, description, parameters, hash_ in offered:
        tools[exchange_id].append(
            ToolOffered(
                position=position,
                name=name,
                kind=kind or "function",
                description=description,
                parameters=_loads(parameters),
                schema_hash=hash_,
            )
        )
    return [
        BudgetRequest(
            exchange_id=x,
            session_id=s,
            started_at=at,
            model=model,
            wire_format=wf,
            input_tokens=tokens,
            conversation=conversation_key(wf, requested, system, _loads(msgs), _loads(params)),
            tools=tools.get(x, []),
        )
        for x, s, at, model, requested, wf, tokens, system, msgs, params in exchanges
    ]


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else ""


def render_budget(report: BudgetReport, top: int) -> str:
    """The report as terminal tables."""
    from toolproxy.util.table import format_table

    c = report.capture
    share = f"{c.share:.1%}" if c.share is not None else "n/a"
    parts = [
        f"{c.requests} requests, {c.requests_with_tools} with tools; prompt tokens "
        f"{c.prompt_tokens}, to tool schemas {c.schema_tokens} ({share}; measured "
        f"{c.schema_tokens_measured}, estimated {c.schema_tokens_estimated}; method {c.method})"
    ]
    if c.requests_without_usage:
        parts.append(f"{c.requests_without_usage} requests had no usage and are not in totals")
    rows: list[list[Any]] = [
        [_when(r.started_at), r.session_id, r.model, len(r.tools), r.tools_tokens, r.input_tokens,
         f"{r.share:.1%}" if r.share is not None else "", r.method]
        for r in report.requests[:top]
    ]  # fmt: skip
    cols = ["started", "session", "model", "tools", "tools_tokens", "input_tokens", "share"]
    parts += [
        "",
        f"Per request (top {min(top, len(report.requests))} of {len(report.requests)})",
        format_table([*cols, "method"], rows),
    ]
    rows = [
        [t.name, t.schema_hash, t.requests, t.avg_tokens, t.total_tokens, t.method]
        for t in report.tools
    ]
    cols = ["tool", "schema", "requests", "avg_tokens", "total_tokens", "method"]
    parts += ["", "Per tool", format_table(cols, rows)]
    return "\n".join(parts)
