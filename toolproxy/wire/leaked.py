"""Tool calls a serving stack left in the assistant's text (pure).

When the server's tool-call parser does not match the model (vLLM's
`--tool-call-parser hermes | llama3_json | mistral | pythonic | …`, a llama.cpp chat format,
a template that drops the tools), the model's call comes back as plain assistant text and
the response has no tool calls: to a grader that is `no_call`, though the model may have
chosen right. `find_leaked_calls` reads such text back into calls, naming the format:

| format         | what the text looks like                                          |
| -------------- | ----------------------------------------------------------------- |
| `hermes`       | `<tool_call>{"name": …, "arguments": {…}}</tool_call>` (Hermes, Qwen) |
| `llama3_json`  | `<\\|python_tag\\|>{"name": …, "parameters": {…}}` (Llama 3.1+)      |
| `mistral`      | `[TOOL_CALLS][{"name": …, "arguments": {…}}]` or `[TOOL_CALLS]name[ARGS]{…}` |
| `function_tag` | `<function=name>{…}</function>` (Llama 3.1 custom tools, Functionary) |
| `pythonic`     | `[get_weather(city="Paris"), …]`, the whole reply (Llama 4, vLLM `pythonic`) |
| `bare_json`    | `{"name": …, "arguments": {…}}` (or `parameters`), or a list: the whole reply |

(`bare_json` may sit in a ```json fence.)

Tagged formats are taken whatever the name (a wrong name is then graded as such); the
untagged ones (`pythonic`, `bare_json`) only when every name is an offered tool, so a
reply that is JSON for another reason is not taken for a call. Nothing is looked for when
no tool was offered. A block whose JSON does not parse is still a leaked call: its name
read off the text when it can be, `parse_error` saying why (a cut stream leaves such a
block, without its closing tag).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from toolproxy.records import ToolCall
from toolproxy.wire.common import parse_arguments

FORMATS = ("hermes", "llama3_json", "mistral", "function_tag", "pythonic", "bare_json")

_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)
_FUNCTION = re.compile(r"<function=([^>\s]+)>\s*(.*?)\s*(?:</function>|\Z)", re.S)
_MISTRAL_ARGS = re.compile(r"\s*([\w.\-]+)\[ARGS\]")
_NAME = re.compile(r'"name"\s*:\s*"([^"\\]+)"')
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Leak:
    """The calls found in a reply's text, and the format they were written in."""

    format: str
    calls: tuple[ToolCall, ...]


def find_leaked_calls(text: str | None, offered: Collection[str]) -> Leak | None:
    """The tool calls `text` holds in one of `FORMATS` (the first format found), else None;
    `offered`: the names of the tools the request offered (none: nothing is looked for)."""
    if not text or not offered:
        return None
    for name, finder in _FINDERS:
        found = finder(text, offered)
        if found:
            return Leak(name, tuple(c.model_copy(update={"index": i}) for i, c in enumerate(found)))
    return None


def _call(name: Any, arguments: Any) -> ToolCall | None:
    """A call from a parsed name and arguments (an object, or JSON text of one)."""
    if not isinstance(name, str) or not name:
        return None
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        value, error = parse_arguments(arguments)
        return ToolCall(name=name, arguments_raw=arguments, arguments=value, parse_error=error)
    raw = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(name=name, arguments_raw=raw, arguments=arguments)


def _from_object(value: Any) -> ToolCall | None:
    """`{"name": …, "arguments" | "parameters": …}` as a call."""
    if not isinstance(value, dict):
        return None
    arguments = value.get("arguments", value.get("parameters"))
    return _call(value.get("name"), arguments)


def _from_block(body: str) -> ToolCall | None:
    """A tagged block's JSON object as a call; JSON that does not parse still is one, its
    name read off the text (None when there is not even a name)."""
    value, error = parse_arguments(body)
    if error is None:
        return _from_object(value)
    named = _NAME.search(body)
    if named is None:
        return None
    return ToolCall(name=named.group(1), arguments_raw=body, parse_error=error)


def _decoded_run(text: str) -> list[Any]:
    """The JSON values one after another in `text` (separated by whitespace, `;` or `,`),
    up to the first thing that is not one."""
    values: list[Any] = []
    at = 0
    while True:
        while at < len(text) and text[at] in " \t\r\n;,":
            at += 1
        if at >= len(text):
            return values
        try:
            value, at = _DECODER.raw_decode(text, at)
        except ValueError:
            return values
        values.append(value)


def _hermes(text: str, offered: Collection[str]) -> list[ToolCall]:
    if "<tool_call>" not in text:
        return []
    return [c for m in _HERMES.finditer(text) if (c := _from_block(m.group(1)))]


def _llama3(text: str, offered: Collection[str]) -> list[ToolCall]:
    _, tag, rest = text.partition("<|python_tag|>")
    if not tag:
        return []
    return [c for v in _decoded_run(rest) if (c := _from_object(v))]


def _mistral(text: str, offered: Collection[str]) -> list[ToolCall]:
    _, tag, rest = text.partition("[TOOL_CALLS]")
    if not tag:
        return []
    if rest.lstrip().startswith("["):
        values = _decoded_run(rest)
        items = values[0] if values and isinstance(values[0], list) else []
        return [c for v in items if (c := _from_object(v))]
    calls = []
    for m in _MISTRAL_ARGS.finditer(rest):  # name[ARGS]{...} (tokenizer v11 and later)
        args = _decoded_run(rest[m.end() :])
        if args and (c := _call(m.group(1), args[0])):
            calls.append(c)
    return calls


def _function_tag(text: str, offered: Collection[str]) -> list[ToolCall]:
    if "<function=" not in text:
        return []
    calls = []
    for m in _FUNCTION.finditer(text):
        body = m.group(2) or "{}"
        call = _call(m.group(1), body)
        if call is not None:
            calls.append(call)
    return calls


def _pythonic(text: str, offered: Collection[str]) -> list[ToolCall]:
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]") and "(" in body):
        return []
    try:
        tree = ast.parse(body, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return []
    if not isinstance(tree, ast.List) or not tree.elts:
        return []
    calls = []
    for node in tree.elts:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.args:
            return []
        if node.func.id not in offered:
            return []
        try:
            arguments = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
        except (ValueError, SyntaxError, RecursionError):
            return []
        calls.append(
            ToolCall(name=node.func.id, arguments_raw=json.dumps(arguments), arguments=arguments)
        )
    return calls


def _bare_json(text: str, offered: Collection[str]) -> list[ToolCall]:
    body = text.strip()
    fenced = _FENCE.match(body)
    body = fenced.group(1) if fenced else body
    if not body.startswith(("{", "[")):
        return []
    value, error = parse_arguments(body)
    items = value if isinstance(value, list) else [value]
    if error is not None or not items:
        return []
    calls = [_from_object(v) for v in items]
    if any(c is None or c.name not in offered for c in calls):
        return []
    return [c for c in calls if c is not None]


_FINDERS: tuple[tuple[str, Callable[[str, Collection[str]], list[ToolCall]]], ...] = (
    ("hermes", _hermes),
    ("llama3_json", _llama3),
    ("mistral", _mistral),
    ("function_tag", _function_tag),
    ("pythonic", _pythonic),
    ("bare_json", _bare_json),
)
