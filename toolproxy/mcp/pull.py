"""`toolproxy mcp pull`: the real tool schemas from MCP servers, into the capture and git.

One run: find the servers (configs as the user has them, or ad hoc), fetch every server's
tools at once (``mcp.client``), check them, then for each server that fully succeeded write
one ``mcp_tools`` row per tool (all under one ``pull_id`` and ``pulled_at``) and replace its
snapshot folder (``snapshot``). A server that failed in any way, an invalid schema included,
writes nothing: no rows, no snapshot change. Secrets from the configs (header, env and input
values) are masked in everything stored, written or printed.

Without --config, --stdio or --url, every config that exists among these is read, in this
order; a server name found twice keeps its first definition (project before user):
``./.vscode/mcp.json``, ``./.cursor/mcp.json``, ``./.mcp.json``, ``~/.cursor/mcp.json``, and
Claude Desktop's ``claude_desktop_config.json`` (``$XDG_CONFIG_HOME`` or ``~/.config``
``/Claude/`` on Linux, ``~/Library/Application Support/Claude/`` on macOS,
``%APPDATA%\\Claude\\`` on Windows).

Exit codes: 0 every server pulled, 1 some server failed, 2 usage error (``UserError``).
"""

from __future__ import annotations

import secrets
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import Any

from jsonschema import Draft202012Validator, SchemaError, validators

from toolproxy import store
from toolproxy.errors import UserError
from toolproxy.mcp import client as mcpclient
from toolproxy.mcp import snapshot
from toolproxy.mcp.adhoc import adhoc_specs
from toolproxy.mcp.config import (
    Context,
    ServerSpec,
    mask,
    parse_config,
    parse_dotenv,
)
from toolproxy.mcp.outcomes import Failure, Listing
from toolproxy.records import McpTool, schema_hash
from toolproxy.store.segments import SegmentWriter
from toolproxy.util.table import format_table
from toolproxy.util.textfile import Unreadable, read_text


@dataclass(frozen=True)
class ServerResult:
    """One server's line of the report."""

    server: str
    transport: str
    source: str
    status: str  # ok | failed
    tools: int | None = None
    new: int | None = None  # tool names the previous pull in the capture did not have
    changed: int | None = None  # tools whose definition differs from the previous pull
    removed: int | None = None  # tools of the previous pull this one no longer has
    snapshot_changed: bool | None = None
    server_name: str | None = None
    server_version: str | None = None
    protocol_version: str | None = None
    error_kind: str | None = None  # outcomes.Failure's kinds, plus "snapshot"
    error: str | None = None


