"""Edit one case of an expectations file in place, as the TUI's labeling does.

`save_case` adds a case (after the last one), or replaces the case with the same id, and
leaves every other byte of the file as it was: comments, blank lines, key order, quoting,
indentation and the other cases (comments inside the replaced case go with it). In YAML the
new case's text is spliced over the old one's (its span found with the composed node's
marks, ending at its last value so the comments after it stay); in JSONL its line is
replaced. A file that has problems is reported, not edited, and the new file is loaded back
through `load_cases` before it replaces the old one, so an edit never leaves a file that
does not load. Only a flow-style list (`[{...}, ...]`) is rewritten whole.

`parse_case_text` validates a case written by hand (the editor's text: one YAML mapping)
with the same checks and messages as `load_cases`, lines counted in that text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from toolproxy.grade.casefile import (
    ExpectationError,
    Issue,
    cases_node,
    file_format,
    render,
    write_atomic,
)
from toolproxy.grade.expectations import case_to_dict, dump_cases, load_cases
from toolproxy.grade.model import Case, Provenance

EDITED = "<edited case>"


def case_text(case: Case) -> str:
    """A case as one YAML mapping, the way the editor shows it (its provenance aside: the
    editor writes that itself, `edited`)."""
    form = case_to_dict(case)
    form.pop("provenance", None)
    return _mapping_text(form, indent=0) + "\n"


def edited(case: Case, original: Case, by: str | None, at: str) -> Case:
    """`case` as saved from the editor: the original's provenance (the recorded turn it
    came from) with who edited it, when, and `via: tui`."""
    base = original.provenance or Provenance(exchange_id=case.exchange_id)
    prov = base.model_copy(update={"by": by, "at": at, "via": "tui"})
    return case.model_copy(update={"provenance": prov})


def parse_case_text(text: str) -> Case:
    """The case written in `text` (one YAML mapping); `ExpectationError` naming each problem
    by line and field path, as `load_cases` does for a file."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ExpectationError([Issue(file=EDITED, message=f"not YAML: {exc}")]) from None
    if not isinstance(raw, dict):
        kind = type(raw).__name__
        raise ExpectationError([Issue(file=EDITED, message=f"a case is a mapping, not {kind}")])
    return _load_text("- " + _indented(text.rstrip("\n"), 2) + "\n", "yaml", EDITED)[0]


def cases_by_exchange(path: Path | None) -> dict[str, Case]:
    """The file's cases that grade a recorded exchange, by exchange id (none when the file
    does not exist yet)."""
    if path is None or not path.exists():
        return {}
    return {c.exchange_id: c for c in load_cases([path]) if c.exchange_id}


def save_case(path: Path, case: Case, replacing: str | None = None) -> str:
    """Write `case` into `path`: over the case whose id is `replacing` (default: the case's
    own id) when there is one, else at the end. 'added' or 'replaced'."""
    old_id = replacing or case.id
    if not path.exists():
        dump_cases([case], path, header="expectations written by toolproxy (see `label`)")
        return "added"
    fmt = file_format(path)
    cases = load_cases([path])  # a file with problems is not edited: they are reported
    text = path.read_text(encoding="utf-8")
    spliced = _jsonl_with(text, case, old_id) if fmt == "jsonl" else _yaml_with(text, case, old_id)
    if spliced is None:  # a flow-style list of cases cannot be spliced: it is rewritten
        others = [c for c in cases if c.id != old_id]
        dump_cases([*others, case], path)
        return "replaced" if len(others) < len(cases) else "added"
    new, how = spliced
    _load_text(new, fmt, str(path))  # refuse to write a file that does not load
    write_atomic(path, new)
    return how


