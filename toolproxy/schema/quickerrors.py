"""jsonschema's errors for quick-path schemas, without building a jsonschema validator.

`iter_errors(schema, instance, formats)` yields what
`Draft202012Validator(schema, format_checker=formats).iter_errors(instance)` yields, error
for error: the same `jsonschema.ValidationError`s, in the same order, with the same
messages, paths, schema paths, keywords, values, contexts and type checker (so
`best_match`, `json_path` and the grader's labels read them as before). It covers only the
keywords `schema.quick` handles; `compile_quick` must have accepted the schema, and the
instance must be plain JSON (`expectations.plain_json`). It mirrors jsonschema 4.26's
`descend` and keyword functions, quirks included (a `false` subschema's error carries no
path; `additionalProperties` with a schema walks the extras as a set), and a test compares
the two on generated schemas and values. About 3x faster than jsonschema on tool schemas,
mostly because no validator is evolved per subschema. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema
from jsonschema._utils import equal, extras_msg, find_additional_properties
from jsonschema.exceptions import FormatError, ValidationError

from toolproxy.schema.quick import TYPE_TESTS

TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER
Errors = Iterator[ValidationError]


def iter_errors(schema: Any, instance: Any, formats: jsonschema.FormatChecker) -> Errors:
    """The errors jsonschema would give (see the module docstring for the conditions)."""
    return _Walk(schema, formats).descend(instance, schema)


class _Walk:
    def __init__(self, root: Any, formats: jsonschema.FormatChecker) -> None:
        self.root = root
        self.formats = formats

    def descend(
        self, instance: Any, schema: Any, path: Any = None, schema_path: Any = None
    ) -> Errors:
        if schema is True:
            return
        if schema is False:
            yield ValidationError(
                f"False schema does not allow {instance!r}",
                validator=None,  # type: ignore[arg-type]
                validator_value=None,
                instance=instance,
                schema=schema,
            )
            return
        for k, v in schema.items():
            keyword = KEYWORDS.get(k)
            if keyword is None:
                continue
            for error in keyword(self, v, instance, schema):
                error._set(
                    validator=k,
                    validator_value=v,
                    instance=instance,
                    schema=schema,
                    type_checker=TYPES,
                )
                if k != "$ref":
                    error.schema_path.appendleft(k)
                if path is not None:
                    error.path.appendleft(path)
                if schema_path is not None:
                    error.schema_path.appendleft(schema_path)
                yield error


def _is(instance: Any, name: str) -> bool:
    """`TYPES.is_type`: for plain JSON values the quick path's own type tests say the same
    (bool is no number; 1.0 is an integer), in a third of the time."""
    test = TYPE_TESTS.get(name)
    return TYPES.is_type(instance, name) if test is None else test(instance)


def _type(walk: _Walk, types: Any, instance: Any, schema: Any) -> Errors:
    types = [types] if isinstance(types, str) else types
    if not any(_is(instance, t) for t in types):
        reprs = ", ".join(repr(t) for t in types)
        yield ValidationError(f"{instance!r} is not of type {reprs}")


def _properties(walk: _Walk, properties: Any, instance: Any, schema: Any) -> Errors:
    if not _is(instance, "object"):
        return
    for name, subschema in properties.items():
        if name in instance:
            yield from walk.descend(instance[name], subschema, path=name, schema_path=name)


def _required(walk: _Walk, required: Any, instance: Any, schema: Any) -> Errors:
    if not _is(instance, "object"):
        return
    for name in required:
        if name not in instance:
            yield ValidationError(f"{name!r} is a required property")


def _additional(walk: _Walk, extra: Any, instance: Any, schema: Any) -> Errors:
    if not _is(instance, "object"):
        return
    extras = set(find_additional_properties(instance, schema))
    if _is(extra, "object"):
        for name in extras:
            yield from walk.descend(instance[name], extra, path=name)
    elif not extra and extras:
        error = "Additional properties are not allowed (%s %s unexpected)"
        yield ValidationError(error % extras_msg(sorted(extras, key=str)))


def _items(walk: _Walk, items: Any, instance: Any, schema: Any) -> Errors:
    if not _is(instance, "array") or not instance:
        return
    if items is False:
        rest = instance if len(instance) != 1 else instance[0]
        yield ValidationError(f"Expected at most 0 items but found {len(instance)} extra: {rest!r}")
        return
    for index, item in enumerate(instance):
        yield from walk.descend(item, items, path=index)


def _enum(walk: _Walk, enums: Any, instance: Any, schema: Any) -> Errors:
    if all(not equal(each, instance) for each in enums):
        yield ValidationError(f"{instance!r} is not one of {enums!r}")


def _const(walk: _Walk, const: Any, instance: Any, schema: Any) -> Errors:
    if not equal(instance, const):
        yield ValidationError(f"{const!r} was expected")


def _bound(test: Callable[[Any, Any], bool], words: str) -> Callable[..., Errors]:
    def keyword(walk: _Walk, bound: Any, instance: Any, schema: Any) -> Errors:
        if _is(instance, "number") and test(instance, bound):
            yield ValidationError(f"{instance!r} is {words} {bound!r}")

    return keyword


def _size(kind: str, test: Callable[[int, int], bool], edge: int, one: str, other: str) -> Any:
    def keyword(walk: _Walk, limit: Any, instance: Any, schema: Any) -> Errors:
        if _is(instance, kind) and test(len(instance), limit):
            yield ValidationError(f"{instance!r} {one if limit == edge else other}")

    return keyword


def _pattern(walk: _Walk, pattern: Any, instance: Any, schema: Any) -> Errors:
    if _is(instance, "string") and not re.search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _format(walk: _Walk, name: Any, instance: Any, schema: Any) -> Errors:
    try:
        walk.formats.check(instance, name)
    except FormatError as error:
        yield ValidationError(error.message, cause=error.cause)


def _all_of(walk: _Walk, subschemas: Any, instance: Any, schema: Any) -> Errors:
    for index, subschema in enumerate(subschemas):
        yield from walk.descend(instance, subschema, schema_path=index)


def _any_of(walk: _Walk, subschemas: Any, instance: Any, schema: Any) -> Errors:
    found: list[ValidationError] = []
    for index, subschema in enumerate(subschemas):
        errors = list(walk.descend(instance, subschema, schema_path=index))
        if not errors:
            return
        found.extend(errors)
    yield ValidationError(
        f"{instance!r} is not valid under any of the given schemas", context=found
    )


def _ref(walk: _Walk, ref: str, instance: Any, schema: Any) -> Errors:
    name = ref.removeprefix("#/$defs/")
    yield from walk.descend(instance, walk.root["$defs"][name])


KEYWORDS: dict[str, Callable[[_Walk, Any, Any, Any], Errors]] = {
    "type": _type,
    "properties": _properties,
    "required": _required,
    "additionalProperties": _additional,
    "items": _items,
    "enum": _enum,
    "const": _const,
    "minimum": _bound(lambda v, b: v < b, "less than the minimum of"),
    "maximum": _bound(lambda v, b: v > b, "greater than the maximum of"),
    "exclusiveMinimum": _bound(lambda v, b: v <= b, "less than or equal to the minimum of"),
    "exclusiveMaximum": _bound(lambda v, b: v >= b, "greater than or equal to the maximum of"),
    "minLength": _size("string", lambda n, m: n < m, 1, "should be non-empty", "is too short"),
    "maxLength": _size("string", lambda n, m: n > m, 0, "is expected to be empty", "is too long"),
    "minItems": _size("array", lambda n, m: n < m, 1, "should be non-empty", "is too short"),
    "maxItems": _size("array", lambda n, m: n > m, 0, "is expected to be empty", "is too long"),
    "pattern": _pattern,
    "format": _format,
    "allOf": _all_of,
    "anyOf": _any_of,
    "$ref": _ref,
}
