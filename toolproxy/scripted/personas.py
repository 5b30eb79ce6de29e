"""Scripted models with a personality on a suite's tasks: what the scripted upstream plays
when a suite is replayed against it (`toolproxy upstream --suite NAME --personas`).

Every task gets one reply per personality, keyed by the personality's model name and the
task's last user message (a `by_prompt` script), so the tasks may come in any order:

- perfect   the task's reference calls (`suites.reference`), a short answer for no_call tasks
- leaky     the same calls, but written into the text as `<tool_call>` blocks (a server
            whose tool-call parser does not match the model): no_call, leaked as hermes
- sloppy    the reference calls with the first call's last argument dropped; a no_call
            task gets a call to its first tool
- silent    always a short answer, never a call
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolproxy.grade.model import Case
from toolproxy.scripted.script import Reply, Script, ScriptedCall, last_user_text
from toolproxy.suites.reference import reference_calls

PERSONAS = ("perfect", "leaky", "sloppy", "silent")
ANSWER = "Here is my answer."


def persona_script(cases: Sequence[Case], personas: Sequence[str] = PERSONAS) -> Script:
    """One by_prompt script playing every personality on every task of `cases`."""
    replies: dict[str, list[Reply]] = {}
    for case in cases:
        prompt = last_user_text({"messages": case.messages or []})
        for persona in personas:
            replies[f"{persona} | {prompt}"] = [persona_reply(case, persona)]
    return Script(replies=replies, by_prompt=True, deterministic=True)


def persona_reply(case: Case, persona: str) -> Reply:
    """What `persona` answers on `case`."""
    if persona not in PERSONAS:
        raise ValueError(f"no personality {persona!r}; known: {', '.join(PERSONAS)}")
    calls = reference_calls(case)
    if persona == "silent" or (not calls and persona != "sloppy"):
        return Reply(text=ANSWER)
    if persona == "perfect":
        return Reply(tool_calls=[_call(name, args, i) for i, (name, args) in enumerate(calls)])
    if persona == "leaky":
        blocks = [json.dumps({"name": n, "arguments": a}, ensure_ascii=False) for n, a in calls]
        return Reply(text="".join(f"<tool_call>{b}</tool_call>" for b in blocks))
    if not calls:  # sloppy
        return Reply(tool_calls=[_call(_first_tool(case), {}, 0)])
    name, args = calls[0]
    cut = dict(list(args.items())[:-1])
    rest = [_call(n, a, i) for i, (n, a) in enumerate(calls[1:], start=1)]
    return Reply(tool_calls=[_call(name, cut, 0), *rest])


def _call(name: str, args: dict[str, Any], index: int) -> ScriptedCall:
    return ScriptedCall(name=name, arguments=args, id=f"call_{index}")


def _first_tool(case: Case) -> str:
    for tool in case.tools or []:
        spec = tool.get("function", tool) if isinstance(tool, dict) else {}
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            return str(spec["name"])
    return "unknown_tool"
