"""`toolproxy demo`: a complete capture on embedded defaults, no provider account needed.

It starts the scripted upstream, puts a real `mitmdump` with the toolproxy addon in front,
runs a small tool-using agent through it with the real `openai` SDK (Chat Completions and
Responses, streamed and not) and plain HTTP for Anthropic Messages, then prints what the
capture holds.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import openai

from toolproxy import store
from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port
from toolproxy.errors import UserError
from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream
from toolproxy.store.queries import exchanges
from toolproxy.util.table import format_table

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
TIME_TOOL = {
    "name": "get_time",
    "description": "Current time in an IANA timezone.",
    "parameters": {
        "type": "object",
        "properties": {"timezone": {"type": "string"}},
        "required": ["timezone"],
    },
}
CHAT_TOOLS = [{"type": "function", "function": t} for t in (WEATHER_TOOL, TIME_TOOL)]
RESPONSES_TOOLS = [{"type": "function", **t} for t in (WEATHER_TOOL, TIME_TOOL)]
ANTHROPIC_TOOLS = [
    {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
    for t in (WEATHER_TOOL, TIME_TOOL)
]
DEMO_KEY = "sk-demo-never-stored-0123456789"


def demo_script() -> Script:
    """The scripted model: a tool call, then an answer; one parallel pair; one bad call."""
    paris = ScriptedCall(name="get_weather", arguments={"city": "Paris", "unit": "celsius"})
    return Script(
        replies={
            "demo-chat": [Reply(tool_calls=[paris]), Reply(text="It is 18 °C in Paris.")],
            "demo-parallel": [
                Reply(
                    tool_calls=[
                        ScriptedCall(name="get_weather", arguments={"city": "Tokyo"}),
                        ScriptedCall(name="get_time", arguments={"timezone": "Asia/Tokyo"}),
                    ]
                ),
                Reply(text="Tokyo: 22 °C, 09:00."),
            ],
            "demo-broken": [
                Reply(tool_calls=[ScriptedCall(name="get_weather", arguments='{"city": "Par')])
            ],
            "demo-responses": [Reply(tool_calls=[paris]), Reply(text="18 °C.")],
            "demo-anthropic": [Reply(tool_calls=[paris]), Reply(text="18 °C in Paris.")],
        },
    )


def run_tool(name: str, arguments: dict[str, Any]) -> str:
    """The demo agent's tools: fixed answers, so the run is reproducible."""
    if name == "get_weather":
        return json.dumps({"city": arguments.get("city"), "temperature_c": 18})
    return json.dumps({"timezone": arguments.get("timezone"), "time": "09:00"})


