"""The schema stage: each jsonschema error's label and the buckets of the arguments it hits."""

from __future__ import annotations

from typing import Any

import pytest

from toolproxy.grade.schemastage import Flagged, check_schema
from toolproxy.schema.compiling import compile_schema


def run(
    schema: dict[str, Any], args: dict[str, Any]
) -> tuple[list[str], dict[str, str], list[str]]:
    flagged: Flagged = {}
    notes: list[str] = []
    validator = compile_schema(schema).validator
    labels = check_schema(validator, args, flagged, notes)
    return list(labels), {k: g.bucket for k, (_, g) in flagged.items()}, notes


OBJ = {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}


@pytest.mark.parametrize(
    ("args", "label", "bucket"),
    [
        ({"n": "5"}, "type_coercion", "malformed"),
        ({"n": "five"}, "schema_violation", "malformed"),
        ({"n": 2.0}, None, None),  # 2.0 is an integer in JSON Schema
        ({"n": 2.5}, "schema_violation", "malformed"),
        ({"n": True}, "schema_violation", "malformed"),  # true -> "true" is no integer
        ({"s": 1}, "type_coercion", "malformed"),
        ({"s": None}, "schema_violation", "malformed"),
    ],
)
def test_type_errors(args, label, bucket):
    labels, buckets, _ = run(OBJ, args)
    assert labels == ([label] if label else [])
    assert buckets == ({next(iter(args)): bucket} if bucket else {})


def test_boolean_strings_coerce():
    schema = {"type": "object", "properties": {"b": {"type": ["boolean", "null"]}}}
    assert run(schema, {"b": "true"})[0] == ["type_coercion"]


def test_required_names_each_missing_argument():
    labels, buckets, notes = run({"type": "object", "required": ["a", "b", "c"]}, {"b": 1})
    assert labels == ["missing_required", "missing_required"]  # jsonschema: one per name
    assert buckets == {"a": "missing", "c": "missing"}
    assert notes[0].startswith("$: ")


def test_invented_names_are_hallucinated():
    schema = {
        "type": "object",
        "properties": {"a": {}},
        "patternProperties": {"^x-": {}},
        "additionalProperties": False,
    }
    labels, buckets, _ = run(schema, {"a": 1, "x-trace": 1, "verbose": True, "debug": 1})
    assert labels == ["hallucinated_param"]
    assert buckets == {"verbose": "hallucinated", "debug": "hallucinated"}


def test_unevaluated_properties_are_hallucinated():
    schema = {
        "type": "object",
        "allOf": [{"properties": {"a": {}}}],
        "unevaluatedProperties": False,
    }
    labels, buckets, _ = run(schema, {"a": 1, "extra": 2})
    assert labels == ["hallucinated_param"] and buckets == {"extra": "hallucinated"}


@pytest.mark.parametrize(
    ("prop", "value", "bucket"),
    [
        ({"enum": ["a", "b"]}, "c", "hallucinated"),
        ({"const": 1}, 2, "hallucinated"),
        ({"type": "integer", "maximum": 10}, 11, "hallucinated"),
        ({"type": "integer", "exclusiveMinimum": 0}, 0, "hallucinated"),
        ({"type": "integer", "multipleOf": 5}, 7, "hallucinated"),
        ({"type": "string", "pattern": "^[a-z]+$"}, "ABC", "malformed"),
        ({"type": "string", "minLength": 3}, "ab", "malformed"),
        ({"type": "string", "format": "date-time"}, "tomorrow", "malformed"),
        ({"type": "array", "maxItems": 1}, [1, 2], "malformed"),
    ],
)
def test_other_errors_are_schema_violations(prop, value, bucket):
    labels, buckets, _ = run({"type": "object", "properties": {"v": prop}}, {"v": value})
    assert labels == ["schema_violation"] and buckets == {"v": bucket}


def test_any_of_takes_the_coercion_or_the_shared_label():
    number_or_null = {
        "type": "object",
        "properties": {"v": {"anyOf": [{"type": "number"}, {"type": "null"}]}},
    }
    assert run(number_or_null, {"v": "2"})[0] == ["type_coercion"]
    assert run(number_or_null, {"v": "two"})[0] == ["schema_violation"]
    either = {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}
    labels, buckets, _ = run(either, {})
    assert labels == ["missing_required"] and buckets == {"a": "missing"}
    both = {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}
    assert run(both, {"a": 1, "b": 2})[0] == ["schema_violation"]  # matched both: no context


def test_a_false_schema_and_a_non_object_schema():
    assert run({"type": "object", "properties": {"x": False}}, {"x": 1})[0] == ["schema_violation"]
    labels, buckets, _ = run({"type": "array"}, {})
    assert labels == ["schema_violation"] and buckets == {"(arguments)": "malformed"}


def test_earliest_label_wins_per_argument():
    schema = {"type": "object", "properties": {"v": {"type": "integer", "enum": [1, 2]}}}
    labels, buckets, _ = run(schema, {"v": "1"})
    assert sorted(labels) == ["schema_violation", "type_coercion"]
    assert buckets == {"v": "malformed"}


def test_a_schema_failing_mid_validation_is_a_note():
    flagged: Flagged = {}
    notes: list[str] = []

    class Broken:
        def iter_errors(self, _: Any):
            raise RecursionError("too deep")

    assert check_schema(Broken(), {}, flagged, notes) == []
    assert notes == ["schema not checked: RecursionError: too deep"]
