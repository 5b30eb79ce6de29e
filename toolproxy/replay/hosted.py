"""A hosted MCP server's calls, in the Chat request a candidate serves. Pure.

An agent can hand an MCP server to the provider (the Responses API's `mcp` tool, Anthropic's
MCP connector): the provider lists the server's tools to the model, runs the model's calls,
and puts each result beside its call. The capture records those calls as the model's
(`tool_calls.mcp_server`) and the listed tools as offered tools of kind `mcp_tool`
(`wire.openai_responses`, `wire.anthropic`). A candidate on Chat Completions runs no MCP
server, so a replay says that history the way Chat says it:

- a hosted call → an entry of the assistant message's `tool_calls` (the item's or block's
  id), answered by a `tool` message right after that message with the result the provider
  got: its `output`, else `error: <error>`; an `mcp_approval_request` is answered by the
  `mcp_call` that ran it once approved (which is not a second call), "not approved by the
  agent" when it was denied, "no result recorded" when neither was sent back;
- text the model wrote after a hosted call's result → an assistant message after that
  result, as it came;
- the listed tools → function tools (`convert._tools`), so the candidate can make the same
  calls; its calls are compared with the recorded ones, not run.
"""

from __future__ import annotations

import json
from typing import Any

from toolproxy.replay.chatmsg import answer, assistant, chat_call, compact

NO_RESULT = "no result recorded"
DENIED = "not approved by the agent"


def _outcome(item: dict[str, Any]) -> str:
    """What the provider got running a call: its output, else its error."""
    output = item.get("output")
    if isinstance(output, str) and item.get("error") in (None, ""):
        return output
    error = item.get("error")
    if error not in (None, ""):
        return "error: " + (error if isinstance(error, str) else json.dumps(error))
    return NO_RESULT if output is None else json.dumps(output, ensure_ascii=False)


def responses_results(items: list[Any]) -> dict[str, str]:
    """The result of each hosted call of a Responses input, by the call's id."""
    found: dict[str, str] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        kind, held = item.get("type"), item.get("approval_request_id")
        if kind == "mcp_call" and isinstance(item.get("id"), str) and not held:
            found[item["id"]] = _outcome(item)
        elif kind == "mcp_call" and isinstance(held, str):
            found[held] = _outcome(item)
        elif (
            kind == "mcp_approval_response"
            and item.get("approve") is False
            and isinstance(held, str)
        ):
            found.setdefault(held, DENIED)
    return found


def is_consumed(item: dict[str, Any]) -> bool:
    """Whether a Responses input item is said by the hosted calls' conversion without a
    message of its own: a listing (its tools are the `mcp_tool` rows), an approval's answer,
    or the `mcp_call` that ran an approved request."""
    kind = item.get("type")
    if kind == "mcp_call":
        return bool(item.get("approval_request_id"))
    return kind in ("mcp_list_tools", "mcp_approval_response")


def is_connector(blocks: list[Any]) -> bool:
    """Whether an Anthropic message's blocks hold the MCP connector's."""
    kinds = ("mcp_tool_use", "mcp_tool_result")
    return any(isinstance(b, dict) and b.get("type") in kinds for b in blocks)


def anthropic_assistant(blocks: list[Any], notes: list[str], where: str) -> list[dict[str, Any]]:
    """An Anthropic assistant message holding MCP connector blocks, as Chat messages in
    block order: text and calls, each `mcp_tool_result` a `tool` message after them, the
    text after it a new assistant message. A hosted call whose result was not sent back is
    answered "no result recorded" (Chat needs an answer to every call). Thinking blocks
    are left out; other blocks too, with a note."""
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    pending: list[Any] = []  # the hosted calls of the open assistant message
    waiting: list[Any] = []  # those of the message last written, not answered yet

    def close() -> None:
        if texts or calls:
            settle()
            out.append(assistant("\n".join(texts), list(calls)))
            waiting.extend(pending)
            for held in (texts, calls, pending):
                held.clear()

    def settle() -> None:
        out.extend(answer(call_id, NO_RESULT) for call_id in waiting)
        waiting.clear()

    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind in ("tool_use", "mcp_tool_use"):
            args = compact(block.get("input"))
            calls.append(chat_call(block.get("id"), block.get("name"), args))
            if kind == "mcp_tool_use":
                pending.append(block.get("id"))
        elif kind == "mcp_tool_result":
            close()
            call_id = block.get("tool_use_id")
            content = block.get("content")
            text = content if isinstance(content, str) else _block_text(content)
            out.append(answer(call_id, ("error: " if block.get("is_error") is True else "") + text))
            if call_id in waiting:
                waiting.remove(call_id)
        elif kind not in ("thinking", "redacted_thinking"):
            notes.append(f"{where}: dropped a {kind} block")
    close()
    settle()
    return out


def _block_text(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text"
    )
