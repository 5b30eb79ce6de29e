"""How an agent's copy of a tool differs from the server's real definition. Pure.

`diff_tool(server, offered)` compares descriptions and input schemas and returns a flat
list of `Change`s, each at a parameter path: top-level parameters by name (`city`),
nested object properties joined with dots (`filters.since`), array items with `[]`
(`tags[]`), the tool itself at `""`. Local `$ref`s (`#/$defs/X`, `#/definitions/X`, any
`#/...` pointer) are inlined first, so a schema that moved a type into `$defs` compares
equal to one that spells it out. `anyOf`/`oneOf` with one non-null branch (how pydantic
writes `Optional[X]`) compares as that branch plus `null` in its types.

Change kinds (stable strings; `server` and `offered` hold each side's value, null = absent):
    param_added          the copy has a parameter the server does not
    param_removed        the server has a parameter the copy lacks
    type_changed         types differ (sorted lists; null = no type stated)
    required_changed     a parameter both have is required on one side only (booleans)
    enum_changed         allowed values differ (null = no enum)
    description_changed  tool description (path "") or a parameter's description
    keyword_changed      any other keyword differs (`keyword` names it: format, default,
                         minimum, additionalProperties, the root schema's own description,
                         ...); title, $comment, examples, $id and $schema are ignored

Changes come node by node, parents before children, properties in name order. A renamed
parameter is a param_removed plus a param_added.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, Field

from toolproxy.records import canonical_json

ChangeKind = Literal[
    "param_added",
    "param_removed",
    "type_changed",
    "required_changed",
    "enum_changed",
    "description_changed",
    "keyword_changed",
]
# Keywords compared by their own rules below, or not at all (cosmetic / bookkeeping).
_HANDLED = {"type", "properties", "required", "enum", "description", "items", "anyOf", "oneOf"}
_IGNORED = {"title", "$schema", "$id", "$comment", "$defs", "definitions", "examples", "$ref"}
MAX_REF_DEPTH = 32
MAX_INLINED = 10_000


class Change(BaseModel):
    """One difference between the server's definition and the copy the agent sent."""

    kind: ChangeKind
    path: str = Field(description='parameter path (`filters.since`); "" is the tool itself')
    keyword: str | None = Field(default=None, description="for keyword_changed")
    server: Any = Field(default=None, description="the server's value (null: absent)")
    offered: Any = Field(default=None, description="the copy's value (null: absent)")


def _pointer(root: Any, ref: str) -> Any:
    """The value `ref` (`#/a/b`) points at inside `root`, or None."""
    node = root
    for raw in ref[2:].split("/") if ref.startswith("#/") else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node if ref.startswith("#/") or ref == "#" else None


def inline_refs(schema: Any, budget: int = MAX_INLINED) -> Any:
    """`schema` with local `$ref`s replaced by what they point at (siblings win).

    A reference stays as `{"$ref": ...}` when it would recurse into itself, when it is
    remote or dangling, or once `budget` references were inlined (a schema whose
    definitions refer to each other could otherwise grow exponentially).
    """
    left = [budget]

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(v, seen) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref not in seen and len(seen) < MAX_REF_DEPTH and left[0]:
            target = _pointer(schema, ref)
            if isinstance(target, dict):
                left[0] -= 1
                merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
                return walk(merged, (*seen, ref))
        return {k: walk(v, seen) for k, v in node.items()}

    return walk(schema, ())


def _unwrap(schema: Any) -> tuple[dict[str, Any], bool]:
    """(schema, nullable): `anyOf: [X, {type: null}]` becomes X, nullable."""
    if not isinstance(schema, dict):
        return {}, False
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            real = [b for b in branches if b != {"type": "null"}]
            if len(real) == 1 and len(branches) == 2 and isinstance(real[0], dict):
                rest = {k: v for k, v in schema.items() if k != key}
                return {**real[0], **rest}, True
    return schema, False


def types_of(schema: dict[str, Any], nullable: bool = False) -> list[str] | None:
    """The types a schema allows, sorted, or None when it states none."""
    declared = schema.get("type")
    found: set[str] = set()
    if isinstance(declared, str):
        found.add(declared)
    elif isinstance(declared, list):
        found.update(t for t in declared if isinstance(t, str))
    else:
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and all(
                isinstance(b, dict) and isinstance(b.get("type"), str) for b in branches
            ):
                found.update(b["type"] for b in branches)
    if nullable and found:
        found.add("null")
    return sorted(found) if found else None


