"""Reviewable snapshots of MCP tool schemas: one JSON file per tool, made for git diffs.

Layout, under the snapshot folder (``--schemas``, default ``schemas/mcp``)::

    <server>/<tool>.json

Each file holds the tool definition (name, title, description, inputSchema, outputSchema,
annotations), the server's name, version and protocol version, and the hashes, with sorted
keys, two-space indent and a final newline, and no timestamps: pulling an unchanged server
rewrites nothing, so git stays clean.

File and folder names (``file_stem``): ASCII letters, digits, ``_``, ``-`` and ``.`` stay as
they are; every other character becomes ``%XX`` per UTF-8 byte (``/`` is ``%2F``, ``%`` is
``%25``), a leading ``.`` becomes ``%2E``, and an empty name is ``%``. Names longer than
``MAX_STEM`` characters after escaping keep their first part plus ``~`` and 16 hex digits of
the name's SHA-256. Distinct names give distinct files, except on case-insensitive file
systems, where tools differing only in case share one.

A server's folder is replaced as a whole (``write_server``): the new files are written to a
hidden folder beside it, then swapped in by two renames, so a tool the server dropped
disappears and a failed pull leaves the old folder untouched.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolproxy.records import McpTool

MAX_STEM = 120
_KEEP = re.compile(r"[A-Za-z0-9_.-]")


def file_stem(name: str) -> str:
    """The file-system-safe, reversible-enough form of a tool or server name (see above)."""
    if not name:
        return "%"
    out = "".join(
        ch if _KEEP.match(ch) else "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        for ch in name
    )
    if out.startswith("."):
        out = "%2E" + out[1:]
    if len(out) > MAX_STEM:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        out = f"{out[: MAX_STEM - 17]}~{digest}"
    return out


def tool_definition(tool: McpTool) -> dict[str, Any]:
    """The parts of a tool that define it, under their MCP names."""
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
        "annotations": tool.annotations,
    }


def render_tool(tool: McpTool) -> str:
    """One snapshot file's text: stable formatting, no timestamps."""
    doc = {
        "server": tool.server,
        "server_name": tool.server_name,
        "server_version": tool.server_version,
        "protocol_version": tool.protocol_version,
        "schema_hash": tool.schema_hash,
        "definition_hash": tool.definition_hash,
        "tool": tool_definition(tool),
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def server_files(tools: Sequence[McpTool]) -> dict[str, str]:
    """File name -> text for one server's tools."""
    return {f"{file_stem(t.name)}.json": render_tool(t) for t in tools}


def _encode(text: str) -> bytes:
    # A lone surrogate in a name or schema becomes its JSON escape rather than an error.
    return text.encode("utf-8", "backslashreplace")


def _matches(folder: Path, files: Mapping[str, str]) -> bool:
    if not folder.is_dir():
        return False
    present = {p.name for p in folder.iterdir()}
    return present == set(files) and all(
        (folder / name).read_bytes() == _encode(text) for name, text in files.items()
    )


def write_server(root: Path, server: str, files: Mapping[str, str]) -> bool:
    """Make ``<root>/<server>/`` hold exactly ``files``; False when it already did.

    Built in ``.<server>.tmp-*`` beside it and swapped in; leftovers of an interrupted
    earlier write (``.<server>.tmp-*``, ``.<server>.old-*``) are removed first.
    """
    stem = file_stem(server)
    target = root / stem
    if _matches(target, files):
        return False
    root.mkdir(parents=True, exist_ok=True)
    for leftover in [*root.glob(f".{stem}.tmp-*"), *root.glob(f".{stem}.old-*")]:
        shutil.rmtree(leftover, ignore_errors=True)
    token = secrets.token_hex(4)
    tmp = root / f".{stem}.tmp-{token}"
    tmp.mkdir()
    try:
        for name, text in files.items():
            (tmp / name).write_bytes(_encode(text))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if target.exists() or target.is_symlink():
        old = root / f".{stem}.old-{token}"
        target.rename(old)
        tmp.rename(target)
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old)
        else:
            old.unlink()
    else:
        tmp.rename(target)
    return True