def _load_text(text: str, fmt: str, name: str) -> list[Case]:
    """`load_cases` over `text` (through a scratch file), its problems named after `name`;
    an edited case's field paths start at the case."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="toolproxy-case-") as tmp:
        scratch = Path(tmp) / f"cases.{fmt}"
        scratch.write_text(text, encoding="utf-8")
        try:
            return load_cases([scratch])
        except ExpectationError as exc:
            issues = [
                i.model_copy(
                    update={
                        "file": name,
                        "path": i.path.removeprefix("cases[0].") if name == EDITED else i.path,
                    }
                )
                for i in exc.issues
            ]
            raise ExpectationError(issues) from None


def _indented(text: str, by: int) -> str:
    """Every line after the first indented by `by` spaces (blank lines left empty)."""
    first, *rest = text.split("\n")
    pad = " " * by
    return "\n".join([first, *(pad + line if line.strip() else line for line in rest)])


def _mapping_text(case: dict[str, Any], indent: int) -> str:
    """The case's YAML mapping, without the list's `- `, its later lines indented by
    `indent` and no final newline."""
    lines = render([case], "yaml").rstrip("\n").split("\n")
    body = [lines[0].removeprefix("- "), *(line.removeprefix("  ") for line in lines[1:])]
    return _indented("\n".join(body), indent)


def _jsonl_with(text: str, case: Case, old_id: str) -> tuple[str, str]:
    line = json.dumps(case_to_dict(case), ensure_ascii=False)
    lines = text.split("\n")
    for i, existing in enumerate(lines):
        try:
            found = json.loads(existing) if existing.strip() else None
        except ValueError:
            continue
        if isinstance(found, dict) and found.get("id") == old_id:
            lines[i] = line
            return "\n".join(lines), "replaced"
    if text and not text.endswith("\n"):
        text += "\n"
    return text + line + "\n", "added"


def _end(node: yaml.Node, text: str) -> int:
    """Where a node's own text ends: its last value's end, trailing line breaks (a block
    scalar's) and the comments after it left out."""
    if isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style:
        if node.value:
            last = node.value[-1]
            return _end(last[1] if isinstance(last, tuple) else last, text)
    end = node.end_mark.index
    while end > node.start_mark.index and text[end - 1] in "\r\n":
        end -= 1
    return end


def _id_of(item: yaml.Node) -> Any:
    if isinstance(item, yaml.MappingNode):
        for key, value in item.value:
            if getattr(key, "value", None) == "id" and isinstance(value, yaml.ScalarNode):
                return value.value
    return None


def _yaml_with(text: str, case: Case, old_id: str) -> tuple[str, str] | None:
    node = cases_node(text)
    if isinstance(node, yaml.SequenceNode) and node.flow_style and not node.value:
        return _into_empty(text, node, case), "added"
    if node is not None and not (isinstance(node, yaml.SequenceNode) and not node.flow_style):
        return None
    if node is not None:
        for item in node.value:
            if _id_of(item) == old_id:
                start, end = item.start_mark.index, _end(item, text)
                body = _mapping_text(case_to_dict(case), item.start_mark.column)
                return text[:start] + body + text[end:], "replaced"
    column = node.start_mark.column if node is not None else 0
    item = " " * column + "- " + _mapping_text(case_to_dict(case), column + 2)
    if text and not text.endswith("\n"):
        text += "\n"
    at = len(text)
    if node is not None and node.value:  # on the line after the last case's last value
        at = text.index("\n", _end(node.value[-1], text)) + 1
    return text[:at] + item + "\n" + text[at:], "added"


def _into_empty(text: str, node: yaml.Node, case: Case) -> str:
    """`[]` (what an empty file of cases says) replaced by a block list of the case."""
    start, end = node.start_mark.index, node.end_mark.index
    line_start = text.rfind("\n", 0, start) + 1
    before = text[line_start:start]
    if before.strip():  # `cases: []`: the list goes on the next lines, under its key
        column = len(before) - len(before.lstrip()) + 2
        lead = "\n" + " " * column
    else:
        column, lead = node.start_mark.column, ""
    return text[:start] + lead + "- " + _mapping_text(case_to_dict(case), column + 2) + text[end:]
