"""The checks of a raw expectation case, before it becomes a `Case` (the loader's half
that says what is wrong): `schemas/expectations.schema.json` through jsonschema-rs (a yes
or no, fast) and, for a case it rejects, jsonschema (each error worded, with its path),
then what the schema cannot say (a regex that does not compile, a range with min > max,
exchange_id or messages). Problems are (field path relative to the case, message)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from difflib import get_close_matches
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs

from toolproxy.grade.casefile import FieldPath
from toolproxy.util.jsonfast import plain_json

# package data, so an installed wheel has it; schemas/expectations.schema.json links here.
# Found through the package, not __file__: the compiled module lives outside it.
SCHEMA_PATH = Path(str(files("toolproxy.grade") / "expectations.schema.json"))
Problem = tuple[FieldPath, str]


@cache
def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@cache
def _definition(definition: str) -> dict[str, Any]:
    root = _schema()
    # matchers nest (object fields, list items): those references stay references
    return {"$defs": root["$defs"], **_inlined(root["$defs"][definition], root["$defs"], ())}


@cache
def _validator(definition: str) -> jsonschema.protocols.Validator:
    """jsonschema's validator: the one that words the errors."""
    schema = _definition(definition)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


@cache
def _quick(definition: str) -> Any:
    """jsonschema-rs's validator of the same schema: says valid or not about 40x faster, so
    only a case it rejects is run through jsonschema for the wording (tests hold the two
    to the same verdicts)."""
    return jsonschema_rs.Draft202012Validator(_definition(definition), validate_formats=True)


