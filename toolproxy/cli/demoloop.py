"""`toolproxy demo`: the whole loop on embedded defaults, with a real model, offline.

1. a real MCP server (`mcp-server-time` from PyPI) starts and its tool schemas are pulled
   into the capture;
2. a real local model (SmolLM2-135M-Instruct through llama.cpp: `toolproxy.localmodel`)
   starts as an OpenAI-compatible endpoint; without the `model` extra the scripted upstream
   plays a model that gets every task right, and the demo says so;
3. an agent (the real `openai` SDK) runs the shipped tasks through mitmdump + toolproxy:
   each call the model makes is executed on the MCP server and its result sent back;
4. the captured turns are graded against the shipped expectations (written into the
   capture as an expectations file, the documented format), and the labels printed;
5. it ends by saying where everything is and how to open the TUI on it.

The tiny model is bad at tool calling (it copies "UTC" from the schema's description
more often than not): that is the point, the grades say so honestly.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai

from toolproxy import store
from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port
from toolproxy.cli.demo import fresh_capture
from toolproxy.grade.expectations import dump_cases
from toolproxy.grade.model import Case, ExpectedCall, Matcher
from toolproxy.grade.runner import grade_run, summarize
from toolproxy.mcp import client as mcpclient
from toolproxy.mcp.config import ServerSpec
from toolproxy.mcp.pull import run_pull
from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream
from toolproxy.store.queries import exchanges
from toolproxy.util.table import format_table

MCP_TIMEOUT_S = 30.0
MAX_STEPS = 3  # model turns per task: a call, its result, an answer
SESSION_HEADER = "x-toolproxy-session"
DEMO_KEY = "sk-demo-never-stored-0123456789"


@dataclass(frozen=True)
class Task:
    """A shipped task: what the user asks, and the call a good agent makes for it."""

    id: str
    prompt: str
    tool: str | None  # None: no tool should be called
    args: dict[str, str]


TASKS = (
    Task("tokyo-now", "What time is it in Tokyo?", "get_current_time",
         {"timezone": "Asia/Tokyo"}),
    Task("london-now", "What is the current time in Europe/London?", "get_current_time",
         {"timezone": "Europe/London"}),
    Task("kolkata-now", "What time is it now in Asia/Kolkata?", "get_current_time",
         {"timezone": "Asia/Kolkata"}),
    Task("ny-to-paris", "Convert 09:30 from America/New_York to Europe/Paris.", "convert_time",
         {"source_timezone": "America/New_York", "time": "09:30",
          "target_timezone": "Europe/Paris"}),
    Task("berlin-to-tokyo", "If it is 14:00 in Europe/Berlin, what time is it in Asia/Tokyo?",
         "convert_time", {"source_timezone": "Europe/Berlin", "time": "14:00",
                          "target_timezone": "Asia/Tokyo"}),
    Task("greeting", "Say hello to the team in one short sentence.", None, {}),
)  # fmt: skip


def one_line(text: str, width: int) -> str:
    """`text` with its whitespace runs as single spaces, cut to `width` ("…" when cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def time_server() -> ServerSpec:
    """mcp-server-time from this environment, on UTC as its local zone."""
    argv = ("-m", "mcp_server_time", "--local-timezone", "Etc/UTC")
    return ServerSpec("time", "stdio", "toolproxy demo", command=sys.executable, args=argv)


def openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """MCP tools as Chat Completions function tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description") or "",
                "parameters": t.get("inputSchema") or {"type": "object"},
            },
        }
        for t in tools
    ]


def scripted_model() -> Script:
    """What the scripted upstream plays without the local model: every task done right."""
    replies: list[Reply] = []
    for n, task in enumerate(TASKS):
        if task.tool is None:
            replies.append(Reply(text="Hello, team!"))
            continue
        call = ScriptedCall(name=task.tool, arguments=task.args, id=f"call-{n}")
        replies += [Reply(tool_calls=[call]), Reply(text="Done: see the tool's answer.")]
    return Script(replies={"scripted-strong": replies})


@contextmanager
def model_endpoint(scripted: bool, out: Callable[[str], None]) -> Iterator[tuple[str, str, bool]]:
    """(upstream base URL without /v1, model name, whether it is the local model): the local
    model, else the scripted one."""
    from toolproxy.localmodel.process import LocalModel
    from toolproxy.localmodel.weights import missing

    why = "asked for (--scripted)" if scripted else missing()
    if why is None:
        out("starting the local model (SmolLM2-135M-Instruct, llama.cpp) …")
        with LocalModel() as model:
            out(f"local model {model.name} at {model.url}")
            yield model.base, model.name, True
        return
    out(f"the local model is not used: {why}")
    out("the scripted upstream plays a model that gets every task right instead")
    with ScriptedUpstream(scripted_model()) as upstream:
        yield upstream.url, "scripted-strong", False


async def run_task(
    client: openai.AsyncOpenAI,
    session: mcpclient.Session,
    model: str,
    tools: list[dict[str, Any]],
    task: Task,
) -> list[str]:
    """One task through the proxy: the model's calls run on the MCP server, results go back
    to it; what happened, one line per step."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": task.prompt}]
    log: list[str] = []
    completions: Any = client.chat.completions  # plain dicts stand in for the SDK's types
    for _ in range(MAX_STEPS):
        reply = await completions.create(
            model=model,
            messages=messages,
            tools=tools,
            temperature=0,
            max_tokens=200,
            extra_headers={SESSION_HEADER: f"demo-{task.id}"},
        )
        message = reply.choices[0].message
        calls = [c.model_dump() for c in message.tool_calls or []]
        if not calls:
            log.append(f"answer: {one_line(message.content or '', 70)}")
            return log
        messages.append({"role": "assistant", "content": message.content, "tool_calls": calls})
        for call in calls:
            name, raw = call["function"]["name"], call["function"]["arguments"]
            try:
                outcome = await session.call(name, json.loads(raw or "{}"))
            except ValueError as exc:
                content = f"error: arguments are not JSON ({exc})"
            else:
                content = outcome[0] if isinstance(outcome, tuple) else f"error: {outcome.message}"
            log.append(f"call {name}({one_line(raw, 90)}) -> {one_line(content, 50)}")
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    return log


