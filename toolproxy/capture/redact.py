"""Secret removal: everything the capture writes passes through a Redactor first.

Three layers, because a key can hide in more than one place:
1. header values whose names are secret (defaults plus user names, plus any name that
   contains key/token/secret/auth/cookie/password),
2. query parameters with secret names (as sent and decoded), and JSON paths in bodies
   (defaults plus user paths); a body that is not JSON gets a text-level pass for key-like
   fields (`"api_key": "..."`, `apiKey=...`, `Bearer ...`),
3. every secret value found in 1. and 2. is then scrubbed out of every stored string
   (bodies, error messages, messages), so a key echoed back in an error body is gone too,
   in its URL-encoded spellings too, and out of bodies that are not UTF-8 (`redact_bytes`,
   before they are stored as base64); a text that ends inside a secret (a body cut at its
   size cap, a message at its length) loses the part of it that stayed (`cut_tail`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, quote_plus, unquote_plus, urlsplit, urlunsplit

REDACTED = "[REDACTED]"

DEFAULT_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "cookie",
        "set-cookie",
        "x-goog-api-key",
    }
)
# Any header or query parameter whose name contains one of these is treated as a secret.
SECRET_NAME = re.compile(r"key|token|secret|auth|cookie|passw|signature|credential", re.I)
DEFAULT_QUERY = frozenset({"key", "api_key", "apikey", "api-key", "access_token", "token", "sig"})
DEFAULT_JSON_PATHS = ("api_key", "apiKey")
# Secrets shorter than this are not scrubbed from free text: replacing "ab" everywhere
# would shred bodies, and such short values are not real API keys.
MIN_SCRUB_LEN = 8
# Secret values remembered for scrubbing; rotating cookies must not grow this forever.
MAX_REMEMBERED = 256
# A body that is not JSON still names its secrets: `"api_key": "..."`, `apiKey=...`,
# `Bearer ...`. Names that say key/token/secret/password/authorization in any spelling.
_SECRET_FIELD = (
    r"[\w-]*(?:api[_-]?key|access[_-]?token|secret|passw(?:or)?d|authorization|credential)[\w-]*"
)
# A JSON body's own credentials, for the provider to use: a hosted MCP server's
# (Responses `tools[].headers` / `.authorization` / `server_url`'s query, Anthropic
# `mcp_servers[].authorization_token`), a data source's (Azure `data_sources[].parameters
# .authentication`). A member is one when its name is key-like (`_SECRET_FIELD`, or ends in
# "token": not `max_tokens`), is a secret header inside a `headers` object, is anything but
# the `type` of an `authentication` object, or is a secret query parameter of a URL.
_BODY_SECRET = re.compile(r"(?:" + _SECRET_FIELD + r")|[\w-]*token", re.I)
_URL_MEMBER = re.compile(r"(?:[\w-]*[_-])?(?:url|uri|endpoint)", re.I)
# Not walked: the conversation, and the schemas of tools and outputs. They are the agent's
# data (an argument named `password` is graded as sent), and their text stitches sessions.
_CONTENT = frozenset({"messages", "input", "instructions", "system", "prompt", "contents"})
_SCHEMAS = frozenset({"input_schema", "inputSchema", "schema", "json_schema"})
_DECLARED = _SCHEMAS | {"parameters"}  # in an object with a `name`: a function's schema


@functools.lru_cache(maxsize=4096)
def _member_kind(name: str) -> str | None:
    """ "secret" or "url" for a JSON member name that holds a credential or a URL (names
    repeat: `type`, `name`, `description`; each is matched once)."""
    if _BODY_SECRET.fullmatch(name):
        return "secret"
    return "url" if _URL_MEMBER.fullmatch(name) else None


_TEXT_SECRETS = (
    re.compile(r'"(?:' + _SECRET_FIELD + r')"\s*:\s*"((?:[^"\\]|\\.)*)"', re.I),
    re.compile(r"(?<![\w-])(?:" + _SECRET_FIELD + r")\s*[=:]\s*([^\s&\"',;}]+)", re.I),
    re.compile(r"\bBearer\s+([^\s\"',;}]+)", re.I),
)


def without(text: str, secret: str | None) -> str:
    """`text` with one known `secret` (a key toolproxy itself sends: a candidate's, the
    judge's) replaced, unless it is too short to search for (`MIN_SCRUB_LEN`)."""
    if secret and len(secret) >= MIN_SCRUB_LEN:
        return text.replace(secret, REDACTED)
    return text


ELLIPSIS = "…"  # what a text cut to a length ends with (`wire.common.one_line`)


def cut_tail(text: str, secrets: Iterable[str]) -> str:
    """`text` with the beginning of a secret it ends with (`MIN_SCRUB_LEN` characters or
    more, before an ellipsis) replaced: a body kept to its size cap, or an error message
    kept to its length, can be cut inside a key the upstream echoed, and a whole-value
    scrub misses the half that stays."""
    end = text.removesuffix(ELLIPSIS)
    for secret in secrets:
        if len(secret) <= MIN_SCRUB_LEN:
            continue
        start = end.rfind(secret[:MIN_SCRUB_LEN], max(0, len(end) - len(secret) + 1))
        if start >= 0 and secret.startswith(end[start:]):
            return end[:start] + REDACTED + text[len(end) :]
    return text


@dataclass
class Redactor:
    """Configured secret remover. `found` holds recent secret values (memory only)."""

    headers: frozenset[str] = DEFAULT_HEADERS
    query: frozenset[str] = DEFAULT_QUERY
    json_paths: tuple[tuple[str, ...], ...] = tuple((p,) for p in DEFAULT_JSON_PATHS)
    found: dict[str, None] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list, repr=False)
    _order_for: int = field(default=-1, repr=False)

    @classmethod
    def build(
        cls,
        extra_headers: Iterable[str] = (),
        extra_query: Iterable[str] = (),
        extra_json_paths: Iterable[str] = (),
    ) -> Redactor:
        """A redactor with the defaults plus user-configured names and dotted JSON paths."""
        paths = [*DEFAULT_JSON_PATHS, *extra_json_paths]
        return cls(
            headers=DEFAULT_HEADERS | {h.strip().lower() for h in extra_headers if h.strip()},
            query=DEFAULT_QUERY | {q.strip().lower() for q in extra_query if q.strip()},
            json_paths=tuple(tuple(p.split(".")) for p in paths if p.strip()),
        )

    def is_secret_header(self, name: str) -> bool:
        lname = name.lower()
        return lname in self.headers or bool(SECRET_NAME.search(lname))

    def is_secret_param(self, name: str) -> bool:
        lname = name.lower()
        return lname in self.query or bool(SECRET_NAME.search(lname))

    def _remember(self, value: str) -> None:
        # "Bearer sk-..." also leaks as the bare key, so remember the parts too; and each in
        # its URL-encoded spellings (a URL, a form body) and JSON-escaped ones (a raw body).
        for item in (value.strip(), *value.split()):
            if len(item) < MIN_SCRUB_LEN:
                continue
            escaped = json.dumps(item)[1:-1]  # as it stands inside a JSON string
            spellings = (item, quote(item, safe=""), quote_plus(item), escaped)
            # JSON may also escape "/" (PHP and Java encoders do): `sk\/...`
            for spelling in dict.fromkeys((*spellings, escaped.replace("/", "\\/"))):
                self.found.pop(spelling, None)
                self.found[spelling] = None
        while len(self.found) > MAX_REMEMBERED:
            self.found.pop(next(iter(self.found)))

    def redact_headers(self, headers: Iterable[tuple[str, str]]) -> dict[str, str]:
        """Header pairs -> dict (repeated names joined by ', ') with secret values replaced."""
        out: dict[str, str] = {}
        for name, value in headers:
            lname = name.lower()
            if self.is_secret_header(lname):
                self._remember(value)
                value = REDACTED
            out[lname] = f"{out[lname]}, {value}" if lname in out else value
        return out

    def redact_url(self, url: str) -> str:
        """URL or path with secret query parameter values replaced; the rest of the query
        is kept as sent. A secret is remembered as sent (`ab%2Fcd`) and decoded (`ab/cd`)."""
        parts = urlsplit(url)
        if not parts.query:
            return url
        clean = []
        for field_ in parts.query.split("&"):
            name, eq, value = field_.partition("=")
            if eq and self.is_secret_param(unquote_plus(name)):
                self._remember(value)
                self._remember(unquote_plus(value))
                field_ = f"{name}={REDACTED}"
            clean.append(field_)
        return urlunsplit(parts._replace(query="&".join(clean)))

    def redact_json(self, value: Any) -> tuple[Any, bool]:
        """Remove configured JSON paths (`*` matches any key or index). Returns (value, changed)."""
        changed = False
        for path in self.json_paths:
            changed |= self._redact_path(value, path)
        if isinstance(value, dict) and "jsonrpc" not in value:  # MCP's messages are all data
            changed |= self._redact_members(value, _CONTENT)
        return value, changed

    def _redact_members(self, node: dict[Any, Any], skip: frozenset[str]) -> bool:
        """Redact the credentials among `node`'s members and inside them (`_member_kind`,
        `headers`, `authentication`), but for those named in `skip`; each is remembered, so
        an echo of it is scrubbed too."""
        changed = False
        for name, value in node.items():
            if isinstance(value, str):
                if value == REDACTED or not isinstance(name, str):
                    continue
                kind = _member_kind(name)
                if kind == "secret":
                    self._remember(value)
                    node[name] = REDACTED
                    changed = True
                elif kind == "url" and "?" in value:
                    node[name] = self.redact_url(value)
                    changed |= node[name] != value
            elif isinstance(value, dict):
                if name in skip or not isinstance(name, str):
                    continue
                lower = name.lower()
                if lower == "headers" or lower.endswith("_headers"):
                    changed |= self._redact_all(value, self.is_secret_header)
                elif lower in ("authentication", "credentials"):
                    changed |= self._redact_all(value, lambda field_: field_ != "type")
                else:  # a function's `parameters` are its schema
                    changed |= self._redact_members(
                        value, _DECLARED if "name" in value else _SCHEMAS
                    )
            elif isinstance(value, list) and name not in skip:
                for item in value:
                    if isinstance(item, dict):
                        changed |= self._redact_members(
                            item, _DECLARED if "name" in item else _SCHEMAS
                        )
        return changed

    def _redact_all(self, node: dict[Any, Any], secret: Callable[[str], bool]) -> bool:
        """Redact each string member of `node` whose name is `secret`."""
        changed = False
        for name, value in node.items():
            if isinstance(value, str) and value != REDACTED and secret(str(name)):
                self._remember(value)
                node[name] = REDACTED
                changed = True
        return changed

    def _redact_path(self, node: Any, path: tuple[str, ...]) -> bool:
        if not path:
            return False
        head, rest = path[0], path[1:]
        children: list[tuple[Any, Any]]
        if isinstance(node, dict):
            keys = list(node) if head == "*" else [head] if head in node else []
            children = [(node, k) for k in keys]
        elif isinstance(node, list):
            idx = range(len(node)) if head == "*" else [int(head)] if head.isdigit() else []
            children = [(node, i) for i in idx if i < len(node)]
        else:
            return False
        changed = False
        for parent, key in children:
            if rest:
                changed |= self._redact_path(parent[key], rest)
            else:
                if isinstance(parent[key], str):
                    self._remember(parent[key])
                parent[key] = REDACTED
                changed = True
        return changed

    def _longest_first(self) -> list[str]:
        # Cached: scrub() runs on every stored string, the set changes rarely.
        if self._order_for != len(self.found) or set(self._order) != self.found.keys():
            self._order = sorted(self.found, key=len, reverse=True)
            self._order_for = len(self.found)
        return self._order

    def scrub(self, text: str | None) -> str | None:
        """Replace every secret value seen so far inside free text, and the beginning of
        one the text ends with (`cut_tail`)."""
        if not text or not self.found:
            return text
        for secret in self._longest_first():
            if secret in text:
                text = text.replace(secret, REDACTED)
        return cut_tail(text, self._longest_first())

    def mentions_secret(self, value: Any) -> bool:
        """Whether the beginning of any remembered secret (`MIN_SCRUB_LEN` characters: a
        whole one, or one a cut left half of) occurs anywhere in a JSON-like value (fast
        check)."""
        if not self.found:
            return False
        text = json.dumps(value, ensure_ascii=False)
        # A secret with quotes or backslashes appears escaped inside the JSON text.
        return any(
            s[:MIN_SCRUB_LEN] in text or json.dumps(s)[1 : MIN_SCRUB_LEN + 1] in text
            for s in self._longest_first()
        )

    def scrub_value(self, value: Any) -> Any:
        """scrub() applied to every string inside a JSON-like value (keys included)."""
        if not self.found:
            return value
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, list):
            return [self.scrub_value(v) for v in value]
        if isinstance(value, dict):
            return {self.scrub(k): self.scrub_value(v) for k, v in value.items()}
        return value

    def redact_text_fields(self, text: str) -> str:
        """Key-like fields of a body that is not JSON (`"api_key": "..."`, `apiKey=...`,
        `Bearer ...`): their values are remembered and replaced."""
        for pattern in _TEXT_SECRETS:
            for match in pattern.finditer(text):
                if match.group(1) != REDACTED:
                    # a form body sends it URL-encoded; an echo may spell it decoded
                    self._remember(match.group(1))
                    self._remember(unquote_plus(match.group(1)))
        return self.scrub(text) or text

    def redact_bytes(self, data: bytes) -> bytes:
        """A body that is not UTF-8 (stored base64): the text-level pass and the scrub, on
        its bytes; every byte that is not part of a secret stays as it was."""
        if not data:
            return data
        text = data.decode("utf-8", "surrogateescape")
        return self.redact_text_fields(text).encode("utf-8", "surrogateescape")

    def redact_body(self, text: str) -> str:
        """A body with JSON paths removed (re-serialised only when something changed); a
        body that is not JSON gets the text-level pass for key-like fields instead."""
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            return self.redact_text_fields(text)
        doc, changed = self.redact_json(doc)
        if changed:
            text = json.dumps(doc, ensure_ascii=False)
        return self.scrub(text) or text
