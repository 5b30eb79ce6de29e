"""BFCL-shaped grading work: BFCL's own cases with model outputs written here, in both forms.

Each BFCL case (its functions and possible answers, from the wheel's data) gets one model
output, seeded: right (the first acceptable value of every parameter, optional ones left
out), a wrong value, a missing required argument, an invented argument, "5" for 5, an
extra call, a wrong tool (where the case offers another), or the calls of a parallel case
in another order. The output is then given two ways:

- BFCL's: `(functions, model_output, ground_truth, category)` for `ast_checker`;
- toolproxy's: a `Case` (possible answers as matchers: one value exact, several any_of,
  "" among them optional; no arguments beyond them) and an `Observation` whose offered
  tools are the functions as OpenAI sees them (as BFCL converts them: dots in names to
  underscores, BFCL types to JSON Schema types by its own `GORILLA_TO_OPENAPI`).
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass
from typing import Any, Literal

from bfcl_arm import type_mapping  # type: ignore[import-not-found]

from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation
from toolproxy.records import ToolCall

KINDS = (
    "right",
    "right",
    "right",
    "right",
    "right",
    "wrong_value",
    "missing",
    "invented",
    "as_string",
    "extra_call",
    "wrong_tool",
    "reordered",
)


@dataclass
class Work:
    """One case in both forms, and how many calls its output holds."""

    bfcl: tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], str]
    case: Case
    observation: Observation
    calls: int
    kind: str


def oai_name(name: str) -> str:
    return name.replace(".", "_")


def to_schema(node: Any) -> Any:
    """A BFCL parameter schema as JSON Schema (BFCL's GORILLA_TO_OPENAPI mapping)."""
    if isinstance(node, list):
        return [to_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            out[key] = type_mapping().get(value, "string")
        elif key == "properties" and isinstance(value, dict):
            out[key] = {k: to_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = to_schema(value)
        elif key in ("optional", "default"):
            continue  # BFCL annotations, not JSON Schema constraints we need
        else:
            out[key] = value
    if out.get("type") == "object" or "properties" in out:
        out["type"] = "object"
    return out


def offered(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"name": oai_name(f["name"]), "parameters": to_schema(f["parameters"])} for f in functions
    ]


def _right(answer: dict[str, list[Any]]) -> dict[str, Any]:
    args = {}
    for param, values in answer.items():
        chosen = next((v for v in values if v != ""), None)
        if chosen is not None:
            args[param] = copy.deepcopy(chosen)
    return args


def _matcher(values: list[Any]) -> Matcher:
    real = [v for v in values if v != ""]
    optional = len(real) < len(values)
    if not real:
        return Matcher(kind="any", optional=True)
    if len(real) == 1:
        return Matcher(kind="exact", value=real[0], optional=optional)
    return Matcher(kind="any_of", values=real, optional=optional)


def _spoil(kind: str, args: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    args = dict(args)
    if kind == "wrong_value" and args:
        key = rng.choice(sorted(args))
        value = args[key]
        args[key] = (
            value + 1
            if isinstance(value, int | float) and not isinstance(value, bool)
            else "something else"
        )
    elif kind == "missing" and args:
        del args[rng.choice(sorted(args))]
    elif kind == "invented":
        args["verbose"] = True
    elif kind == "as_string":
        numbers = [k for k, v in args.items() if isinstance(v, int) and not isinstance(v, bool)]
        if numbers:
            args[numbers[0]] = str(args[numbers[0]])
    return args


def build(raw: dict[str, Any], index: int, rng: random.Random) -> Work:
    functions, truth, category = raw["function"], raw["ground_truth"], raw["category"]
    kind = rng.choice(KINDS)
    output = []  # (name as the model called it, arguments)
    for call in truth:
        ((name, answer),) = call.items()
        output.append((oai_name(name), _spoil(kind, _right(answer), rng)))
    if kind == "extra_call" and output:
        output.append(output[-1])
    if kind == "wrong_tool":
        others = [f for f in functions if f["name"] not in {next(iter(c)) for c in truth}]
        if others:
            output[0] = (oai_name(others[0]["name"]), output[0][1])
    if kind == "reordered" and len(output) > 1:
        output.reverse()
    model_output = [{name: args} for name, args in output]
    expected = [
        ExpectedCall(
            tool=oai_name(name),
            args={p: _matcher(v) for p, v in answer.items()},
            allow_extra_args=False,
        )
        for call in truth
        for name, answer in call.items()
    ]
    order: Literal["ordered", "unordered"] = "unordered" if "parallel" in category else "ordered"
    case = Case(id=f"{raw['id']}#{index}", exchange_id=f"ex-{index}", calls=expected, order=order)
    observed = [
        ToolCall(
            index=i,
            call_id=f"call_{index}_{i}",
            name=name,
            arguments_raw=json.dumps(args),
            arguments=args,
        )
        for i, (name, args) in enumerate(output)
    ]
    observation = Observation(exchange_id=f"ex-{index}", calls=observed, offered=offered(functions))
    return Work((functions, model_output, truth, category), case, observation, len(output), kind)


def workload(raw_cases: list[dict[str, Any]], n: int, seed: int) -> list[Work]:
    """`n` cases taken round-robin across BFCL's categories, each with its own output."""
    by_category: dict[str, list[dict[str, Any]]] = {}
    for raw in raw_cases:
        by_category.setdefault(raw["category"], []).append(raw)
    order = [c for cases in zip(*by_category.values(), strict=False) for c in cases]
    seen = {c["id"] for c in order}
    order += [c for c in raw_cases if c["id"] not in seen]
    rng = random.Random(seed)
    return [build(order[i % len(order)], i, rng) for i in range(n)]


def distinct_schemas(work: list[Work]) -> int:
    return len(
        {json.dumps(t["parameters"], sort_keys=True) for w in work for t in w.observation.offered}
    )