async def run_agent(base_url: str, model: str, spec: ServerSpec) -> dict[str, list[str]]:
    """Every task, in order, on one MCP session, against the OpenAI-compatible `base_url`
    (…/v1; examples/agent.py runs this against any endpoint)."""
    session = mcpclient.Session(spec, MCP_TIMEOUT_S)
    with mcpclient.quiet_sdk_logs():
        failure = await session.start()
        if failure is not None or session.listing is None:
            raise RuntimeError(f"the MCP time server did not start: {failure}")
        tools = openai_tools(session.listing.tools)
        client = openai.AsyncOpenAI(base_url=base_url, api_key=DEMO_KEY, max_retries=0)
        try:
            return {t.id: await run_task(client, session, model, tools, t) for t in TASKS}
        finally:
            await client.close()
            await session.close()


def demo_cases(capture: Path) -> list[Case]:
    """The shipped expectations, each bound to the first turn of its task's session."""
    with store.reading(capture) as r:
        first: dict[str, str] = {}
        for x in exchanges.exchanges(r, limit=10_000).items:
            if x.session_id and x.session_id not in first:
                first[x.session_id] = x.exchange_id
    cases = []
    for task in TASKS:
        exchange = first.get(f"demo-{task.id}")
        if exchange is None:
            continue
        calls = (
            [ExpectedCall(tool=task.tool, args={k: Matcher(value=v) for k, v in task.args.items()})]
            if task.tool
            else []
        )
        cases.append(
            Case(
                id=task.id,
                exchange_id=exchange,
                expect="call" if task.tool else "no_call",
                calls=calls,
                notes=task.prompt,
            )
        )
    return cases


