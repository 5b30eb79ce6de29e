"""toolproxy.grade.casecheck: the expectations schema, its fast check and jsonschema agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.grade.test_expectations import EXPECTED, FIXTURES
from toolproxy.grade.casecheck import SCHEMA_PATH, _validator, fast_valid
from toolproxy.grade.expectations import ExpectationError, case_to_dict, load_cases


def test_the_schema_is_valid_and_describes_whole_files():
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    validator = jsonschema.Draft202012Validator(schema)
    lines = (FIXTURES / "good.jsonl").read_text().splitlines()
    cases = [json.loads(line) for line in lines if line]
    assert validator.is_valid(cases) and validator.is_valid({"cases": cases})
    assert not validator.is_valid({"cases": cases, "extra": 1})
    regex_without_pattern = {"tool": "t", "args": {"x": {"match": "regex"}}}
    assert not validator.is_valid([{"id": "a", "calls": [regex_without_pattern]}])


# jsonschema-rs says valid-or-not first; jsonschema words the errors. They must agree.
_KEYS = ["id", "exchange_id", "messages", "tools", "expect", "order", "calls", "tags", "notes"]
_KEYS += ["tool", "args", "allow_extra_args", "match", "value", "values", "min", "max"]
_KEYS += ["tolerance", "pattern", "criterion", "optional", "city", "wire_format", "bogus"]
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.sampled_from(["", " ", "x", "call", "no_call", "ordered", "unordered", "exact", "any"]),
    st.sampled_from(["any_of", "enum", "range", "tolerance", "regex", "datetime", "unordered"]),
    st.sampled_from(["text", "judge", "get_weather", "2024-05-01T12:00:00Z", "openai_chat"]),
)
_DOCS = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner),
    max_leaves=12,
)
_VALID = case_to_dict(EXPECTED[0])


def _mutated(doc: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(doc))
    node = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        _DOCS,
        st.builds(
            _mutated,
            st.just(_VALID),
            st.sampled_from(
                [["id"], ["expect"], ["order"], ["calls"], ["calls", 0, "tool"], ["notes"]]
                + [["calls", 0, "args", "city"], ["calls", 0, "args", "unit"], ["tags"]]
                + [["calls", 0, "allow_extra_args"], ["calls", 0, "args", "unit", "values"]]
            ),
            _DOCS,
        ),
    )
)
def test_the_fast_check_agrees_with_jsonschema(doc: Any) -> None:
    for definition in ("case", "arg"):
        assert fast_valid(definition, doc) == _validator(definition).is_valid(doc), doc


def test_a_lone_surrogate_goes_to_jsonschema(tmp_path: Path) -> None:
    """jsonschema-rs cannot encode a lone surrogate it is handed as a string (the fuzz
    found a case that was just "\\ud800"): jsonschema answers instead."""
    assert not fast_valid("case", "\ud800")
    path = tmp_path / "cases.yaml"
    path.write_text('["\\uD800"]\n')
    with pytest.raises(ExpectationError, match="is not of type 'object'"):
        load_cases([path])
