"""Structured output requests and replies as the grader sees them."""

from __future__ import annotations

import pytest

from toolproxy.wire.structured import (
    ANY_OBJECT,
    OUTPUT,
    OutputSpec,
    output_call,
    output_offer,
    output_spec,
)

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}}


@pytest.mark.parametrize(
    ("response_format", "text", "spec"),
    [
        ({"type": "json_schema", "json_schema": {"name": "n", "schema": SCHEMA, "strict": True}},
         None, OutputSpec("json_schema", SCHEMA, "n", True)),
        ({"type": "json_object"}, None, OutputSpec("json_object", ANY_OBJECT)),
        (None, {"format": {"type": "json_schema", "name": "r", "schema": SCHEMA}},
         OutputSpec("json_schema", SCHEMA, "r", None)),
        (None, {"format": {"type": "json_object"}}, OutputSpec("json_object", ANY_OBJECT)),
        ({"type": "json_schema", "json_schema": {"name": "no schema"}}, None,
         OutputSpec("json_schema", ANY_OBJECT, "no schema", None)),
        ({"type": "text"}, None, None),
        (None, {"format": {"type": "text"}}, None),
        (None, {"verbosity": "low"}, None),
        ("json", None, None),
        (None, None, None),
    ],
)  # fmt: skip
def test_what_a_request_asked_for(response_format, text, spec) -> None:
    assert output_spec(response_format, text) == spec


def test_the_reply_text_is_one_call_to_the_output() -> None:
    good = output_call('{"a": 1}')
    assert (good.name, good.arguments, good.parse_error) == (OUTPUT, {"a": 1}, None)
    bad = output_call('{"a": 1,}')
    assert bad.arguments is None and bad.parse_error and bad.arguments_raw == '{"a": 1,}'
    assert output_offer(OutputSpec("json_object", ANY_OBJECT)) == {
        "name": OUTPUT,
        "parameters": ANY_OBJECT,
    }


def test_the_output_cannot_be_a_real_tool_name() -> None:
    import re

    assert not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", OUTPUT)
