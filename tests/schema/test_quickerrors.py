"""The quick path's errors are jsonschema's errors: same order, messages, paths, keywords,
values and contexts, on generated schemas (the quick path's subset) and values."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.exceptions import best_match

from tests.schema.test_quick import CHECKER, CONFORMS, TOOL, TRICKY, schemas, validator, values
from toolproxy.schema import quickerrors
from toolproxy.schema.accepts import format_of
from toolproxy.schema.quick import compile_quick
from toolproxy.schema.quickerrors import QuickError, as_quick_error, iter_errors


def described(error: jsonschema.ValidationError | QuickError) -> tuple[Any, ...]:
    return (
        error.message,
        list(error.path),
        list(error.schema_path),
        error.json_path,
        error.validator,
        repr(error.validator_value),
        repr(error.instance),
        repr(error.schema),
        type(error.cause).__name__,
        [described(e) for e in error.context],
    )


def same_errors(schema: Any, instance: Any) -> None:
    theirs = list(validator(schema).iter_errors(instance))
    ours = list(iter_errors(schema, instance, CHECKER))
    assert [described(e) for e in ours] == [described(e) for e in theirs], (schema, instance)
    parts: dict[int, Any] = {}
    if compile_quick(schema, CONFORMS, parts) is not None:  # passing over proven values
        skipped = list(iter_errors(schema, instance, CHECKER, parts))
        assert [described(e) for e in skipped] == [described(e) for e in theirs]
    converted = [e.to_validation_error() for e in ours]
    assert [described(e) for e in converted] == [described(e) for e in theirs]
    read = [as_quick_error(e) for e in theirs]  # jsonschema's, as the schema stage reads them
    assert [described(e) for e in read] == [described(e) for e in theirs]
    assert all(as_quick_error(e) is e for e in ours)
    if theirs:
        assert described(best_match(converted)) == described(best_match(theirs))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas, st.lists(values, min_size=1, max_size=4))
def test_generated_schemas_give_jsonschemas_errors(schema: Any, instances: list[Any]) -> None:
    if compile_quick(schema, CONFORMS) is None:
        return
    for instance in instances + TRICKY:
        same_errors(schema, instance)


def test_a_tool_schema_with_refs_and_formats() -> None:
    for value in (
        {"city": 5, "days": 0, "unit": "k", "tags": [1, "a", 2], "since": "soon", "x": 1},
        {"filter": {"q": 3}, "days": 15.5},
        {"filter": {"q": None}, "verbose": True, "city": ""},
        ["not", "an", "object"],
    ):
        same_errors(TOOL, value)


def test_a_false_subschema_and_items_false() -> None:
    schema = {"properties": {"a": False, "b": {"items": False}}, "additionalProperties": False}
    same_errors(schema, {"a": 1, "b": [1, 2], "c": 3, "d": 4})
    same_errors(schema, {"b": [1]})


def test_json_paths_of_names_that_need_quoting() -> None:
    names = ["a b", "it's", "back\\slash", "9lives", "ok_name", "é"]
    schema = {
        "type": "object",
        "properties": {
            n: {"type": "object", "properties": {"x y": {"type": "integer"}}} for n in names
        },
    }
    same_errors(schema, {n: {"x y": "not a number"} for n in names})
    paths = [e.json_path for e in iter_errors(schema, {"it's": {"x y": 1.5}}, CHECKER)]
    assert paths == ["$['it\\'s']['x y']"]


def test_the_names_a_path_remembers_are_bounded() -> None:
    """Each name's quoting is remembered, up to NAMES_SIZE names; past that the memory
    starts again, and the paths stay right."""
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    for n in range(quickerrors.NAMES_SIZE + 3):
        name = f"n{n}" if n % 2 else f"n {n}"
        [error] = iter_errors(schema, {name: "x"}, CHECKER)
        assert error.json_path == (f"$.{name}" if n % 2 else f"$['{name}']")
        assert len(quickerrors._NAMES) <= quickerrors.NAMES_SIZE
    assert len(quickerrors._NAMES) < quickerrors.NAMES_SIZE  # it started again
    for odd in ("ab\n", "a\nb", "\u00e9"):  # `$` matches before a final newline
        theirs = [e.json_path for e in validator(schema).iter_errors({odd: 1.5})]
        assert [e.json_path for e in iter_errors(schema, {odd: 1.5}, CHECKER)] == theirs


def test_the_walk_passes_over_values_their_subschema_proves_valid() -> None:
    parts: dict[int, Any] = {}
    assert compile_quick(TOOL, CONFORMS, parts) is not None
    props, filters = TOOL["properties"], TOOL["$defs"]["Filter"]["properties"]
    assert set(parts) == {id(props), id(filters)} and list(parts[id(props)]) == list(props)
    asked: list[Any] = []

    def spy(accept: Any) -> Any:  # an accept noting what it is asked (a format's test calls)
        return format_of("spy", lambda value, _: asked.append(value) or accept.ok(value))

    watched = {key: {n: spy(a) for n, a in accepts.items()} for key, accepts in parts.items()}
    value = {"city": "Oslo", "days": 0, "tags": ["a", 2]}
    errors = list(iter_errors(TOOL, value, CHECKER, watched))
    assert asked == ["Oslo", 0, ["a", 2]]  # each asked once; only days and tags walked
    assert [described(e) for e in errors] == [
        described(e) for e in validator(TOOL).iter_errors(value)
    ]


def test_an_accept_that_raises_is_walked_instead() -> None:
    def raising(value: Any, name: str) -> bool:
        raise ValueError("a format checker that raises")

    broken = format_of("broken", raising)
    parts = {id(TOOL["properties"]): dict.fromkeys(TOOL["properties"], broken)}
    value = {"city": 5, "days": 0}
    errors = list(iter_errors(TOOL, value, CHECKER, parts))
    assert [described(e) for e in errors] == [
        described(e) for e in validator(TOOL).iter_errors(value)
    ]
