"""The shipped conformance suite: its shape, and that every task is gradable as written
(its reference calls pass its own tool schemas and its own expectation)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from toolproxy.errors import UserError
from toolproxy.grade.checker import grade_case
from toolproxy.grade.expectations import load_cases
from toolproxy.grade.model import Observation, ToolCall
from toolproxy.schema.validator import check_value
from toolproxy.scripted.script import last_user_text
from toolproxy.suites import SUITES, suite_path
from toolproxy.suites.reference import reference_calls

FAMILIES = {
    "single_call", "parallel_calls", "nested_objects", "arrays_of_objects", "enums",
    "optional_nested", "unions", "refs_defs", "unicode_strings", "large_numbers",
    "timestamps_timezones", "long_tool_list", "multi_turn", "no_call",
}  # fmt: skip
CASES = load_cases([suite_path("conformance")])


def schema_of(case, name):
    for tool in case.tools:
        if tool["function"]["name"] == name:
            return tool["function"]["parameters"]
    raise AssertionError(f"{case.id}: {name} is not offered")


def test_the_suite_has_40_to_60_tasks_in_every_family() -> None:
    assert 40 <= len(CASES) <= 60
    families = Counter(t for c in CASES for t in c.tags)
    assert set(families) == FAMILIES
    assert min(families.values()) >= 3
    assert all(len(c.tags) == 1 for c in CASES)  # one family each


def test_each_task_carries_its_conversation_with_a_unique_prompt() -> None:
    prompts = [last_user_text({"messages": c.messages}) for c in CASES]
    assert all(c.messages and c.tools and c.wire_format == "openai_chat" for c in CASES)
    assert len(set(prompts)) == len(prompts)  # the personas' scripts key on it


def test_the_shapes_the_issue_names_are_there() -> None:
    by_id = {c.id: c for c in CASES}
    assert len(by_id["long-list-stock"].tools) >= 30
    assert any(c.order == "unordered" and len(c.calls) >= 3 for c in CASES)
    multi = [c for c in CASES if "multi_turn" in c.tags]
    assert all(m.messages[-1]["role"] == "tool" for m in multi)  # the result comes first
    texts = " ".join(str(c.tools) for c in CASES)
    for keyword in ("anyOf", "oneOf", "$ref", "$defs", "date-time", "enum"):
        assert keyword in texts
    numbers = [a for c in CASES for _, args in reference_calls(c) for a in args.values()]
    assert 9223372036854775807 in numbers


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_every_reference_call_fits_its_tool_and_passes_its_task(case) -> None:
    calls = reference_calls(case)
    assert bool(calls) == (case.expect == "call")
    for name, args in calls:
        check = check_value(args, schema_of(case, name))
        assert check.valid, f"{case.id}: {name}: {check}"
    observation = Observation(
        exchange_id="x",
        calls=[
            ToolCall(index=i, call_id=f"c{i}", name=n, arguments_raw="{}", arguments=a)
            for i, (n, a) in enumerate(calls)
        ],
        offered=[t["function"] for t in case.tools],
        text=None if calls else "An answer.",
    )
    grade = grade_case(case, observation)
    assert grade.passed, (case.id, grade.label, [c.errors for c in grade.calls])


def test_a_suite_is_named_or_a_file(tmp_path: Path) -> None:
    assert suite_path("conformance").name == SUITES["conformance"]
    mine = tmp_path / "mine.yaml"
    mine.write_text("[]")
    assert suite_path(str(mine)) == mine
    with pytest.raises(UserError, match="no suite 'nope': name a shipped one \\(conformance\\)"):
        suite_path("nope")
