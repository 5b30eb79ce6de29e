"""The calls a perfect model makes on a task, derived from its expectation (pure).

Each matcher gives one value it accepts: an exact value itself, the first of `values`
(`any_of`, `enum`, `text`), a tolerance's or datetime's own value, a range's lower bound
(else its upper one), and objects and lists built field by field and item by item;
optional matchers are left out. `any`, `regex` and `judge` name no value: a task using them
at a required place has no reference (`NoReference`). The scripted upstream plays these
calls as a suite's "perfect" personality, and the suite's own test checks each one against
its tool's schema.
"""

from __future__ import annotations

from typing import Any

from toolproxy.grade.model import Case, Matcher


class NoReference(ValueError):
    """A matcher that names no value it accepts."""


def reference_calls(case: Case) -> list[tuple[str, dict[str, Any]]]:
    """(tool, arguments) of each expected call, in order; [] for a no_call case."""
    return [
        (call.tool, {k: reference_value(m) for k, m in call.args.items() if not m.optional})
        for call in case.calls
    ]


def reference_value(m: Matcher) -> Any:
    """A value `m` accepts; raises `NoReference` when it names none."""
    if m.kind in ("exact", "tolerance", "datetime", "unordered"):
        return m.value
    if m.kind in ("any_of", "enum"):
        return (m.values or [None])[0]
    if m.kind == "text":
        return m.value if m.values is None else m.values[0]
    if m.kind == "range":
        return m.min if m.min is not None else m.max
    if m.kind == "object":
        fields = m.fields or {}
        return {k: reference_value(v) for k, v in fields.items() if not v.optional}
    if m.kind == "list":
        return [reference_value(v) for v in m.items or []]
    raise NoReference(f"a {m.kind} matcher names no value")
