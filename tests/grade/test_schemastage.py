"""The schema stage: each jsonschema error's label and the buckets of the arguments it hits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from toolproxy.grade.schemastage import Flagged, check_schema
from toolproxy.schema.compiling import compile_schema

Run = Callable[[dict[str, Any], dict[str, Any]], tuple[list[str], dict[str, str], list[str]]]


@pytest.fixture(params=["jsonschema", "compiled"])
def run(request: pytest.FixtureRequest) -> Run:
    """The stage over jsonschema's own errors, and over what the grader hands it: the
    compiled schema's (`QuickError`s on the quick path, jsonschema's elsewhere)."""

    def stage(
        schema: dict[str, Any], args: dict[str, Any]
    ) -> tuple[list[str], dict[str, str], list[str]]:
        flagged: Flagged = {}
        notes: list[str] = []
        compiled = compile_schema(schema)
        validator = compiled.validator if request.param == "jsonschema" else compiled
        labels = check_schema(validator, args, flagged, notes)
        return list(labels), {k: g.bucket for k, (_, g) in flagged.items()}, notes

    return stage


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
def test_type_errors(run, args, label, bucket):
    labels, buckets, _ = run(OBJ, args)
    assert labels == ([label] if label else [])
    assert buckets == ({next(iter(args)): bucket} if bucket else {})


def test_boolean_strings_coerce(run):
    schema = {"type": "object", "properties": {"b": {"type": ["boolean", "null"]}}}
    assert run(schema, {"b": "true"})[0] == ["type_coercion"]


def test_required_names_each_missing_argument(run):
    labels, buckets, notes = run({"type": "object", "required": ["a", "b", "c"]}, {"b": 1})
    assert labels == ["missing_required", "missing_required"]  # jsonschema: one per name
    assert buckets == {"a": "missing", "c": "missing"}
    assert notes[0].startswith("$: ")


def test_invented_names_are_hallucinated(run):
    schema = {
        "type": "object",
        "properties": {"a": {}},
        "patternProperties": {"^x-": {}},
        "additionalProperties": False,
    }
    labels, buckets, _ = run(schema, {"a": 1, "x-trace": 1, "verbose": True, "debug": 1})
    assert labels == ["hallucinated_param"]
    assert buckets == {"verbose": "hallucinated", "debug": "hallucinated"}


def test_unevaluated_properties_are_hallucinated(run):
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
def test_other_errors_are_schema_violations(run, prop, value, bucket):
    labels, buckets, _ = run({"type": "object", "properties": {"v": prop}}, {"v": value})
    assert labels == ["schema_violation"] and buckets == {"v": bucket}


def test_any_of_takes_the_coercion_or_the_shared_label(run):
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


def test_a_false_schema_and_a_non_object_schema(run):
    assert run({"type": "object", "properties": {"x": False}}, {"x": 1})[0] == ["schema_violation"]
    labels, buckets, _ = run({"type": "array"}, {})
    assert labels == ["schema_violation"] and buckets == {"(arguments)": "malformed"}


def test_a_false_alternative_of_any_of(run):
    """jsonschema gives a false schema's error no schema path (its quirk), inside an
    anyOf's context too: such alternatives are read as one, not as a crash."""
    labels, buckets, notes = run({"anyOf": [False]}, {})
    assert labels == ["schema_violation"] and buckets == {"(arguments)": "malformed"}
    assert notes == ["$: {} is not valid under any of the given schemas"]
    both = {"properties": {"v": {"anyOf": [False, {"type": "number"}, False]}}}
    assert run(both, {"v": "2"})[0] == ["type_coercion"]


def test_earliest_label_wins_per_argument(run):
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


@pytest.mark.parametrize(
    ("schema", "args"),
    [
        (OBJ, {"n": "5", "s": 1}),
        ({"type": "object", "required": ["a", "b"], "additionalProperties": False}, {"c": 1}),
        ({"type": "object", "properties": {"v": {"anyOf": [{"type": "number"}, {}]}}}, {"v": 1}),
        (
            {"type": "object", "properties": {"v": {"anyOf": [{"type": "number"}, {"enum": [1]}]}}},
            {"v": "2"},
        ),
        ({"type": "object", "properties": {"it's": {"type": "array", "items": {"minimum": 3}}}},
         {"it's": [1, 5, 2]}),
    ],
)  # fmt: skip
def test_the_quick_errors_read_as_jsonschemas(schema, args):
    """Everything the stage says from the quick path's errors, it says from jsonschema's."""

    def said(validator: Any) -> tuple[list[str], dict[str, tuple[str, str, str | None]], list]:
        flagged: Flagged = {}
        notes: list[str] = []
        labels = check_schema(validator, args, flagged, notes)
        return (
            list(labels),
            {k: (lab, g.bucket, g.detail) for k, (lab, g) in flagged.items()},
            notes,
        )

    compiled = compile_schema(schema)
    assert compiled.quick is not None  # these schemas are on the quick path
    assert said(compiled) == said(compiled.validator)