def run_demo(capture: Path, scripted: bool = False, out: Callable[[str], None] = print) -> int:
    """The whole loop into a fresh `capture` directory (see the module doc)."""
    fresh_capture(capture)
    spec = time_server()
    out("pulling the tool schemas of mcp-server-time …")
    _, _, results = run_pull([spec], capture, capture / "schemas", MCP_TIMEOUT_S)
    if results[0].status != "ok":
        out(f"toolproxy demo: the MCP time server failed: {results[0].error}")
        return 1
    out(f"mcp-server-time: {results[0].tools} tools pulled into {capture}")
    cases_file = capture / "expectations.yaml"
    with model_endpoint(scripted, out) as (upstream, model, local):
        proxy_spec = ProxySpec(capture=capture, upstream=upstream, port=free_port())
        with RunningProxy(proxy_spec) as proxy:
            out(f"mitmdump + toolproxy at {proxy.url}  ->  {upstream}")
            out(f"running {len(TASKS)} tasks through the proxy (calls run on the MCP server) …")
            logs = asyncio.run(run_agent(f"{proxy.url}/v1", model, spec))
        for task in TASKS:
            out(f"  {task.id}: {task.prompt}")
            for line in logs.get(task.id) or ["(nothing)"]:
                out(f"      {line}")
        store.compact(capture)
        run = grade(capture, cases_file, model, out)
        replayed = ""
        if local:
            replayed = replay(capture, cases_file, f"{upstream}/v1", model, out)
        else:
            out("\n(the replay against a second candidate needs the local model: skipped)")
    out(f"\ncapture: {capture}")
    out(f"report:  toolproxy report -c {capture}")
    if replayed:
        out(f"diffs:   toolproxy replay-diff {replayed} -c {capture} --changed")
    out(f"browse:  toolproxy tui {capture} --run {run} --cases {cases_file}")
    return 0


def grade(capture: Path, cases_file: Path, model: str, out: Callable[[str], None]) -> str:
    """Grade the captured tasks against the shipped expectations (written to `cases_file`,
    the documented format) as run `demo-<model>`; print each case's outcome; the run."""
    cases = demo_cases(capture)
    dump_cases(cases, cases_file, header="the demo's shipped expectations (toolproxy demo)")
    run = f"demo-{model}"
    rows = grade_run(capture, cases, run, None)
    summary = summarize(rows)
    out(f"\ngrades (run {run}, expectations {cases_file}):")
    table = [
        [r.case_id, "passed" if r.passed else (r.label or "not graded"), r.reason or ""]
        for r in rows
    ]
    out(format_table(["case", "outcome", "why"], table, width=100))
    out(summary_line(summary))
    return run


def summary_line(summary: dict[str, Any]) -> str:
    """The demo's last grading line, e.g. `3 of 6 passed; wrong_tool 2, no_call 1`: the
    labels only when some case failed."""
    line = f"{summary['passed']} of {summary['cases']} passed"
    failed = ", ".join(f"{label} {n}" for label, n in summary["by_label"].items())
    return f"{line}; {failed}" if failed else line


REPLAY_RUN = "demo-replay"
WARM = "smollm2-warm"  # the second candidate: the same model, sampled at temperature 0.8


def replay(
    capture: Path, cases_file: Path, url: str, model: str, out: Callable[[str], None]
) -> str:
    """Replay the graded turns against a second candidate (the same local model with other
    settings) and print the report comparing it with what was recorded; the replay run."""
    from toolproxy.cli.main import main as toolproxy

    config = capture / "replay.yaml"
    config.write_text(
        "# the demo's replay: the local model again, sampled warmer\n"
        "repeats: 1\nfeedback_retries: 0\nstream: never\ncandidates:\n"
        f"  - name: {WARM}\n    base_url: {url}\n    model: {model}\n"
        "    params: {temperature: 0.8, seed: 7}\n    concurrency: 1\n    timeout_s: 120\n",
        encoding="utf-8",
    )
    out(f"\nreplaying the graded turns against {WARM} (same model, temperature 0.8) …")
    argv = ["replay", str(config), "-c", str(capture), "--run", REPLAY_RUN]
    argv += ["--cases", str(cases_file), "--per", "exchange", "--no-progress"]
    if toolproxy(argv) != 0:
        out("the replay failed (see above); the capture and its grades are kept")
        return ""
    recorded, warm = f"{REPLAY_RUN}:recorded", f"{REPLAY_RUN}:{WARM}"
    out(f"\nthe report, {warm} against what was recorded ({recorded}):")
    toolproxy(["report", "-c", str(capture), "-r", recorded, "-r", warm, "--baseline", recorded])
    return REPLAY_RUN
