"""The C walk of a schema's errors (`nativeerrors.c`, part of `nativegrade.c`): each
quirk of jsonschema's errors that `quickerrors` keeps, kept; the grade they make is the
Python grader's."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.grade.test_nativegrade import agrees, native_grader
from tests.grade.test_nativeschema import one_call
from toolproxy.grade.model import Matcher


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return native_grader()


# each a quirk of jsonschema's errors the C walk repeats: the schema, the arguments
QUIRKS = {
    "required names absent, each flagged by every required error": (
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]},
        {"c": 1},
    ),
    "a false schema's error one path step short": (
        {"properties": {"a": {"properties": {"b": False}}}},
        {"a": {"b": 1}},
    ),
    "additionalProperties false: the extras sorted in the message, each flagged": (
        {"properties": {"a": {}}, "additionalProperties": False},
        {"z": 1, "a": 1, "m": 2},
    ),
    "additionalProperties a schema: the extras walked as a set": (
        {"properties": {}, "additionalProperties": {"type": "integer"}},
        {"x": "1", "y": "2", "w": "3"},
    ),
    "names json_path quotes, and one whose $ takes a last newline": (
        {"properties": {"it's": {"type": "string"}, "a\n": {"type": "string"}, "ü": False}},
        {"it's": 1, "a\n": 2, "ü": 3},
    ),
    "items: an index in the path, and items false": (
        {"properties": {"l": {"items": {"type": "string"}}, "n": {"items": False}}},
        {"l": ["a", 1, "b", 2], "n": [1, 2]},
    ),
    "enum and const: wrong values, so bucket hallucinated": (
        {"properties": {"u": {"enum": ["c", "f"]}, "k": {"const": 3}}},
        {"u": "k", "k": 3.5},
    ),
    "type: '5' for an integer is a coercion, 'x' is not": (
        {"properties": {"n": {"type": "integer"}, "m": {"type": ["integer", "null"]}}},
        {"n": "5", "m": "x"},
    ),
    "a type error under the root: the whole object": ({"type": "array"}, {"a": 1}),
    "a message cut at 300 characters": (
        {"properties": {"s": {"type": "integer"}}},
        {"s": "x" * 400},
    ),
}


@pytest.mark.parametrize("schema, args", QUIRKS.values(), ids=list(QUIRKS))
def test_each_quirk_is_worded_in_c_as_in_python(native, schema, args):
    wanted = {name: Matcher(value=value) for name, value in args.items()}
    found = agrees(native, *one_call(schema, args, wanted))
    assert found is not None and found.calls[0].stage_failed == "schema"
