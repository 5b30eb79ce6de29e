"""The predicates a quick schema compiles into: each says True only where jsonschema finds
no error for its keyword, and leaves what it cannot judge (subclasses, booleans as numbers)
to jsonschema by saying False."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

from toolproxy.schema.accepts import (
    TYPE_NAMES,
    TYPE_TESTS,
    Accept,
    all_of,
    always,
    any_of,
    choices,
    items_of,
    never,
    numeric,
    object_of,
    sized,
    type_test,
)

VALUES: list[Any] = [
    "s", "", 0, 3, -2, 1.0, 1.5, math.nan, math.inf, True, False, None, [], [1], {}, {"a": 1},
    OrderedDict(), (), b"x", 10**30,
]  # fmt: skip


def test_the_type_test_by_name_is_the_type_tests() -> None:
    for name, test in TYPE_TESTS.items():
        for value in VALUES:
            assert type_test(name, value) == (1 if test.ok(value) else 0), (name, value)
    for name in ("dict", "float", "String", "", "any"):
        assert type_test(name, "s") == -1 and type_test(name, None) == -1


def test_json_types_as_jsonschema_tests_them() -> None:
    assert TYPE_NAMES == {"string", "integer", "number", "boolean", "object", "array", "null"}
    assert TYPE_TESTS["integer"](3) and TYPE_TESTS["integer"](1.0)
    assert not TYPE_TESTS["integer"](1.5) and not TYPE_TESTS["integer"](True)
    assert TYPE_TESTS["number"](2.5) and not TYPE_TESTS["number"](False)
    assert TYPE_TESTS["boolean"](False) and not TYPE_TESTS["boolean"](0)
    assert TYPE_TESTS["null"](None) and not TYPE_TESTS["null"](0)
    assert not TYPE_TESTS["object"](OrderedDict()) and not TYPE_TESTS["array"](())


def test_all_of_keeps_only_checks_that_can_fail() -> None:
    assert all_of([]) is always and all_of([always, always]) is always
    positive = numeric("exclusiveMinimum", 0)
    assert all_of([always, positive]) is positive
    for n in (2, 3, 4, 5):  # each size: two checks have a class of their own
        checks = [numeric("exclusiveMinimum", k) for k in range(n)]
        accept = all_of(checks)
        assert accept(n) and not accept(n - 1)
        assert accept.ok(n) and not accept.ok(n - 1)


def test_any_of_holds_when_one_alternative_does() -> None:
    assert any_of([never, always]) is always
    accept = any_of([TYPE_TESTS["string"], TYPE_TESTS["null"]])
    assert accept("a") and accept(None) and not accept(1)


def test_object_of_checks_required_properties_and_extras() -> None:
    checks: dict[str, Any] = {"city": TYPE_TESTS["string"], "note": always}
    closed = object_of(checks, ("city",), never)
    assert closed({"city": "Oslo", "note": 5})
    assert not closed({"note": "x"})  # required missing
    assert not closed({"city": 5})  # a property its check refuses
    assert not closed({"city": "Oslo", "extra": 1})  # additionalProperties: false
    assert object_of(checks, (), always)({"extra": 1})
    assert not closed(OrderedDict(city="Oslo"))  # a dict subclass: jsonschema decides
    assert closed("not an object")  # properties say nothing of other types
    strict = object_of(checks, ("city",), never, strict=True)  # with "type": "object"
    assert strict({"city": "Oslo"}) and not strict("not an object") and not strict([])
    assert not strict(OrderedDict(city="Oslo"))


def test_object_of_asks_each_property_its_own_test() -> None:
    """A property's value gets its type's test: bool is no integer, a dict subclass no
    object, as the tests say."""
    names = ("string", "boolean", "object", "array", "integer", "number", "null")
    values = ["a", True, 1, 1.0, 2.5, None, {}, [], OrderedDict(), type("L", (list,), {})()]
    for name in names:
        accept = object_of({"p": TYPE_TESTS[name]}, (), always)
        for value in values:
            assert accept({"p": value}) is TYPE_TESTS[name](value), (name, value)


def test_items_of_checks_every_item_of_a_list() -> None:
    assert items_of(always) is always
    accept = items_of(TYPE_TESTS["integer"])
    assert accept([1, 2.0]) and not accept([1, "2"]) and accept([])
    assert accept("not an array") and not accept(type("L", (list,), {})([1]))


def test_numeric_bounds_leave_booleans_and_nan_to_jsonschema() -> None:
    at_least_one = numeric("minimum", 1)
    assert at_least_one(1) and at_least_one(1.5) and not at_least_one(0)
    assert at_least_one("text")  # a bound says nothing of strings
    assert not at_least_one(math.nan) and not at_least_one(True)
    compare = {
        "minimum": lambda v: v >= 1,
        "maximum": lambda v: v <= 1,
        "exclusiveMinimum": lambda v: v > 1,
        "exclusiveMaximum": lambda v: v < 1,
    }
    for keyword, holds in compare.items():
        accept = numeric(keyword, 1)
        for v in (0, 1, 2, 0.5, 1.0, 1.5, -1e308, 1e308):
            assert accept(v) is holds(v), (keyword, v)
        assert not accept(math.nan) and not accept(False) and accept(None)


def test_lengths_count_code_points_of_their_own_type() -> None:
    short = sized(str, -1, 2)
    assert short("ab") and short("é\u0301") and not short("abc")
    assert short([1, 2, 3])  # maxLength says nothing of arrays
    assert sized(list, 1, 1)([0]) and not sized(list, 1, 1)([])


def test_a_required_name_outside_properties_is_checked_as_an_extra() -> None:
    """`required` names a property `properties` does not: it must be there, and its value
    is additionalProperties' to judge (counted once however the object is ordered)."""
    accept = object_of({"a": TYPE_TESTS["string"]}, ("a", "b"), TYPE_TESTS["integer"])
    assert accept({"a": "x", "b": 1}) and accept({"b": 2, "a": "y"})
    assert not accept({"a": "x"}) and not accept({"b": 1})  # each required name
    assert not accept({"a": "x", "b": "1"})  # b is an extra: an integer
    assert not accept({"a": "x", "b": 1, "c": "z"}) and accept({"a": "x", "b": 1, "c": 3})
    assert object_of({}, ("b",), always)({"b": None})


def test_choices_compare_scalars_as_jsonschema_does() -> None:
    allowed = choices([["a", 1, None, [1]]])
    assert allowed("a") and allowed(1) and allowed(1.0) and allowed(None)
    assert not allowed(True) and not allowed("b") and not allowed(math.nan)
    assert not allowed([1])  # a list or an object: left to jsonschema
    both = choices([[1, 2], [2]])  # enum and const: in every list
    assert both(2) and not both(1)


def test_every_accept_answers_by_call_and_by_ok() -> None:
    for test in [*TYPE_TESTS.values(), always, never, choices([[1]]), sized(str, 1, 1)]:
        assert isinstance(test, Accept)
        for value in ("", "a", 1, None, [], {}):
            assert test(value) is test.ok(value)
