"""MCP client configurations, read as the user already has them, into server specs.

Pure: text in, ``ServerSpec`` values out; the caller reads the files. Three shapes:

- Claude Desktop, Cursor, Claude Code: ``{"mcpServers": {name: entry}}``
- VS Code: ``{"servers": {name: entry}, "inputs": [...]}`` (JSONC: comments, trailing commas)
- VS Code settings: ``{"mcp": {"servers": ...}}``

An entry is stdio (``command``, ``args``, ``env``, ``envFile``, ``cwd``) or remote (``url``,
``headers``), with an optional ``type`` (stdio | http | sse). A remote entry without
``type`` uses SSE when its URL path ends in ``/sse``, else streamable HTTP.

Variables are expanded in every string field of every format: ``${env:NAME}`` (empty when
unset, as VS Code does), ``${workspaceFolder}``, ``${workspaceFolderBasename}``,
``${userHome}``, ``${pathSeparator}`` and ``${/}``. ``${input:ID}`` takes its value from the
environment variable ``TOOLPROXY_INPUT_<ID>`` (ID upper-cased, other characters as ``_``),
since there is no editor to prompt; without it the server fails with a message that says so.
``${command:...}`` and ``${config:...}`` need the editor and fail the server the same way.
Other ``${...}`` text is left as it is.

Secrets, masked as ``***`` in everything toolproxy stores, writes or prints: every header
value and env value (whole, and the credential after a scheme word such as ``Bearer``), the
values ``${env:...}`` and ``${input:...}`` put into them, a URL's password and query values,
and the values of an ``envFile``; values shorter than ``MIN_SECRET_LEN`` are left alone.

A problem with one entry is a value (``ServerSpec.error``), never an exception: the other
servers still get pulled. Only a file that is not a config at all raises ``ConfigError``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from toolproxy.errors import UserError
from toolproxy.util.jsonfast import error_where

Transport = Literal["stdio", "http", "sse"]

# Shorter values are not treated as secrets: masking "true" or "debug" would mangle every
# message and description, and real credentials are longer.
MIN_SECRET_LEN = 6
MASK = "***"
INPUT_ENV_PREFIX = "TOOLPROXY_INPUT_"

_TYPES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}
_VAR = re.compile(r"\$\{([^}]*)\}")
# Launchers whose first real argument names the server better than the launcher does.


class ConfigError(UserError):
    """A config file that cannot be read as an MCP configuration at all."""


@dataclass(frozen=True)
class ServerSpec:
    """One MCP server to pull, as configured (variables already expanded).

    Fields that may hold credentials stay out of its repr, so no traceback shows them.
    """

    name: str
    transport: Transport
    source: str  # config file the entry came from, or "--stdio" / "--url"
    command: str | None = None
    args: tuple[str, ...] = field(default=(), repr=False)
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    env_file: str | None = None
    cwd: str | None = None
    url: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)  # masked wherever text is shown
    error: str | None = None  # why this entry cannot be pulled as configured


@dataclass(frozen=True)
class Context:
    """What variables expand to."""

    workspace: str
    home: str
    environ: Mapping[str, str]
    inputs: Mapping[str, str] = field(default_factory=dict)  # input id -> description


class _Unresolvable(Exception):
    """A variable only an editor could resolve (an input without a value, a command)."""


def _skip_blank(text: str, i: int) -> int:
    """Index of the first character at or after ``i`` that is not whitespace or a comment."""
    n = len(text)
    while i < n:
        if text[i].isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            break
    return i


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (VS Code's JSONC) as plain JSON."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith(("//", "/*"), i):
            end = text.find("\n" if text[i + 1] == "/" else "*/", i + 2)
            end = n if end < 0 else end + (0 if text[i + 1] == "/" else 2)
            out.append(" " + "\n" * text.count("\n", i, end))  # keeps error line numbers right
            i = end
        elif ch == "," and _skip_blank(text, i + 1) < n and text[_skip_blank(text, i + 1)] in "}]":
            i += 1  # a trailing comma
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def input_env_name(input_id: str) -> str:
    """The environment variable that supplies ``${input:<input_id>}``."""
    return INPUT_ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", input_id).upper()


def expand(
    value: str, ctx: Context, used: list[str] | None = None, env_secret: bool = False
) -> str:
    """``value`` with its ``${...}`` variables replaced (see the module docstring).

    Values taken from inputs, and with ``env_secret`` from ``${env:...}``, are appended to
    ``used``: they are secrets to mask.
    """

    def one(m: re.Match[str]) -> str:
        var = m.group(1)
        kind, _, arg = var.partition(":")
        if kind == "env" and arg:
            if env_secret and used is not None:
                used.append(ctx.environ.get(arg, ""))
            return ctx.environ.get(arg, "")
        if kind == "input" and arg:
            env_name = input_env_name(arg)
            if env_name in ctx.environ:
                if used is not None:
                    used.append(ctx.environ[env_name])
                return ctx.environ[env_name]
            what = ctx.inputs.get(arg)
            label = f" ({what})" if what else ""
            raise _Unresolvable(
                f"needs input '{arg}'{label}, which the editor would prompt for; "
                f"pass the value in the environment as {env_name}=..."
            )
        if kind in ("command", "config") and arg:
            raise _Unresolvable(f"uses ${{{var}}}, which only the editor can resolve")
        fixed = {
            "workspaceFolder": ctx.workspace,
            "workspaceFolderBasename": PurePath(ctx.workspace).name,
            "userHome": ctx.home,
            "pathSeparator": os.sep,
            "/": os.sep,
        }
        return fixed.get(var, m.group(0))

    return _VAR.sub(one, value)


def secret_parts(value: str) -> list[str]:
    """A value to mask, plus its credential part when it reads "Scheme credential"."""
    parts = [value]
    scheme, _, rest = value.strip().partition(" ")
    if rest and scheme.isalpha():
        parts.append(rest.strip())
    return parts


def url_secrets(url: str) -> list[str]:
    """Credentials a URL may carry: its password and query values."""
    try:
        split = urlsplit(url)
        found = [split.password] if split.password else []
        return found + [v for _, v in parse_qsl(split.query)]
    except ValueError:
        return []


def mask(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (of ``MIN_SECRET_LEN`` characters or more) as ``***``."""
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET_LEN}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def _strings(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise ValueError(f"{what} must be a list of strings")
    return [str(v) for v in value]


def _mapping(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be an object of strings")
    out: dict[str, str] = {}
    for k, v in value.items():
        if v is None:
            continue  # VS Code allows null to mean "unset"
        if not isinstance(v, str | int | float) or isinstance(v, bool):
            raise ValueError(f"{what}.{k} must be a string")
        out[str(k)] = str(v)
    return out


def transport_for_url(url: str) -> Transport:
    """SSE for a URL whose path ends in ``/sse``, else streamable HTTP."""
    return "sse" if urlsplit(url).path.rstrip("/").endswith("/sse") else "http"


def parse_entry(name: str, entry: Any, source: str, ctx: Context) -> ServerSpec:
    """One server entry of either format; problems come back as ``ServerSpec.error``."""
    if not isinstance(entry, dict):
        return ServerSpec(name, "stdio", source, error="entry is not a JSON object")
    command, url = entry.get("command"), entry.get("url") or entry.get("serverUrl")
    fallback: Transport = "stdio" if command or not url else "http"
    try:
        kind = entry.get("type")
        if kind is not None:
            if not isinstance(kind, str) or kind.lower() not in _TYPES:
                raise ValueError(f"unknown type {kind!r} (expected stdio, http or sse)")
            transport = _TYPES[kind.lower()]
        elif isinstance(command, str) and command:
            transport = "stdio"
        elif isinstance(url, str) and url:
            transport = transport_for_url(expand(url, ctx))
        else:
            raise ValueError("has neither 'command' (stdio) nor 'url' (remote)")
        fallback = transport
        used: list[str] = []
        if transport == "stdio":
            if not isinstance(command, str) or not command:
                raise ValueError("a stdio server needs a 'command'")
            env = {
                k: expand(v, ctx, used, env_secret=True)
                for k, v in _mapping(entry.get("env"), "env").items()
            }
            env_file, cwd = entry.get("envFile"), entry.get("cwd")
            for what, value in (("envFile", env_file), ("cwd", cwd)):
                if value is not None and not isinstance(value, str):
                    raise ValueError(f"{what} must be a string")
            return ServerSpec(
                name,
                "stdio",
                source,
                command=_nonblank(expand(command, ctx, used), "command"),
                args=tuple(expand(a, ctx, used) for a in _strings(entry.get("args"), "args")),
                env=env,
                # Relative paths are taken from the workspace folder, as the editors do.
                env_file=str(PurePath(ctx.workspace, expand(env_file, ctx))) if env_file else None,
                cwd=str(PurePath(ctx.workspace, expand(cwd, ctx))) if cwd else None,
                secrets=_nonempty(used + [p for v in env.values() for p in secret_parts(v)]),
            )
        if not isinstance(url, str) or not url:
            raise ValueError(f"a {transport} server needs a 'url'")
        headers = {
            k: expand(v, ctx, used, env_secret=True)
            for k, v in _mapping(entry.get("headers"), "headers").items()
        }
        url = expand(url, ctx, used)
        if urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"url must be an http(s) URL, got {mask(url, url_secrets(url))!r}")
        secrets = used + url_secrets(url) + [p for v in headers.values() for p in secret_parts(v)]
        return ServerSpec(
            name, transport, source, url=url, headers=headers, secrets=_nonempty(secrets)
        )
    except (ValueError, _Unresolvable) as e:
        return ServerSpec(name, fallback, source, error=str(e))


def _nonblank(value: str, what: str) -> str:
    if not value.strip():
        raise ValueError(f"{what} is empty once variables are expanded (is an ${{env:...}} unset?)")
    return value


def _nonempty(values: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v))


