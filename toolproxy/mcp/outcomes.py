"""What talking to an MCP server gives back, in words a user can act on. Pure.

A pull gives a `Listing` (what the server said) or a `Failure` (why not, with a stable
`kind`); `mcp.client` makes them from what the SDK and the OS raised. Here is what does
not need the SDK: the words for an HTTP status, the last lines a stdio server wrote to
stderr, and a failure's message with that tail added and every secret masked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final, TextIO

import httpx

from toolproxy.mcp.config import mask

STDERR_LINES: Final = 15
STDERR_CHARS: Final = 2000


@dataclass(frozen=True)
class Listing:
    """What one server said: its identity and its tools, as sent (JSON, MCP field names)."""

    server_name: str | None
    server_version: str | None
    protocol_version: str | None
    tools: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Failure:
    """Why a server could not be pulled.

    ``kind`` is a stable label: config, not_found, cannot_start, crashed, timeout,
    unauthorized, forbidden, http_error, connect, protocol (and invalid_schema, which
    ``pull`` gives a listing it cannot store).
    ``message`` has every secret of the server's config masked.
    """

    kind: str
    message: str


def http_failure(response: httpx.Response) -> Failure:
    """The failure for an HTTP error status (401 and 403 say how to send credentials)."""
    code = response.status_code
    status = f"HTTP {code} {response.reason_phrase}".rstrip()
    if code in (401, 403):
        scheme = response.headers.get("www-authenticate", "").split(" ")[0]
        asks = f"; it asks for {scheme} authentication" if scheme else ""
        return Failure(
            "unauthorized" if code == 401 else "forbidden",
            f"{status}: the server refused the credentials{asks}. Set the Authorization "
            "header in the config's 'headers' (or --header 'Authorization: Bearer ...')",
        )
    return Failure("http_error", f"{status} from the server")


def stderr_tail(errlog: TextIO | None, secrets: Iterable[str] = ()) -> str:
    """The last `STDERR_LINES` lines (at most `STDERR_CHARS` characters) of a server's
    stderr, as written to `errlog` (None: not a stdio server, nothing), `secrets` masked
    before the cut: a cut inside one would keep its end, which no mask finds."""
    if errlog is None:
        return ""
    errlog.flush()
    errlog.seek(0)
    lines = errlog.read().strip().splitlines()[-STDERR_LINES:]
    return mask("\n".join(lines), secrets)[-STDERR_CHARS:]


def with_stderr(failure: Failure, tail: str, secrets: Iterable[str]) -> Failure:
    """`failure` with the server's stderr `tail` added (not to a command that never ran;
    a crash with none says so), and every secret masked."""
    message = failure.message
    if tail and failure.kind not in ("not_found", "cannot_start"):
        message += f"; its stderr ends:\n{tail}"
    elif failure.kind == "crashed":
        message += " (it wrote nothing to stderr)"
    return Failure(failure.kind, mask(message, secrets))
