"""The text layer of expectation files: YAML and JSONL in, raw cases with line numbers out.

`read_located` gives each raw case (plain dicts and lists, as the file spelled them) with a
function from a field path inside it to the 1-based line of that node, so validation
errors can point at the line. `render` writes cases' dicts back as text. YAML is read with
YAML 1.2 core scalars (only `true`/`false` are booleans, JSON-like numbers, no timestamps),
so `country: NO`, `when: 2024-05-01` and `at: 12:30` keep the text that was written.
The case format itself and its validation live in `toolproxy.grade.expectations`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Final, NamedTuple

import orjson
import yaml
from pydantic import BaseModel, Field

from toolproxy.errors import UserError
from toolproxy.util.jsonfast import SLOW as _SLOW
from toolproxy.util.jsonfast import error_where, fast_loads
from toolproxy.util.textfile import Unreadable, read_text
from toolproxy.util.words import counted

FieldPath = tuple[str | int, ...]  # a field path inside one case: ("calls", 0, "tool")


class Located(NamedTuple):
    """A raw case with a function from a path inside it to its 1-based line."""

    raw: Any
    line_of: Callable[[FieldPath], int]
    plain: bool = False  # read by orjson: only JSON's own values (`jsonfast.plain_json`)


class Issue(BaseModel):
    """One thing wrong in an expectation file."""

    file: str = Field(description="the file, as given")
    line: int | None = Field(default=None, description="1-based line of the offending node")
    path: str = Field(default="", description="field path, e.g. cases[3].calls[0].tool")
    message: str = Field(description="what is wrong, and where useful what would be right")

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class ExpectationError(UserError):
    """Expectation files that do not validate; `issues` lists every problem found."""

    def __init__(self, issues: Sequence[Issue]) -> None:
        self.issues = sorted(issues, key=lambda i: (i.file, i.line or 0, i.path))
        n = len(self.issues)
        lines = "\n".join(f"  {i}" for i in self.issues)
        super().__init__(f"{counted(n, 'problem')} in expectation files:\n{lines}")


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core scalars: booleans are only true/false, numbers are
    JSON-like (no `0x`, sexagesimal `12:30` or `1_000`), timestamps stay strings."""


_TAG = "tag:yaml.org,2002:"
_CORE = {
    _TAG + "bool": (r"true|True|TRUE|false|False|FALSE", "tTfF"),
    _TAG + "int": (r"[-+]?(?:0|[1-9][0-9]*)", "-+0123456789"),
    _TAG + "float": (
        r"[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*|[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+)"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
        "-+.0123456789",
    ),
}
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in found if tag not in (*_CORE, _TAG + "timestamp")]
    for first, found in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _tag, (_regex, _first) in _CORE.items():
    _Loader.add_implicit_resolver(_tag, re.compile(f"^(?:{_regex})$"), list(_first))


