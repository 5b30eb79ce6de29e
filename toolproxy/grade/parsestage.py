"""Why tool-call argument text is not a JSON object: truncation, escaping, or malformed.

`classify(text)` is the parse stage's label rule (see `toolproxy.grade.labels`):

    None            the text parses (strict JSON) to an object: the parse stage passes
    truncation      the text is a strict prefix of some valid JSON: `scan` reached the end
                    with a string, container, number or literal still open and no error before
    escaping_error  the first error is an invalid `\\` escape or a raw control character in a
                    string; or the text parses once quotes inside strings are escaped
                    (`{"q": "say "hi""}`); or it is an object double-encoded into a JSON
                    string (`"{\\"city\\": \\"Paris\\"}"`)
    malformed_json  anything else: single quotes, trailing commas, NaN, fences, trailing data,
                    empty text, a value that is not an object, nesting too deep to parse

`explain(text)` says why in one line; `diagnose(text)` gives both, and the object, from one
reading (what the grader asks). `scan` is an incremental JSON state machine with its own
stack (no recursion), so it tells "ended early" from "went wrong" on any input, however
deep. All are pure and never raise.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final, Literal

from mypy_extensions import mypyc_attr

from toolproxy.grade.labels import Label
from toolproxy.grade.model import ExpectedCall
from toolproxy.records import ToolCall
from toolproxy.wire.common import parse_arguments

ScanStatus = Literal["complete", "prefix", "empty", "error"]
ErrorKind = Literal["escape", "control", "syntax"]

_WS: Final = " \t\n\r"
_PLAIN: Final = re.compile(r'[^"\\\x00-\x1f]*')
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_SIMPLE_ESCAPES: Final = frozenset('"\\/bfnrt')
_LITERALS: Final = {"t": "true", "f": "false", "n": "null"}
# number DFA: state -> {character class -> next state}; accepting states end a number
_NUMBER: Final[dict[str, dict[str, str]]] = {
    "start": {"-": "minus", "0": "zero", "d": "int"},
    "minus": {"0": "zero", "d": "int"},
    "zero": {".": "dot", "e": "e"},
    "int": {"0": "int", "d": "int", ".": "dot", "e": "e"},
    "dot": {"0": "frac", "d": "frac"},
    "frac": {"0": "frac", "d": "frac", "e": "e"},
    "e": {"+": "sign", "-": "sign", "0": "exp", "d": "exp"},
    "sign": {"0": "exp", "d": "exp"},
    "exp": {"0": "exp", "d": "exp"},
}
_ACCEPTING: Final = frozenset({"zero", "int", "frac", "exp"})
MAX_ENCODED_DEPTH: Final = 3


@dataclass(frozen=True)
class Scan:
    """Where a JSON scan stopped and why."""

    status: ScanStatus  # complete: one valid value; prefix: ended early; empty: no value
    pos: int  # index of the first bad character (error), else len(text)
    kind: ErrorKind | None = None  # for status "error"


def _char_class(c: str) -> str:
    if c == "0":
        return "0"
    if "1" <= c <= "9":
        return "d"
    return "e" if c in "eE" else c


def _scan_string(text: str, i: int) -> tuple[str, int, ErrorKind | None]:
    """From just after an opening quote: ("ok", index after the closing quote) or why not."""
    n = len(text)
    while True:
        i = _PLAIN.match(text, i).end()  # type: ignore[union-attr]  # always matches
        if i >= n:
            return "prefix", n, None
        c = text[i]
        if c == '"':
            return "ok", i + 1, None
        if c == "\\":
            if i + 1 >= n:
                return "prefix", n, None
            e = text[i + 1]
            if e in _SIMPLE_ESCAPES:
                i += 2
                continue
            if e != "u":
                return "error", i, "escape"
            for k in range(i + 2, i + 6):
                if k >= n:
                    return "prefix", n, None
                if text[k] not in _HEX:
                    return "error", i, "escape"
            i += 6
            continue
        return "error", i, "control"  # a raw character below U+0020


def _scan_number(text: str, i: int) -> tuple[str, int]:
    state, n = "start", len(text)
    while i < n:
        nxt = _NUMBER[state].get(_char_class(text[i]))
        if nxt is None:
            return ("ok", i) if state in _ACCEPTING else ("error", i)
        state, i = nxt, i + 1
    return ("ok", n) if state in _ACCEPTING else ("prefix", n)


def _scan_literal(text: str, i: int) -> tuple[str, int]:
    word = _LITERALS[text[i]]
    got = text[i : i + len(word)]
    if got == word:
        return "ok", i + len(word)
    if word.startswith(got) and i + len(got) == len(text):
        return "prefix", len(text)
    return "error", i


def scan(text: str) -> Scan:
    """Run the JSON state machine over `text` (strict JSON: no NaN, no trailing data)."""
    stack: list[str] = []
    mode, i, n = "value", 0, len(text)
    while i < n:
        c = text[i]
        if c in _WS:
            i += 1
            continue
        if mode in ("value", "value_or_close"):
            if mode == "value_or_close" and c == "]":
                stack.pop()
                mode, i = ("after" if stack else "end"), i + 1
                continue
            if c in "{[":
                stack.append(c)
                mode, i = ("key_or_close" if c == "{" else "value_or_close"), i + 1
                continue
            if c == '"':
                status, i, kind = _scan_string(text, i + 1)
            elif c == "-" or "0" <= c <= "9":
                status, i = _scan_number(text, i)
                kind = "syntax"
            elif c in _LITERALS:
                status, i = _scan_literal(text, i)
                kind = "syntax"
            else:
                return Scan("error", i, "syntax")
            if status != "ok":
                return Scan("prefix", n) if status == "prefix" else Scan("error", i, kind)
            mode = "after" if stack else "end"
        elif mode in ("key_or_close", "key"):
            if mode == "key_or_close" and c == "}":
                stack.pop()
                mode, i = ("after" if stack else "end"), i + 1
            elif c == '"':
                status, i, kind = _scan_string(text, i + 1)
                if status != "ok":
                    return Scan("prefix", n) if status == "prefix" else Scan("error", i, kind)
                mode = "colon"
            else:
                return Scan("error", i, "syntax")
        elif mode == "colon":
            if c != ":":
                return Scan("error", i, "syntax")
            mode, i = "value", i + 1
        elif mode == "after":
            top = stack[-1]
            if c == ",":
                mode = "key" if top == "{" else "value"
            elif (c == "}" and top == "{") or (c == "]" and top == "["):
                stack.pop()
                mode = "after" if stack else "end"
            else:
                return Scan("error", i, "syntax")
            i += 1
        else:  # "end": only whitespace may follow the value
            return Scan("error", i, "syntax")
    if mode == "end":
        return Scan("complete", n)
    if mode == "value" and not stack:
        return Scan("empty", n)
    return Scan("prefix", n)


def repair_escapes(text: str) -> str:
    """`text` with the usual escaping mistakes fixed inside strings: quotes that do not end
    a string (not followed by `,:}]` or the end) escaped, bad backslashes doubled, raw
    control characters escaped. Heuristic; used only to ask "would escaping fix it?"."""
    out: list[str] = []
    in_string, i, n = False, 0, len(text)
    while i < n:
        c = text[i]
        if not in_string:
            in_string = c == '"'
            out.append(c)
        elif c == "\\":
            e = text[i + 1] if i + 1 < n else ""
            u_ok = e == "u" and all(ch in _HEX for ch in text[i + 2 : i + 6])
            if e and (e in _SIMPLE_ESCAPES or u_ok):
                out.append(c + e)
                i += 1
            else:
                out.append("\\\\")
        elif c == '"':
            rest = text[i + 1 :].lstrip(_WS)
            closes = not rest or rest[0] in ",:}]"
            out.append('"' if closes else '\\"')
            in_string = not closes
        elif c < " ":
            out.append(json.dumps(c)[1:-1])
        else:
            out.append(c)
        i += 1
    return "".join(out)


def decode_nested(value: object) -> object:
    """An object double-encoded as JSON text inside a JSON string, decoded; else `value`."""
    for _ in range(MAX_ENCODED_DEPTH):
        if not isinstance(value, str):
            break
        inner, error = parse_arguments(value)
        if error is not None or not isinstance(inner, dict | str):
            break
        value = inner
    return value


Reading = tuple[dict[str, Any] | None, Label | None, str]


def classify(text: str) -> Label | None:
    """The parse-stage label of argument `text`, or None when it is a JSON object."""
    return diagnose(text)[1]


def diagnose(text: str) -> Reading:
    """`text` read once for the parse stage: (the object, None, "") when it is a JSON
    object, else (None, its label (`classify`), why (`explain`)). One parse and at most
    one scan, where the label and the words apart parsed and scanned twice."""
    value, error = parse_arguments(text)
    if error is None:
        return _value_reading(value, "inside a JSON string")
    found = scan(text)
    if found.status == "prefix":
        return None, "truncation", f"arguments end early ({error})"
    if found.status == "error" and found.kind in ("escape", "control"):
        return None, "escaping_error", error
    if found.status == "error":
        fixed, fix_error = parse_arguments(repair_escapes(text))
        if fix_error is None and isinstance(fixed, dict):
            return None, "escaping_error", error
    return None, "malformed_json", error


def _value_reading(value: object, encoded: str) -> Reading:
    """A parsed value read for the parse stage (`encoded`: where an object hid, in words)."""
    if isinstance(value, dict):
        return value, None, ""
    if isinstance(value, str) and isinstance(decode_nested(value), dict):
        return None, "escaping_error", f"arguments are a JSON object encoded {encoded}"
    return None, "malformed_json", f"arguments are a JSON {json_type(value)}, not an object"


_JSON_NAMES: Final[dict[type, str]] = {dict: "object", list: "array", str: "string"}  # built once


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type: object, array, string, number, boolean, null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or isinstance(value, float):
        return "number"
    return _JSON_NAMES.get(type(value), type(value).__name__)


def explain(text: str) -> str:
    """One line saying why `text` is not a JSON object ("" when it is one)."""
    return diagnose(text)[2]


@mypyc_attr(acyclic=True, free_list_len=1)
class Call:
    """One observed call as the grader reads it: the `ToolCall`'s fields that every call
    needs copied once into a plain record (native when compiled: reading a pydantic model's
    field goes through its `__getattr__` hook), and its arguments read once
    (`call_arguments`), for pairing and the parse stage both. The raw text is read from the
    `ToolCall` (`call`) only when the wire parser's reading is not used: copied, each call's
    text was touched (its count of references) for nothing, one more memory line a call.
    `proven`: the expected call whose every argument pairing found present and matching
    (`pairing._prove`), so the semantic stage need not match again. Compiled, one per call
    and dropped with its case: acyclic (nothing it holds leads back to it) and remade from
    the last dropped one (`grade.grades` says why)."""

    __slots__ = ("call", "call_id", "name", "arguments", "parse_error", "read", "proven")

    def __init__(self, call: ToolCall) -> None:
        fields = call.__dict__  # where pydantic keeps them: a third of four attribute reads
        self.call = call  # its raw text read from here, only when its reading is not used
        self.call_id: str | None = fields["call_id"]
        self.name: str | None = fields["name"]
        self.arguments: Any = fields["arguments"]
        self.parse_error: str | None = fields["parse_error"]
        self.read: Reading | None = None  # `_read`'s answer, once asked
        self.proven: ExpectedCall | None = None  # set by pairing only


def views(calls: list[ToolCall]) -> list[Call]:
    """The grader's `Call` of each tool call."""
    return [Call(c) for c in calls]


def call_arguments(o: Call, incomplete: bool) -> Reading:
    """A call's arguments as an object, or the parse stage's label and why (`incomplete`:
    the reply ended early, so text that does not parse is truncation)."""
    read = o.read
    if read is None:
        read = o.read = _read(o)
    label = read[1]
    if incomplete and label is not None and label != "truncation" and not _parsed(o):
        return None, "truncation", f"the reply ended early: {read[2]}"
    return read


def _parsed(o: Call) -> bool:
    """Did the wire parser read the arguments (its reading is used as it is)?"""
    return o.arguments is not None and o.parse_error is None


def _read(o: Call) -> Reading:
    if _parsed(o):  # the wire parser's reading, as it is
        return _value_reading(o.arguments, "in a string")
    value, label, why = diagnose(o.call.arguments_raw)
    if label is None:
        return value, None, ""
    return None, label, why or o.parse_error or "arguments do not parse"