def default_paths(
    cwd: PurePath, home: PurePath, platform: str, environ: Mapping[str, str]
) -> list[PurePath]:
    """Where configs usually live, project first then user: the discovery order."""
    if platform == "darwin":
        claude = home / "Library" / "Application Support" / "Claude"
    elif platform.startswith("win"):
        claude = PurePath(environ.get("APPDATA", str(home / "AppData" / "Roaming"))) / "Claude"
    else:
        claude = PurePath(environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude"
    return [
        cwd / ".vscode" / "mcp.json",
        cwd / ".cursor" / "mcp.json",
        cwd / ".mcp.json",
        home / ".cursor" / "mcp.json",
        claude / "claude_desktop_config.json",
    ]


def workspace_of(config: PurePath, cwd: PurePath) -> PurePath:
    """``${workspaceFolder}``: the folder holding ``.vscode/`` or ``.cursor/``, else cwd."""
    if config.parent.name in (".vscode", ".cursor"):
        return config.parent.parent
    return cwd


def merge_specs(specs: Sequence[ServerSpec]) -> tuple[list[ServerSpec], list[str]]:
    """One spec per name, the first found winning (project configs before user ones).

    Returns the specs and a note for each entry skipped.
    """
    kept: dict[str, ServerSpec] = {}
    notes = []
    for spec in specs:
        if spec.name in kept:
            notes.append(
                f"server '{spec.name}' in {spec.source} skipped: "
                f"already defined in {kept[spec.name].source}"
            )
        else:
            kept[spec.name] = spec
    return list(kept.values()), notes


def select_specs(specs: Sequence[ServerSpec], names: Sequence[str]) -> list[ServerSpec]:
    """The specs named by ``--server`` (all when none); an unknown name is a usage error."""
    if not names:
        return list(specs)
    known = {s.name for s in specs}
    unknown = [n for n in names if n not in known]
    if unknown:
        configured = ", ".join(sorted(known)) or "none"
        raise UserError(f"no server named {', '.join(unknown)}; configured: {configured}")
    return [s for s in specs if s.name in names]


def read_configs(
    paths: Sequence[Path], cwd: Path, home: Path, environ: Mapping[str, str]
) -> list[ServerSpec]:
    """Every server entry of the config files, in order; a missing file is a usage error."""
    specs: list[ServerSpec] = []
    for path in paths:
        try:
            text = read_text(path)
        except Unreadable as e:
            raise UserError(f"cannot read MCP config {path}: {e}") from None
        ctx = Context(str(workspace_of(cwd / path, cwd)), str(home), environ)
        specs += parse_config(text, str(path), ctx)
    return specs


@dataclass(frozen=True)
class ServerSelection:
    """Which MCP servers a command talks to: config files (none: the usual places), ad hoc
    servers, and server names to keep (none: all)."""

    config: Sequence[Path] = ()
    stdio: Sequence[str] = ()
    url: Sequence[str] = ()
    header: Sequence[str] = ()
    name: Sequence[str] = ()
    server: Sequence[str] = ()


def find_specs(
    args: ServerSelection, cwd: Path, home: Path, environ: Mapping[str, str], platform: str
) -> tuple[list[ServerSpec], list[Path], list[str]]:
    """The servers this run pulls, the config files read, and notes for the user."""
    configs = list(args.config)
    if not (configs or args.stdio or args.url):
        found = [Path(p) for p in default_paths(cwd, home, platform, environ)]
        # Shown relative to the current folder where they are in it: shorter to read.
        configs = [p.relative_to(cwd) if p.is_relative_to(cwd) else p for p in found if p.is_file()]
        if not configs:
            raise UserError(
                "no MCP config found (looked for .vscode/mcp.json, .cursor/mcp.json, .mcp.json, "
                "~/.cursor/mcp.json and Claude Desktop's claude_desktop_config.json); "
                "pass --config FILE, --stdio 'CMD ARGS' or --url URL"
            )
    specs = read_configs(configs, cwd, home, environ)
    specs += adhoc_specs(list(args.stdio), list(args.url), list(args.header), list(args.name))
    specs, notes = merge_specs(specs)
    specs = select_specs(specs, list(args.server))
    if not specs:
        raise UserError(f"no servers in {', '.join(map(str, configs))}")
    return [load_env_file(s) for s in specs], configs, notes


def load_env_file(spec: ServerSpec) -> ServerSpec:
    """``spec`` with its ``envFile`` read in (the config's own ``env`` wins)."""
    if not spec.env_file or spec.error:
        return spec
    try:
        found = parse_dotenv(read_text(spec.env_file))
    except Unreadable as e:
        return replace(spec, error=f"cannot read envFile {spec.env_file}: {e}")
    return replace(spec, env={**found, **spec.env}, secrets=spec.secrets + tuple(found.values()))


def check_schema(schema: Any, what: str) -> str | None:
    """Why ``schema`` is not a valid JSON Schema (2020-12 unless it says ``$schema``)."""
    if not isinstance(schema, dict):
        return f"{what} is not a JSON object"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unknown $schema warns, then uses the default
        validator = validators.validator_for(schema, default=Draft202012Validator)
    try:
        validator.check_schema(schema)
    except SchemaError as e:
        at = "/".join(str(p) for p in e.path)
        where = f" at {at}" if at else ""
        return f"{what} is not a valid JSON Schema{where}: {e.message[:200]}"
    return None


def check_tools(tools: Sequence[Mapping[str, Any]]) -> str | None:
    """Why a server's tool list cannot be stored as is, or None when it can."""
    seen: set[str] = set()
    for tool in tools:
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            return "a tool has no name"
        if name in seen:
            return f"tools/list returned tool '{name}' twice"
        seen.add(name)
        problem = check_schema(tool.get("inputSchema"), "inputSchema")
        if problem is None and tool.get("outputSchema") is not None:
            problem = check_schema(tool.get("outputSchema"), "outputSchema")
        if problem:
            return f"tool '{name}': {problem}"
    return None


def mask_value(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` (JSON) with secrets masked in every string, keys included."""
    if isinstance(value, str):
        return mask(value, secrets)
    if isinstance(value, list):
        return [mask_value(v, secrets) for v in value]
    if isinstance(value, dict):
        return {mask(str(k), secrets): mask_value(v, secrets) for k, v in value.items()}
    return value


def build_rows(
    spec: ServerSpec, listing: Listing, pull_id: str, pulled_at: datetime
) -> list[McpTool]:
    """One ``McpTool`` per tool; a server echoing a config secret gets it masked."""
    rows = []
    for raw in listing.tools:
        tool = mask_value(raw, spec.secrets) if spec.secrets else raw
        row = McpTool(
            pull_id=pull_id,
            pulled_at=pulled_at,
            server=spec.name,
            transport=spec.transport,
            server_name=listing.server_name,
            server_version=listing.server_version,
            protocol_version=listing.protocol_version,
            name=tool["name"],
            title=tool.get("title"),
            description=tool.get("description"),
            input_schema=tool.get("inputSchema"),
            output_schema=tool.get("outputSchema"),
            annotations=tool.get("annotations"),
            schema_hash=schema_hash(tool.get("inputSchema")),
            definition_hash="",
        )
        rows.append(row.model_copy(update={"definition_hash": definition_hash(row)}))
    return rows


def definition_hash(tool: McpTool) -> str:
    """``schema_hash`` of the whole definition (name, title, description, schemas, annotations)."""
    return schema_hash(snapshot.tool_definition(tool))


def previous_pull(capture: Path) -> dict[str, dict[str, str]]:
    """Server -> tool name -> definition_hash at each server's latest pull in the capture."""
    from toolproxy.store.queries.mcp import definition_hashes

    with store.reading(capture) as r:
        rows = definition_hashes(r)
    found: dict[str, dict[str, str]] = {}
    for server, name, digest in rows:
        found.setdefault(server, {})[name] = digest
    return found


def compare(before: Mapping[str, str], rows: Sequence[McpTool]) -> tuple[int, int, int]:
    """(new, changed, removed) tools of this pull against the one before."""
    now = {r.name: r.definition_hash for r in rows}
    new = sum(1 for n in now if n not in before)
    changed = sum(1 for n, h in now.items() if n in before and before[n] != h)
    return new, changed, sum(1 for n in before if n not in now)


def run_pull(
    specs: Sequence[ServerSpec], capture: Path, schemas: Path, timeout: float
) -> tuple[str, datetime, list[ServerResult]]:
    """Pull every server; store and snapshot the ones that succeeded. (pull_id, at, results)"""
    pulled_at = datetime.now(UTC)
    pull_id = f"{pulled_at:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
    store.init_capture(capture)
    before = previous_pull(capture)
    outcomes = mcpclient.fetch_all(specs, timeout)
    results: list[ServerResult] = []
    accepted: list[tuple[ServerSpec, list[McpTool]]] = []
    for spec, outcome in zip(specs, outcomes, strict=True):
        base = ServerResult(spec.name, spec.transport, spec.source, "failed")
        if isinstance(outcome, Listing):
            problem = check_tools(outcome.tools)
            if problem:
                outcome = Failure("invalid_schema", mask(problem, spec.secrets))
        if isinstance(outcome, Failure):
            results.append(replace(base, error_kind=outcome.kind, error=outcome.message))
            continue
        rows = build_rows(spec, outcome, pull_id, pulled_at)
        accepted.append((spec, rows))
        new, changed, removed = compare(before.get(spec.name, {}), rows)
        results.append(
            replace(
                base,
                status="ok",
                tools=len(rows),
                new=new,
                changed=changed,
                removed=removed,
                server_name=outcome.server_name,
                server_version=outcome.server_version,
                protocol_version=outcome.protocol_version,
            )
        )
    # Snapshots first: a server whose folder cannot be written fails and stores no rows.
    snapshot_changed: dict[str, bool] = {}
    snapshot_error: dict[str, str] = {}
    for spec, rows in accepted:
        try:
            files = snapshot.server_files(rows)
            snapshot_changed[spec.name] = snapshot.write_server(schemas, spec.name, files)
        except OSError as e:
            snapshot_error[spec.name] = f"cannot write the snapshot under {schemas}: {e}"
    # One segment file for the whole run: the rows land together or not at all.
    batch = [
        r.model_dump(mode="json")
        for spec, rows in accepted
        if spec.name not in snapshot_error
        for r in rows
    ]
    if batch:
        SegmentWriter(capture, f"pull-{pull_id}").write({"mcp_tools": batch})
    results = [
        ServerResult(
            r.server,
            r.transport,
            r.source,
            "failed",
            error_kind="snapshot",
            error=snapshot_error[r.server],
        )
        if r.server in snapshot_error
        else replace(r, snapshot_changed=snapshot_changed.get(r.server))
        for r in results
    ]
    return pull_id, pulled_at, results


def render_table(results: Sequence[ServerResult]) -> str:
    """The terminal report: one line per server, then each failure in full."""
    columns = ["server", "transport", "status", "tools", "new", "changed", "removed", "error"]
    rows = [
        [r.server, r.transport, r.status, r.tools, r.new, r.changed, r.removed, r.error_kind]
        for r in results
    ]
    lines = [format_table(columns, rows)]
    failed = [r for r in results if r.status != "ok"]
    if failed:
        lines.append("")
        for r in failed:
            detail = (r.error or "").replace("\n", "\n    ")
            lines.append(f"{r.server} ({r.source}): {detail}")
    return "\n".join(lines)