def _enum(schema: dict[str, Any]) -> list[Any] | None:
    values = schema.get("enum")
    if "const" in schema and values is None:
        values = [schema["const"]]
    return values if isinstance(values, list) else None


def _same_values(a: list[Any] | None, b: list[Any] | None) -> bool:
    if a is None or b is None:
        return a is b
    return sorted(canonical_json(v) for v in a) == sorted(canonical_json(v) for v in b)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _required(schema: dict[str, Any]) -> set[str]:
    req = schema.get("required")
    return {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()


def diff_schemas(server: Any, offered: Any, path: str = "") -> list[Change]:
    """Changes from the server's schema to the copy, recursively (both already inlined)."""
    return list(_diff(server, offered, path))


def _diff(server_raw: Any, offered_raw: Any, path: str) -> Iterator[Change]:
    s, s_null = _unwrap(server_raw)
    o, o_null = _unwrap(offered_raw)
    s_types, o_types = types_of(s, s_null), types_of(o, o_null)
    if s_types != o_types:
        yield Change(kind="type_changed", path=path, server=s_types, offered=o_types)
    s_enum, o_enum = _enum(s), _enum(o)
    if not _same_values(s_enum, o_enum):
        yield Change(kind="enum_changed", path=path, server=s_enum, offered=o_enum)
    if path and s.get("description") != o.get("description"):
        yield Change(
            kind="description_changed",
            path=path,
            server=s.get("description"),
            offered=o.get("description"),
        )
    skip = _HANDLED | _IGNORED | ({"const"} if s_enum or o_enum else set())
    if not path:
        skip = skip - {"description"}  # the root schema's own description, not the tool's
    for key in sorted((set(s) | set(o)) - skip):
        if key in s and key in o and canonical_json(s[key]) == canonical_json(o[key]):
            continue
        yield Change(
            kind="keyword_changed", path=path, keyword=key, server=s.get(key), offered=o.get(key)
        )
    for key in ("anyOf", "oneOf"):
        # unions other than Optional[X]: compared whole when they differ in more than types
        both = key in s and key in o
        if both and s_types == o_types and canonical_json(s[key]) != canonical_json(o[key]):
            yield Change(
                kind="keyword_changed", path=path, keyword=key, server=s[key], offered=o[key]
            )
    s_items, o_items = s.get("items"), o.get("items")
    nested_items = isinstance(s_items, dict) and isinstance(o_items, dict)
    if not nested_items and canonical_json(s_items) != canonical_json(o_items):
        yield Change(
            kind="keyword_changed", path=path, keyword="items", server=s_items, offered=o_items
        )
    yield from _diff_properties(s, o, path)
    if nested_items:
        yield from _diff(s_items, o_items, path + "[]")


def _diff_properties(s: dict[str, Any], o: dict[str, Any], path: str) -> Iterator[Change]:
    s_props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
    o_props = o.get("properties") if isinstance(o.get("properties"), dict) else {}
    assert isinstance(s_props, dict) and isinstance(o_props, dict)
    s_req, o_req = _required(s), _required(o)
    for name in sorted(set(s_props) | set(o_props)):
        at = _join(path, name)
        if name not in o_props:
            yield Change(kind="param_removed", path=at, server=s_props[name])
        elif name not in s_props:
            yield Change(kind="param_added", path=at, offered=o_props[name])
        else:
            if (name in s_req) != (name in o_req):
                yield Change(
                    kind="required_changed", path=at, server=name in s_req, offered=name in o_req
                )
            yield from _diff(s_props[name], o_props[name], at)
    # required names without a property entry ("required": ["x"] on an open schema)
    for name in sorted((s_req ^ o_req) - set(s_props) - set(o_props)):
        yield Change(
            kind="required_changed",
            path=_join(path, name),
            server=name in s_req,
            offered=name in o_req,
        )


def diff_tool(
    server_description: str | None,
    server_schema: Any,
    offered_description: str | None,
    offered_schema: Any,
) -> list[Change]:
    """Every change from the server's tool definition to the copy an agent offered."""
    changes = []
    if (server_description or None) != (offered_description or None):
        changes.append(
            Change(
                kind="description_changed",
                path="",
                server=server_description,
                offered=offered_description,
            )
        )
    changes += diff_schemas(inline_refs(server_schema), inline_refs(offered_schema))
    return changes