def chat_agent(client: openai.OpenAI, model: str, question: str, stream: bool) -> None:
    """A minimal Chat Completions agent loop: call tools until the model answers."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    # Typed as Any: plain dicts stand in for the SDK's TypedDict params in this demo agent.
    completions: Any = client.chat.completions
    for _ in range(3):
        if stream:
            calls: dict[int, dict[str, Any]] = {}
            text = ""
            with completions.create(
                model=model,
                messages=messages,
                tools=CHAT_TOOLS,
                stream=True,
                stream_options={"include_usage": True},
            ) as events:
                for chunk in events:
                    for choice in chunk.choices:
                        text += choice.delta.content or ""
                        for d in choice.delta.tool_calls or []:
                            c = calls.setdefault(d.index, {"id": d.id, "name": "", "args": ""})
                            c["name"] += (d.function and d.function.name) or ""
                            c["args"] += (d.function and d.function.arguments) or ""
            tool_calls = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["args"]},
                }
                for _, c in sorted(calls.items())
            ]
        else:
            msg = (
                completions.create(model=model, messages=messages, tools=CHAT_TOOLS)
                .choices[0]
                .message
            )
            text = msg.content or ""
            tool_calls = [tc.model_dump() for tc in msg.tool_calls or []]
        if not tool_calls:
            return
        messages.append({"role": "assistant", "content": text or None, "tool_calls": tool_calls})
        for tc in tool_calls:
            try:
                args = json.loads(tc["function"]["arguments"])
            except ValueError as exc:
                content = f"error: arguments are not valid JSON ({exc})"
            else:
                content = run_tool(tc["function"]["name"], args)
            messages.append({"role": "tool", "tool_call_id": tc["id"], "content": content})
        if model == "demo-broken":
            return


def responses_agent(client: openai.OpenAI) -> None:
    """The same loop on the Responses API, chaining with previous_response_id."""
    responses: Any = client.responses
    first = responses.create(
        model="demo-responses", input="Weather in Paris?", tools=RESPONSES_TOOLS
    )
    outputs = [
        {
            "type": "function_call_output",
            "call_id": item.call_id,
            "output": run_tool(item.name, json.loads(item.arguments)),
        }
        for item in first.output
        if item.type == "function_call"
    ]
    responses.create(
        model="demo-responses",
        input=outputs,
        tools=RESPONSES_TOOLS,
        previous_response_id=first.id,
    )


def anthropic_agent(base_url: str) -> None:
    """Anthropic Messages over plain HTTP (streamed), sending the tool result back."""
    headers = {"x-api-key": DEMO_KEY, "anthropic-version": "2023-06-01"}
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris?"}]
    body = {"model": "demo-anthropic", "max_tokens": 256, "tools": ANTHROPIC_TOOLS}
    with httpx.Client(base_url=base_url, headers=headers, timeout=30) as http:
        reply = http.post("/v1/messages", json={**body, "messages": messages}).json()
        messages.append({"role": "assistant", "content": reply["content"]})
        results = [
            {
                "type": "tool_result",
                "tool_use_id": b["id"],
                "content": run_tool(b["name"], b["input"]),
            }
            for b in reply["content"]
            if b["type"] == "tool_use"
        ]
        messages.append({"role": "user", "content": results})
        with http.stream(
            "POST", "/v1/messages", json={**body, "messages": messages, "stream": True}
        ) as r:
            for _ in r.iter_bytes():
                pass


def run_agents(proxy_url: str) -> None:
    """Every demo conversation, through the proxy at `proxy_url`."""
    client = openai.OpenAI(base_url=f"{proxy_url}/v1", api_key=DEMO_KEY, max_retries=0)
    chat_agent(client, "demo-chat", "Weather in Paris?", stream=False)
    chat_agent(client, "demo-parallel", "Weather and time in Tokyo?", stream=True)
    chat_agent(client, "demo-broken", "Weather in Paris?", stream=False)
    responses_agent(client)
    anthropic_agent(proxy_url)


DEMO_MARK = ".toolproxy-demo"


def fresh_capture(capture: Path) -> None:
    """Make `capture` an empty directory marked as a demo's. Only an earlier demo's capture
    (or an empty directory) is replaced: a demo never deletes what it did not write."""
    if capture.exists():
        if not capture.is_dir():
            raise UserError(f"{capture} is a file: the demo writes a capture directory there")
        if any(capture.iterdir()) and not (capture / DEMO_MARK).is_file():
            raise UserError(
                f"{capture} exists and is not an earlier demo's capture: the demo starts "
                "afresh and will not delete it; choose another --capture"
            )
        shutil.rmtree(capture)
    capture.mkdir(parents=True)
    (capture / DEMO_MARK).write_text("written by `toolproxy demo`: the next demo replaces it\n")


def run_demo(capture: Path, out: Callable[[str], None] = print) -> int:
    """Run the demo into a fresh `capture` directory and print a summary."""
    fresh_capture(capture)
    with ScriptedUpstream(demo_script()) as upstream:
        spec = ProxySpec(capture=capture, upstream=upstream.url, port=free_port())
        out(f"scripted upstream {upstream.url}  <-  mitmdump + toolproxy {spec.host}:{spec.port}")
        with RunningProxy(spec) as proxy:
            run_agents(proxy.url)
    stats = store.compact(capture)
    out(f"capture: {capture}  ({stats.summary()})\n")
    out("sessions:")
    out(format_table(*store.list_sessions(capture, 20)))
    out("\ntool calls:")
    with store.reading(capture) as r:
        out(format_table(*exchanges.call_listing(r)))
    out(f'\ntry: toolproxy sql --capture {capture} "SELECT * FROM sessions"')
    out(f"browse it: toolproxy tui {capture}")
    return 0