def _load_json(text: str, source: str) -> Any:
    try:
        return json.loads(strip_jsonc(text))
    except json.JSONDecodeError as e:
        where = error_where(e, f"line {e.lineno}")
        raise ConfigError(f"{source}: not valid JSON ({where})") from e


def parse_config(text: str, source: str, ctx: Context) -> list[ServerSpec]:
    """Every server entry of one config file, in file order."""
    data = _load_json(text, source)
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a JSON object")
    if isinstance(data.get("mcp"), dict) and "servers" in data["mcp"]:
        data = data["mcp"]  # VS Code settings.json
    groups = [data[k] for k in ("mcpServers", "servers") if k in data]
    if not groups:
        raise ConfigError(
            f"{source}: no 'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code) object"
        )
    inputs = {
        str(i["id"]): str(i.get("description") or "")
        for i in data.get("inputs") or []
        if isinstance(i, dict) and "id" in i
    }
    ctx = replace(ctx, inputs=inputs)
    specs = []
    for group in groups:
        if not isinstance(group, dict):
            raise ConfigError(f"{source}: the servers must be a JSON object of name -> entry")
        specs += [parse_entry(str(name), entry, source, ctx) for name, entry in group.items()]
    return specs


def parse_dotenv(text: str) -> dict[str, str]:
    """A ``.env`` file (VS Code's ``envFile``): KEY=VALUE lines, # comments, optional quotes."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key.strip()] = value
    return out
