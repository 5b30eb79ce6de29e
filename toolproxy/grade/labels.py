"""The 11 failure labels: their definitions and precedence, in one place.

Every failing case gets exactly one label. The checker runs in strict order and stops at
the first stage that fails; within a stage, the first matching label in PRECEDENCE wins:

  selection  no_call, spurious_call, wrong_tool, parallel_collapse
  parse      truncation, escaping_error, malformed_json
  schema     missing_required, type_coercion, hallucinated_param, schema_violation
  semantic   missing_required, type_coercion, escaping_error, hallucinated_param (same
             meanings, found by the matchers: a value that matches once converted
             ("10" for 10) is type_coercion; a string that matches once its backslashes
             are read as intended (`{"path": "C:\new"}` parses, but holds a newline) is
             escaping_error; any other mismatch is hallucinated_param)

Example of precedence: expected `get_weather(city="Paris")`, the model emitted
`get_weather({"city": "Par` (stream cut). Selection passes (right tool), parse fails; the
text is a prefix of valid JSON, so the label is `truncation`, not `malformed_json`.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

Label = Literal[
    "no_call",
    "spurious_call",
    "wrong_tool",
    "parallel_collapse",
    "truncation",
    "escaping_error",
    "malformed_json",
    "missing_required",
    "type_coercion",
    "hallucinated_param",
    "schema_violation",
]

DEFINITIONS: dict[str, str] = {
    "no_call": "a tool call was expected and the model made none (answered in text).",
    "spurious_call": "no tool call was expected and the model called a tool anyway.",
    "wrong_tool": "the model called a tool other than the expected one (including names "
    "no offered tool or server has).",
    "parallel_collapse": "several calls were expected in one turn and the model emitted "
    "fewer (merged them, or made only some), all of them expected tools.",
    "truncation": "the argument text ends early: it is a strict prefix of some valid JSON "
    "(cut stream, length limit).",
    "escaping_error": "the argument text fails to parse because of string escaping: invalid "
    "escape sequences, raw control characters or unescaped quotes inside strings, or JSON "
    "double-encoded as a string.",
    "malformed_json": "the argument text is not JSON for any other reason.",
    "missing_required": "an argument the schema or the expectation requires is absent.",
    "type_coercion": "an argument has the wrong JSON type but the right value in another "
    'type ("5" for 5, "true" for true, 1 for "1").',
    "hallucinated_param": "an argument name that is not in the schema, or a present argument "
    "whose value is confidently wrong (fails its matcher).",
    "schema_violation": "any other schema failure: enum, pattern, format, range, length, "
    "wrong type that is not a coercion.",
}

# The Literal above is written in precedence order; this is that order as data.
PRECEDENCE: Final[tuple[Label, ...]] = get_args(Label)
RANK: Final[dict[str, int]] = {label: i for i, label in enumerate(PRECEDENCE)}  # 0 wins

Stage = Literal["selection", "parse", "schema", "semantic"]

# Per-argument buckets: a missing field is never counted as a hallucination.
Bucket = Literal["ok", "hallucinated", "missing", "malformed", "not_graded"]
BUCKETS: dict[str, str] = {
    "ok": "present and matching (or optional and absent)",
    "hallucinated": "present with a confidently wrong value, or an invented argument",
    "missing": "required (by schema or expectation) and absent",
    "malformed": "present but unparseable or badly formatted (type, format, pattern)",
    "not_graded": "needs the LLM judge and none is configured (never counted as passed)",
}


def outranks(label: Label, other: Label | None) -> bool:
    """Whether `label` wins over `other` by PRECEDENCE (over None, always): the one rule
    every choice of a label follows (`first_label`, a case's label, the schema stage's)."""
    return other is None or RANK[label] < RANK[other]


def first_label(labels: list[Label]) -> Label | None:
    """The label that wins by PRECEDENCE among several found (the first of equals), or
    None."""
    best: Label | None = None
    for label in labels:
        if outranks(label, best):
            best = label
    return best
