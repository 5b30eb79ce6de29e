"""jsonschema's errors for quick-path schemas, without building a jsonschema validator.

`iter_errors(schema, instance, formats)` gives what
`Draft202012Validator(schema, format_checker=formats).iter_errors(instance)` yields, error
for error, as `QuickError`s: the same messages, paths, schema paths, keywords, values,
contexts and causes, in the same order (`QuickError.to_validation_error()` gives the
jsonschema object, for `best_match` and `relevance`). It covers only the keywords
`schema.quick` handles; `compile_quick` must have accepted the schema, and the instance
must be plain JSON (`util.jsonfast.plain_json`). It mirrors jsonschema 4.26's `descend` and
keyword functions, quirks included (a `false` subschema's error carries no path;
`additionalProperties` with a schema walks the extras as a set), and a test compares the
two on generated schemas and values. With `compile_quick`'s `parts`, the walk passes over a
property value its subschema's accept proves valid (there it would find no error): a
failing call's other arguments cost one quick test each. Errors are collected
into a list, not yielded through
nested generators, and `QuickError` is a plain class, not an exception whose constructor
and `_set` run as Python: the schema stage of a warm BFCL-shaped pass fell from 16,600 to
8,900 instructions a call (callgrind; docs/benchmarks.md). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Final

import jsonschema
from jsonschema._utils import equal, extras_msg
from jsonschema.exceptions import FormatError, ValidationError

from toolproxy.schema.accepts import TYPE_TESTS, Accept, is_number
from toolproxy.schema.quick import Parts

TYPES: Final = jsonschema.Draft202012Validator.TYPE_CHECKER
# a field the keyword left for `descend` to fill (jsonschema's `_set`)
_UNSET: Final[Any] = object()
_JSON_NAME: Final = re.compile("^[a-zA-Z][a-zA-Z0-9_]*$")  # jsonschema's json_path rule
Errors = list["QuickError"]


class QuickError:
    """One schema error, with `jsonschema.ValidationError`'s fields and paths."""

    __slots__ = (
        "message", "validator", "validator_value", "instance", "schema", "path", "schema_path",
        "context", "cause", "parent",
    )  # fmt: skip

    def __init__(
        self, message: str, context: list[QuickError] | None = None, cause: Any = None
    ) -> None:
        self.message = message
        self.validator: Any = _UNSET
        self.validator_value: Any = _UNSET
        self.instance: Any = _UNSET
        self.schema: Any = _UNSET
        self.path: list[Any] = []  # relative to the parent's (an anyOf's context)
        self.schema_path: list[Any] = []
        self.context: list[QuickError] = [] if context is None else context
        self.cause = cause
        self.parent: QuickError | None = None
        for error in self.context:
            error.parent = self

    def __repr__(self) -> str:
        return f"<QuickError: {self.message!r}>"

    @property
    def relative_path(self) -> list[Any]:
        return self.path

    @property
    def relative_schema_path(self) -> list[Any]:
        return self.schema_path

    @property
    def absolute_path(self) -> list[Any]:
        parent = self.parent
        return self.path if parent is None else parent.absolute_path + self.path

    @property
    def json_path(self) -> str:
        path = "$"
        for elem in self.absolute_path:
            if isinstance(elem, int):
                path += "[" + str(elem) + "]"
            elif _json_name(elem):
                path += "." + elem
            else:
                path += "['" + elem.replace("\\", "\\\\").replace("'", "\\'") + "']"
        return path

    def to_validation_error(self) -> ValidationError:
        """The same error as jsonschema's object (for `best_match` and `relevance`)."""
        return ValidationError(
            self.message,
            validator=self.validator,
            path=self.path,
            cause=self.cause,
            context=[e.to_validation_error() for e in self.context],
            validator_value=self.validator_value,
            instance=self.instance,
            schema=self.schema,
            schema_path=self.schema_path,
            type_checker=TYPES,
        )


_NAMES: Final[dict[str, bool]] = {}  # a path's name -> `_JSON_NAME` matches it
NAMES_SIZE: Final = 4096


def _json_name(name: str) -> bool:
    """Is `name` written `.name` in a json_path? Remembered: the names are a schema's
    arguments, asked at every error (the expression cost 1,500 instructions a path)."""
    known = _NAMES.get(name)
    if known is None:
        if len(_NAMES) >= NAMES_SIZE:
            _NAMES.clear()
        known = _NAMES[name] = _JSON_NAME.match(name) is not None
    return known


