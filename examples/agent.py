"""An example agent: the `openai` SDK in a loop whose tools are a real MCP server's.

It runs `toolproxy demo`'s six tasks ("What time is it in Tokyo?", a conversion, a greeting
that needs no tool, ...) with the tools of `mcp-server-time` (started here, over stdio):
each call the model makes is executed on the server and its result sent back, until the
model answers. Point it at `toolproxy record` and every turn is captured, one session per
task (the `x-toolproxy-session` header names it):

    .venv/bin/python examples/agent.py --base-url http://127.0.0.1:8080/v1 [--model NAME]

It waits (up to --wait seconds) for the endpoint to listen, so it can start right after
the proxy. Your own agent needs none of this: only its base URL changes.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import time
from urllib.parse import urlsplit

from toolproxy.cli.demoloop import TASKS, run_agent, time_server


def wait_for(base_url: str, seconds: float) -> bool:
    """Whether something listens at the URL's host and port within `seconds`."""
    parts = urlsplit(base_url)
    default_port = 443 if parts.scheme == "https" else 80
    address = (parts.hostname or "127.0.0.1", parts.port or default_port)
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(address, timeout=1).close()
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True, help="OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--model", default="gpt-4o-mini", help="model to ask for")
    parser.add_argument("--wait", type=float, default=30, help="seconds to wait for it")
    args = parser.parse_args()
    if not wait_for(args.base_url, args.wait):
        print(f"agent: nothing listens at {args.base_url} after {args.wait:g} s", file=sys.stderr)
        return 2
    logs = asyncio.run(run_agent(args.base_url, args.model, time_server()))
    for task in TASKS:
        print(f"{task.id}: {task.prompt}")
        for line in logs.get(task.id) or ["(nothing)"]:
            print(f"    {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
