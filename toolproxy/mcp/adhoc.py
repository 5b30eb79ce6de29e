"""Ad hoc MCP servers from the command line: `--stdio`, `--url`, `--header`, `--name`."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePath
from urllib.parse import urlsplit

from toolproxy.errors import UserError
from toolproxy.mcp.config import ServerSpec, mask, secret_parts, transport_for_url, url_secrets

_RUNNERS = re.compile(r"^(python[0-9.]*|uv|uvx|npx|pnpx|bunx|node|deno|pipx|bun|npm|pnpm)$")
_RUNNER_WORDS = {"run", "x", "exec", "dlx"}


def derive_name(argv: Sequence[str]) -> str:
    """A server name for an ad hoc command: the script, module or package it runs."""
    words = list(argv)
    name = PurePath(words[0]).name if words else "server"
    if _RUNNERS.match(name):
        rest = words[1:]
        if "-m" in rest and rest.index("-m") + 1 < len(rest):
            return rest[rest.index("-m") + 1]
        for word in rest:
            if not word.startswith("-") and word not in _RUNNER_WORDS:
                name = PurePath(word.split("@")[0] or word).name
                break
    return name.removesuffix(".py").removesuffix(".js").removesuffix(".ts") or "server"


def _url_name(url: str) -> str:
    split = urlsplit(url)
    return f"{split.hostname}-{split.port}" if split.port else split.hostname or "remote"


def parse_header(text: str) -> tuple[str, str]:
    """``K:V`` as (K, V); a usage error when there is no key."""
    key, sep, value = text.partition(":")
    if not sep or not key.strip():
        raise UserError(
            f"--header {text.split(':')[0]!r}...: expected K:V, e.g. 'Authorization: Bearer ...'"
        )
    return key.strip(), value.strip()


def adhoc_specs(
    stdio: Sequence[str], urls: Sequence[str], headers: Sequence[str], names: Sequence[str]
) -> list[ServerSpec]:
    """Servers from ``--stdio``/``--url``; ``--name`` values name them stdio first, in order."""
    if headers and not urls:
        raise UserError("--header applies to --url servers, and there is none")
    if len(names) > len(stdio) + len(urls):
        raise UserError(f"{len(names)} --name values for {len(stdio) + len(urls)} ad hoc servers")
    pairs = dict(parse_header(h) for h in headers)
    header_secrets = [p for v in pairs.values() for p in secret_parts(v)]
    specs: list[ServerSpec] = []
    for command in stdio:
        try:
            argv = shlex.split(command)
        except ValueError as e:
            raise UserError(f"--stdio {command!r}: {e}") from e
        if not argv:
            raise UserError("--stdio needs a command")
        specs.append(
            ServerSpec(derive_name(argv), "stdio", "--stdio", command=argv[0], args=tuple(argv[1:]))
        )
    for url in urls:
        if urlsplit(url).scheme not in ("http", "https"):
            raise UserError(f"--url must be an http(s) URL, got {mask(url, url_secrets(url))!r}")
        secrets = tuple(url_secrets(url) + header_secrets)
        specs.append(
            ServerSpec(
                _url_name(url),
                transport_for_url(url),
                "--url",
                url=url,
                headers=pairs,
                secrets=secrets,
            )
        )
    named = [replace(s, name=n) for s, n in zip(specs, names, strict=False)]
    return _unique(named + specs[len(names) :])


def _unique(specs: list[ServerSpec]) -> list[ServerSpec]:
    seen: set[str] = set()
    out = []
    for spec in specs:
        name, i = spec.name, 1
        while name in seen:
            i += 1
            name = f"{spec.name}-{i}"
        seen.add(name)
        out.append(replace(spec, name=name))
    return out