class _Dumper(yaml.SafeDumper):
    """Block style, lists indented under their key, no anchors (a value used twice is
    written twice), multi-line strings as literal blocks; strings that YAML 1.1 readers or
    ours would read as another type (`yes`, dates, `1e3`) are quoted."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)  # lists indented under their key, as people write


def _str(dumper: yaml.SafeDumper, s: str) -> yaml.ScalarNode:
    # PyYAML writes these unescaped in plain and single-quoted scalars, where YAML reads
    # them as line breaks; double quotes escape them.
    if any(c in s for c in "\x85\u2028\u2029"):
        return dumper.represent_scalar(_TAG + "str", s, style='"')
    return dumper.represent_scalar(_TAG + "str", s, style="|" if "\n" in s else None)


_Dumper.add_representer(str, _str)
# Quote a string when either YAML 1.1 readers or ours would read it as something else.
for _tag, (_regex, _first) in _CORE.items():
    _Dumper.add_implicit_resolver(_tag, re.compile(f"^(?:{_regex})$"), list(_first))


SUFFIXES: Final = {".yaml": "yaml", ".yml": "yaml", ".jsonl": "jsonl"}
SUFFIX_RULE: Final = "expectation files end in .yaml, .yml or .jsonl"


def file_format(path: Path) -> str:
    """'yaml' (.yaml/.yml) or 'jsonl' by suffix; `UserError` for anything else."""
    if (fmt := SUFFIXES.get(path.suffix)) is None:
        raise UserError(f"{path}: {SUFFIX_RULE}")
    return fmt


def format_path(path: Iterable[str | int], prefix: str = "") -> str:
    """`cases[3].calls[0].args.city` from ("calls", 0, "args", "city") and `cases[3]`."""
    out = prefix
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def yaml_line(node: yaml.Node, path: FieldPath) -> int:
    """Line of the deepest node on `path`; a mapping entry reports its key's line."""
    line = node.start_mark.line + 1
    for part in path:
        if isinstance(node, yaml.MappingNode):
            hit = [(k, v) for k, v in node.value if getattr(k, "value", None) == part]
            if not hit:
                break
            line, node = hit[-1][0].start_mark.line + 1, hit[-1][1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _duplicate_keys(node: yaml.Node) -> Iterable[tuple[int, str]]:
    if isinstance(node, yaml.MappingNode):
        seen: set[Any] = set()
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value in seen:
                yield k.start_mark.line + 1, k.value
            seen.add(getattr(k, "value", None))
            yield from _duplicate_keys(v)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _duplicate_keys(item)


def cases_node(text: str) -> yaml.Node | None:
    """The YAML node of the list of cases (top level, or under `cases:`); None if empty."""
    node = yaml.compose(text, Loader=_Loader)
    return _under_cases(node) or node


def _under_cases(node: yaml.Node | None) -> yaml.Node | None:
    """The list under `cases:` of a mapping whose other keys all start with `x-` (shared
    definitions for YAML anchors, as a suite file has), else None."""
    if not isinstance(node, yaml.MappingNode):
        return None
    keys = [getattr(k, "value", None) for k, _ in node.value]
    if "cases" not in keys or not all(k == "cases" or str(k).startswith("x-") for k in keys):
        return None
    value = node.value[keys.index("cases")][1]
    return value if isinstance(value, yaml.SequenceNode) else None


def _read_yaml(path: Path, text: str, issues: list[Issue]) -> list[Located]:
    try:
        loader = _Loader(text)
    except yaml.YAMLError as e:  # the reader refuses control characters before parsing
        issues.append(Issue(file=str(path), line=None, message=f"not valid YAML: {e}"))
        return []
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else None
        message = f"not valid YAML: {e.problem}"
        if e.context and e.context_mark and e.problem_mark:
            message += f" ({e.context} opened at line {e.context_mark.line + 1})"
        issues.append(Issue(file=str(path), line=line, message=message))
        return []
    finally:
        loader.dispose()
    if node is None:
        return []
    for line, key in _duplicate_keys(node):
        issues.append(Issue(file=str(path), line=line, message=f"duplicate key {key!r}"))
    listed = _under_cases(node)
    if isinstance(data, dict) and listed is not None:
        data, node = data["cases"], listed
    if not isinstance(data, list):
        message = "expected a list of cases, or a mapping {cases: [...]} (other keys: x-...)"
        issues.append(Issue(file=str(path), line=node.start_mark.line + 1, message=message))
        return []
    pairs = zip(data, node.value, strict=True)
    return [Located(raw, partial(yaml_line, item)) for raw, item in pairs]


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        keys = [k for k, _ in pairs]
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"duplicate key {dup!r}")
    return found


def _fixed_line(line: int, path: FieldPath) -> int:
    return line


def _fast_line(line: str) -> Any:
    """`jsonfast.fast_loads` of the line when no key is duplicated in it; else _SLOW (then
    the json module reads it and words any error). A key written twice loses a pair when
    parsed, so orjson writes the value back with fewer colons than the line has (colons
    inside strings are kept either way; an escaped one would upset the count)."""
    if "\\u" in line:
        return _SLOW
    raw = fast_loads(line)
    if raw is _SLOW or orjson.dumps(raw).count(b":") != line.count(":"):
        return _SLOW
    return raw


def read_jsonl(path: Path, text: str, issues: list[Issue], first_line: int = 1) -> list[Located]:
    """The raw cases of JSONL `text` (part of `path` that starts at line `first_line`)."""
    out: list[Located] = []
    for n, line in enumerate(text.split("\n"), start=first_line):  # U+2028 is data
        if not line.strip():
            continue
        raw = _fast_line(line)
        if raw is not _SLOW:
            out.append(Located(raw, partial(_fixed_line, n), plain=True))
            continue
        try:
            raw = json.loads(line, object_pairs_hook=_no_duplicates)
        except json.JSONDecodeError as e:  # its own "line 1" would mislead: say the column
            message = f"not valid JSON: {error_where(e, f'column {e.colno}')}"
            issues.append(Issue(file=str(path), line=n, message=message))
            continue
        except ValueError as e:  # a duplicate key
            issues.append(Issue(file=str(path), line=n, message=f"not valid JSON: {e}"))
            continue
        out.append(Located(raw, partial(_fixed_line, n)))
    return out


def read_located(path: Path, issues: list[Issue]) -> list[Located]:
    """The raw cases of one file with their line lookup; read problems go to `issues`."""
    if (fmt := SUFFIXES.get(path.suffix)) is None:
        issues.append(Issue(file=str(path), message=SUFFIX_RULE))
        return []
    try:
        text = read_text(path)
    except Unreadable as e:  # the file leads the line: not named again
        issues.append(Issue(file=str(path), message=f"cannot read: {e}"))
        return []
    return (_read_yaml if fmt == "yaml" else read_jsonl)(path, text, issues)


def render(dicts: Sequence[dict[str, Any]], fmt: str) -> str:
    """Text of cases' dicts: 'yaml' a block list (key order kept), 'jsonl' one per line."""
    if fmt == "jsonl":
        return "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in dicts)
    if not dicts:
        return ""
    return yaml.dump(
        list(dicts),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