def as_quick_error(error: Any) -> QuickError:
    """A jsonschema `ValidationError` as a `QuickError`: the same message, keyword, values,
    paths, cause and context (each converted too), so a reader has one class to read, its
    fields read directly once compiled. A `QuickError` is returned as it is."""
    if isinstance(error, QuickError):
        return error
    found = QuickError(error.message, [as_quick_error(e) for e in error.context], error.cause)
    found.validator, found.validator_value = error.validator, error.validator_value
    found.instance, found.schema = error.instance, error.schema
    found.path, found.schema_path = list(error.relative_path), list(error.relative_schema_path)
    return found


def iter_errors(
    schema: Any, instance: Any, formats: jsonschema.FormatChecker, parts: Parts | None = None
) -> Iterator[QuickError]:
    """The errors jsonschema would give (see the module docstring for the conditions).
    `parts` (from `compile_quick`): the walk passes over a property value or an item its
    subschema's accept proves valid, where it would find no error."""
    found: Errors = []
    _Walk(schema, formats, parts).descend(instance, schema, found)
    return iter(found)


class _Walk:
    def __init__(self, root: Any, formats: jsonschema.FormatChecker, parts: Parts | None) -> None:
        self.root = root
        self.formats = formats
        self.parts: Parts = {} if parts is None else parts

    def descend(
        self, instance: Any, schema: Any, out: Errors, path: Any = None, schema_path: Any = None
    ) -> None:
        """Append the errors of `instance` under `schema` to `out`, paths prefixed."""
        if schema is True:
            return
        if schema is False:  # jsonschema's quirk: this error gets no path at this level
            error = QuickError(f"False schema does not allow {instance!r}")
            error.validator, error.validator_value = None, None
            error.instance, error.schema = instance, schema
            out.append(error)
            return
        start = len(out)
        spec: dict[str, Any] = schema  # a quick schema: a dict below True and False
        for k, v in spec.items():  # typed: mypyc walks the dict itself, not its iterator
            code = _CODES.get(k, -1)
            if code < 0:
                continue
            mark = len(out)
            # the common keywords called directly (a call through the table parses its
            # five arguments as a Python call does), the rest through the table
            if code == 0:
                _type(self, v, instance, schema, out)
            elif code == 1:
                _properties(self, v, instance, schema, out)
            elif code == 2:
                _required(self, v, instance, schema, out)
            elif code == 3:
                _additional(self, v, instance, schema, out)
            elif code == 4:
                _items(self, v, instance, schema, out)
            elif code == 5:
                _enum(self, v, instance, schema, out)
            elif code == 6:
                _format(self, v, instance, schema, out)
            else:
                KEYWORDS[k](self, v, instance, schema, out)
            for i in range(mark, len(out)):
                error = out[i]
                if error.validator is _UNSET:  # jsonschema's `_set`: the innermost wins
                    error.validator, error.validator_value = k, v
                    error.instance, error.schema = instance, schema
                if k != "$ref":
                    error.schema_path.insert(0, k)
        if path is not None or schema_path is not None:
            for i in range(start, len(out)):
                error = out[i]
                if path is not None:
                    error.path.insert(0, path)
                if schema_path is not None:
                    error.schema_path.insert(0, schema_path)


def _is(instance: Any, name: str) -> bool:
    """`TYPES.is_type`: for plain JSON values the quick path's own type tests say the same
    (bool is no number; 1.0 is an integer), in a third of the time."""
    test = TYPE_TESTS.get(name)
    return TYPES.is_type(instance, name) if test is None else test.ok(instance)


def _type(walk: _Walk, types: Any, instance: Any, schema: Any, out: Errors) -> None:
    names: list[Any] = [types] if isinstance(types, str) else types  # `compile_quick`'s check
    for t in names:
        if _is(instance, t):
            return
    reprs = ", ".join([repr(t) for t in names])
    out.append(QuickError(f"{repr(instance)} is not of type {reprs}"))


def _properties(walk: _Walk, properties: Any, instance: Any, schema: Any, out: Errors) -> None:
    if type(instance) is not dict:  # `_is(instance, "object")` for plain JSON
        return
    accepts = walk.parts.get(id(properties))
    named: dict[str, Any] = properties  # a dict: `compile_quick` checked it
    for name, subschema in named.items():
        if name in instance:
            value = instance[name]
            if accepts is None or not _proven(accepts[name], value):
                walk.descend(value, subschema, out, path=name, schema_path=name)


def _proven(accept: Accept, value: Any) -> bool:
    """Does the quick accept prove `value` valid (so a walk would find no error)?"""
    try:
        return accept.ok(value)
    except Exception:  # noqa: BLE001 - e.g. a format checker that raises: walk it
        return False


