"""The schema stage's labels: which label and bucket each jsonschema error earns.

    required                                   missing_required  bucket missing
    type, value converts losslessly            type_coercion     bucket malformed
    type, otherwise                            schema_violation  bucket malformed
    additionalProperties/unevaluatedProperties hallucinated_param bucket hallucinated (per name)
    enum, const, minimum/maximum, multipleOf   schema_violation  bucket hallucinated
    anyOf/oneOf                                type_coercion if some alternative fails only
                                               by a convertible type; the alternatives' label
                                               when all agree; else schema_violation
    anything else (format, pattern, lengths)   schema_violation  bucket malformed

Arguments are named by their path (`filters.since`); the whole arguments object is
`(arguments)`. Pure; nothing here raises on any schema or value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from toolproxy.grade.equality import is_number
from toolproxy.grade.grades import ArgGrade
from toolproxy.grade.labels import Bucket, Label, outranks
from toolproxy.grade.matchers import coercions
from toolproxy.schema.quickerrors import QuickError, as_quick_error

Flagged = dict[str, tuple[Label, ArgGrade]]
MAX_SCHEMA_ERRORS: Final = 50
MAX_MESSAGE: Final = 300
WRONG_VALUE_KEYWORDS: Final = frozenset(
    {"enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)


def check_schema(
    validator: Any,  # anything with iter_errors: a CompiledSchema or a jsonschema validator
    args: dict[str, Any],
    flagged: dict[str, tuple[Label, ArgGrade]],
    notes: list[str],
) -> list[Label]:
    """Each schema error's label (at most MAX_SCHEMA_ERRORS), its words onto `notes` and
    the arguments it hits onto `flagged` (the earliest label of each wins). jsonschema's
    errors are read as `QuickError`s, the class the quick path gives: one typed class,
    whose fields compiled code reads directly (through `Any` it asked each by name)."""
    try:
        errors: list[QuickError] = []
        for error in validator.iter_errors(args):
            errors.append(as_quick_error(error))
            if len(errors) >= MAX_SCHEMA_ERRORS:
                break
    except Exception as exc:  # noqa: BLE001 - e.g. an unresolvable $ref shows only here
        notes.append(f"schema not checked: {type(exc).__name__}: {exc}")
        return []
    labels = []
    for error in errors:
        label, hits = _label_error(error)
        labels.append(label)
        message = error.message[:MAX_MESSAGE]
        notes.append(f"{error.json_path}: {message}")
        for name, bucket in hits:
            if name not in flagged or outranks(label, flagged[name][0]):
                detail = f"{error.validator}: {message}"
                flagged[name] = (label, ArgGrade(name=name, bucket=bucket, detail=detail))
    return labels


def _path(parts: list[Any]) -> str:
    if len(parts) == 1 and type(parts[0]) is str and parts[0]:  # most are one name
        return parts[0]
    return ".".join([str(p) for p in parts]) or "(arguments)"


def _label_error(error: QuickError) -> tuple[Label, list[tuple[str, Bucket]]]:
    """A schema error's label and the (argument path, bucket) pairs it flags."""
    keyword, where = error.validator, error.absolute_path
    instance, value = error.instance, error.validator_value
    if keyword == "required" and isinstance(instance, dict) and isinstance(value, list):
        missing = [r for r in value if isinstance(r, str) and r not in instance]
        return "missing_required", [(_path([*where, r]), "missing") for r in missing]
    if keyword == "type":
        return type_label(instance, value), [(_path(where), "malformed")]
    if keyword in ("additionalProperties", "unevaluatedProperties") and isinstance(instance, dict):
        extras = _extras(error, instance) or [""]
        return "hallucinated_param", [
            (_path([*where, x] if x else where), "hallucinated") for x in extras
        ]
    if keyword in ("anyOf", "oneOf") and error.context:
        alternatives: dict[Any, list[tuple[Label, list[tuple[str, Bucket]]]]] = {}
        for sub in error.context:  # by alternative; a false one's error has no schema path
            where_in = sub.schema_path[0] if sub.schema_path else None  # (jsonschema's quirk)
            alternatives.setdefault(where_in, []).append(_label_error(sub))
        best = [_first(found) for found in alternatives.values()]
        if any(label == "type_coercion" for label, _ in best):
            return "type_coercion", [(_path(where), "malformed")]
        if len({label for label, _ in best}) == 1:
            return best[0]
    bucket: Bucket = "hallucinated" if keyword in WRONG_VALUE_KEYWORDS else "malformed"
    return "schema_violation", [(_path(where), bucket)]


def type_label(instance: Any, types: Any) -> Label:
    """A `type` error's label: type_coercion when the value converts losslessly into one of
    `types` (a name or a list of names), else schema_violation."""
    names = types if isinstance(types, list) else [types]
    fits = any(_is_type(c, t) for c in coercions(instance) for t in names)
    return "type_coercion" if fits else "schema_violation"


def _first(
    found: list[tuple[Label, list[tuple[str, Bucket]]]],
) -> tuple[Label, list[tuple[str, Bucket]]]:
    """The found label that comes first in `PRECEDENCE` (the earliest of equals), as `min`
    with a key gives it; no lambda, whose closure compiled code builds at each call."""
    best = found[0]
    for each in found[1:]:
        if outranks(each[0], best[0]):
            best = each
    return best


def _extras(error: QuickError, instance: dict[str, Any]) -> list[str]:
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "additionalProperties":
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        patterns = schema.get("patternProperties")
        patterns = list(patterns) if isinstance(patterns, dict) else []
        return [k for k in instance if k not in props and not any(_search(p, k) for p in patterns)]
    # unevaluatedProperties: jsonschema names them in its message, quoted
    return [k for k in instance if repr(k) in error.message]


def _search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False


_IS_TYPE: Final[dict[str, Callable[[Any], bool]]] = {  # built once, not per error
    "integer": lambda v: is_number(v) and float(v).is_integer(),
    "number": is_number,
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
}


def _is_type(value: Any, json_type_name: Any) -> bool:
    check = _IS_TYPE.get(json_type_name) if isinstance(json_type_name, str) else None
    return check is not None and check(value)