def _inlined(node: Any, defs: dict[str, Any], within: tuple[str, ...]) -> Any:
    """`node` with every `#/$defs/...` reference replaced by its definition: the same
    schema, validated in half the time (jsonschema resolves each `$ref` per instance). A
    reference inside the definition it names (a matcher's nested matchers) stays one."""
    if isinstance(node, list):
        return [_inlined(v, defs, within) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in within:
            return node
        target = _inlined(defs[name], defs, (*within, name))
        rest = {k: _inlined(v, defs, within) for k, v in node.items() if k != "$ref"}
        return {"allOf": [target], **rest} if rest else target
    return {k: _inlined(v, defs, within) for k, v in node.items()}


def is_matcher_object(value: Any) -> bool:
    """A mapping is a matcher when it has `match`, or `optional` as its only key."""
    return isinstance(value, dict) and ("match" in value or set(value) == {"optional"})


def _at(doc: Any, path: FieldPath) -> Any:
    """The value at a path jsonschema reported (so it exists)."""
    for part in path:
        doc = doc[part]
    return doc


def fast_valid(definition: str, instance: Any, plain: bool = False) -> bool:
    """jsonschema-rs's verdict when it can read the value (plain JSON, known to be when
    `plain`; a lone surrogate in a string it cannot encode); False means "ask jsonschema"."""
    try:
        return (plain or plain_json(instance)) and _quick(definition).is_valid(instance)
    except ValueError:  # UnicodeEncodeError among them
        return False


def schema_problems(definition: str, instance: Any, plain: bool = False) -> list[Problem]:
    if fast_valid(definition, instance, plain):
        return []
    problems: list[Problem] = []
    for error in _validator(definition).iter_errors(instance):
        path: FieldPath = tuple(error.absolute_path)
        if error.validator == "additionalProperties":
            known = list(error.schema.get("properties", {}))
            for key in error.instance:
                if key not in known:
                    hint = get_close_matches(key, known, n=1)
                    also = f" (did you mean {hint[0]!r}?)" if hint else ""
                    problems.append(((*path, key), f"unknown field {key!r}{also}"))
        elif "propertyNames" in error.schema_path:
            kind = _at(instance, path).get("match", "(none)")
            allowed = ", ".join(error.validator_value)
            hint = get_close_matches(str(error.instance), error.validator_value, n=1)
            allowed += f"; did you mean {hint[0]!r}?" if hint else ""
            problems.append(
                (
                    (*path, error.instance),
                    f"{error.instance!r} does not apply to match: {kind} (it takes: {allowed})",
                )
            )
        elif error.validator == "required":
            for key in error.validator_value:
                if key not in error.instance:
                    problems.append((path, f"missing required field {key!r}"))
        elif error.validator == "enum" and path and path[-1] == "match":
            problems.append(
                (
                    path,
                    f"unknown match kind {error.instance!r}; one of: "
                    f"{', '.join(error.validator_value)}",
                )
            )
        elif error.validator == "oneOf" and _is_text_matcher(error.instance):
            both = "value" in error.instance and "values" in error.instance
            problems.append(
                (
                    path,
                    "text takes value or values, not both"
                    if both
                    else "text needs value (one string) or values (a list of them)",
                )
            )
        elif path and path[-1] == "extra_calls":
            problems.append((path, f"{error.instance!r}: extra_calls is allow, forbid or N ≥ 0"))
        else:
            problems.append((path, error.message))
    return list(dict.fromkeys(problems))  # `required` reports per key; ours lists them all


def _is_text_matcher(value: Any) -> bool:
    return isinstance(value, dict) and value.get("match") == "text"


def matcher_problems(value: Any) -> list[Problem]:
    """Checks the schema cannot express, on a value the schema may not have accepted."""
    if not is_matcher_object(value):
        return []
    kind = value.get("match")
    problems: list[Problem] = []
    if kind == "regex" and isinstance(value.get("pattern"), str):
        try:
            re.compile(value["pattern"])
        except re.error as e:
            problems.append((("pattern",), f"regex does not compile: {e}"))
    if kind == "range":
        low, high = value.get("min"), value.get("max")
        if low is None and high is None:
            problems.append(((), "range needs min, max or both"))
        elif isinstance(low, int | float) and isinstance(high, int | float) and low > high:
            problems.append((("min",), f"range min {low} is greater than max {high}"))
    if kind == "datetime" and isinstance(value.get("value"), str):
        try:
            datetime.fromisoformat(value["value"])
        except ValueError:
            problems.append((("value",), f"not an ISO-8601 timestamp: {value['value']!r}"))
    fields = value.get("fields") if kind == "object" else None
    for key, sub in fields.items() if isinstance(fields, dict) else ():
        problems += [(("fields", key, *p), m) for p, m in matcher_problems(sub)]
    items = value.get("items") if kind == "list" else None
    for i, sub in enumerate(items if isinstance(items, list) else []):
        problems += [(("items", i, *p), m) for p, m in matcher_problems(sub)]
    return problems


def case_problems(raw: Any, plain: bool = False) -> list[Problem]:
    """Schema and semantic problems of one raw case (paths relative to the case; `plain`:
    it holds only JSON's own values, as orjson reads them)."""
    problems = schema_problems("case", raw, plain)
    if not isinstance(raw, dict):
        return problems
    if "exchange_id" in raw and "messages" in raw:
        problems.append((("messages",), "give exchange_id or messages, not both"))
    elif "exchange_id" not in raw and "messages" not in raw:
        problems.append(((), "needs exchange_id (a recorded exchange) or messages (+ tools)"))
    for field in ("tools", "wire_format"):
        if field in raw and "messages" not in raw:
            problems.append(((field,), f"{field} is only used with messages"))
    calls = raw.get("calls") or []
    expect = raw.get("expect", "call")
    for field in ("output", "allow_extra_fields"):
        if field in raw and expect != "output":
            problems.append(((field,), f"{field} is only used with expect: output"))
    if expect == "output":
        if "calls" in raw:
            problems.append((("calls",), "expect: output takes output, not calls"))
        fields = raw.get("output")
        if not isinstance(fields, dict):
            problems.append(((), "expect: output needs output: the fields the reply must hold"))
            fields = {}
        for name, value in fields.items():
            for sub, message in matcher_problems(value):
                problems.append((("output", name, *sub), message))
        return problems
    if raw.get("expect") == "no_call" and calls:
        problems.append((("calls",), "expect: no_call takes no calls"))
    if raw.get("expect", "call") == "call" and not calls:
        problems.append(
            ((), "expect: call needs at least one entry in calls (or write expect: no_call)")
        )
    for i, call in enumerate(calls if isinstance(calls, list) else []):
        args = call.get("args") if isinstance(call, dict) else None
        for name, value in (args or {}).items() if isinstance(args, dict) else ():
            for sub, message in matcher_problems(value):
                problems.append((("calls", i, "args", name, *sub), message))
    return problems