def _required(walk: _Walk, required: Any, instance: Any, schema: Any, out: Errors) -> None:
    if type(instance) is not dict:
        return
    given: dict[Any, Any] = instance
    names: list[Any] = required  # a list of strings: `compile_quick` checked it
    for name in names:
        if name not in given:
            out.append(QuickError(f"{repr(name)} is a required property"))


def _additional(walk: _Walk, extra: Any, instance: Any, schema: Any, out: Errors) -> None:
    if type(instance) is not dict:
        return
    # jsonschema's `find_additional_properties` (Python) for a schema without
    # patternProperties (none in a quick schema), as a set as jsonschema walks them
    named: dict[str, Any] = schema.get("properties", {})
    extras = {name for name in instance if name not in named}
    if _is(extra, "object"):
        for name in extras:
            walk.descend(instance[name], extra, out, path=name)
    elif not extra and extras:
        error = "Additional properties are not allowed (%s %s unexpected)"
        out.append(QuickError(error % extras_msg(sorted(extras, key=str))))


def _items(walk: _Walk, items: Any, instance: Any, schema: Any, out: Errors) -> None:
    if type(instance) is not list or not instance:
        return
    if items is False:
        rest = instance if len(instance) != 1 else instance[0]
        words = f"Expected at most 0 items but found {len(instance)} extra: {rest!r}"
        out.append(QuickError(words))
        return
    for index, item in enumerate(instance):
        walk.descend(item, items, out, path=index)


def _enum(walk: _Walk, enums: Any, instance: Any, schema: Any, out: Errors) -> None:
    for each in enums:
        if equal(each, instance):
            return
    out.append(QuickError(f"{instance!r} is not one of {enums!r}"))


def _const(walk: _Walk, const: Any, instance: Any, schema: Any, out: Errors) -> None:
    if not equal(instance, const):
        out.append(QuickError(f"{const!r} was expected"))


Keyword = Callable[[_Walk, Any, Any, Any, Errors], None]


def _bound(test: Callable[[Any, Any], bool], words: str) -> Keyword:
    def keyword(walk: _Walk, bound: Any, instance: Any, schema: Any, out: Errors) -> None:
        if is_number(instance) and test(instance, bound):
            out.append(QuickError(f"{instance!r} is {words} {bound!r}"))

    return keyword


def _size(kind: str, test: Callable[[int, int], bool], edge: int, one: str, other: str) -> Keyword:
    def keyword(walk: _Walk, limit: Any, instance: Any, schema: Any, out: Errors) -> None:
        if _is(instance, kind) and test(len(instance), limit):
            out.append(QuickError(f"{instance!r} {one if limit == edge else other}"))

    return keyword


def _pattern(walk: _Walk, pattern: Any, instance: Any, schema: Any, out: Errors) -> None:
    if type(instance) is str and not re.search(pattern, instance):
        out.append(QuickError(f"{instance!r} does not match {pattern!r}"))


def _format(walk: _Walk, name: Any, instance: Any, schema: Any, out: Errors) -> None:
    try:
        walk.formats.check(instance, name)
    except FormatError as error:
        out.append(QuickError(error.message, cause=error.cause))


def _all_of(walk: _Walk, subschemas: Any, instance: Any, schema: Any, out: Errors) -> None:
    for index, subschema in enumerate(subschemas):
        walk.descend(instance, subschema, out, schema_path=index)


def _any_of(walk: _Walk, subschemas: Any, instance: Any, schema: Any, out: Errors) -> None:
    found: Errors = []
    for index, subschema in enumerate(subschemas):
        mark = len(found)
        walk.descend(instance, subschema, found, schema_path=index)
        if len(found) == mark:
            return
    words = f"{instance!r} is not valid under any of the given schemas"
    out.append(QuickError(words, context=found))


def _ref(walk: _Walk, ref: str, instance: Any, schema: Any, out: Errors) -> None:
    name = ref.removeprefix("#/$defs/")
    walk.descend(instance, walk.root["$defs"][name], out)


KEYWORDS: Final[dict[str, Keyword]] = {
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
_DIRECT: Final = (_type, _properties, _required, _additional, _items, _enum, _format)
# keyword -> its place in _DIRECT (what `descend` calls directly), the others after them
_CODES: Final[dict[str, int]] = {
    k: _DIRECT.index(f) if f in _DIRECT else len(_DIRECT) for k, f in KEYWORDS.items()
}
