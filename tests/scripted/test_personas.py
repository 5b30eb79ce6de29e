"""The scripted personalities on a suite's tasks: what each one answers."""

from __future__ import annotations

import json

import pytest

from toolproxy.grade.expectations import load_cases
from toolproxy.scripted.personas import ANSWER, PERSONAS, persona_reply, persona_script
from toolproxy.suites import suite_path
from toolproxy.suites.reference import reference_calls

CASES = {c.id: c for c in load_cases([suite_path("conformance")])}
PARALLEL, NONE = CASES["parallel-two-tools"], CASES["none-greeting"]


def test_perfect_plays_the_reference_calls() -> None:
    reply = persona_reply(PARALLEL, "perfect")
    assert [(c.name, c.arguments) for c in reply.tool_calls] == reference_calls(PARALLEL)
    assert persona_reply(NONE, "perfect").text == ANSWER


def test_leaky_writes_the_calls_into_the_text() -> None:
    reply = persona_reply(PARALLEL, "leaky")
    assert not reply.tool_calls
    blocks = reply.text.removeprefix("<tool_call>").removesuffix("</tool_call>")
    calls = [json.loads(b) for b in blocks.split("</tool_call><tool_call>")]
    assert [(c["name"], c["arguments"]) for c in calls] == reference_calls(PARALLEL)


def test_sloppy_drops_an_argument_and_calls_on_a_control() -> None:
    (name, args), *rest = reference_calls(CASES["single-ticket"])
    reply = persona_reply(CASES["single-ticket"], "sloppy")
    assert reply.tool_calls[0].name == name
    assert reply.tool_calls[0].arguments == dict(list(args.items())[:-1])
    assert [c.name for c in persona_reply(NONE, "sloppy").tool_calls] == ["get_weather"]


def test_silent_never_calls() -> None:
    assert all(persona_reply(c, "silent").text == ANSWER for c in CASES.values())
    assert not any(persona_reply(c, "silent").tool_calls for c in CASES.values())


def test_the_script_has_one_reply_per_personality_and_task() -> None:
    script = persona_script(list(CASES.values()))
    assert script.by_prompt and len(script.replies) == len(PERSONAS) * len(CASES)
    assert "perfect | What's the weather in Paris right now?" in script.replies
    with pytest.raises(ValueError, match="no personality 'grumpy'"):
        persona_reply(NONE, "grumpy")
