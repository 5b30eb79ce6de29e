"""What talking to an MCP server gives back: an HTTP status in words, a stdio server's
stderr tail, a failure's message with that tail and no secret."""

from __future__ import annotations

import io

import httpx
import pytest

from toolproxy.mcp.config import MASK
from toolproxy.mcp.outcomes import (
    STDERR_CHARS,
    STDERR_LINES,
    Failure,
    http_failure,
    stderr_tail,
    with_stderr,
)

SECRET = "tok-9f8e7d6c5b"


def response(code: int, **headers: str) -> httpx.Response:
    return httpx.Response(code, headers=headers, request=httpx.Request("POST", "http://mcp/"))


def test_an_http_status_in_words_and_how_to_send_credentials():
    asked = http_failure(response(401, **{"WWW-Authenticate": 'Bearer realm="mcp"'}))
    assert asked.kind == "unauthorized"
    assert asked.message.startswith("HTTP 401 Unauthorized: the server refused the credentials")
    assert "; it asks for Bearer authentication. Set the Authorization header" in asked.message
    refused = http_failure(response(403))
    assert refused.kind == "forbidden" and "it asks for" not in refused.message
    bad_gateway = Failure("http_error", "HTTP 502 Bad Gateway from the server")
    assert http_failure(response(502)) == bad_gateway
    assert http_failure(response(599)) == Failure("http_error", "HTTP 599 from the server")


def test_the_stderr_tail_is_the_last_lines_and_characters():
    assert stderr_tail(None) == ""
    log = io.StringIO()
    log.write("".join(f"line {n}\n" for n in range(100)))
    assert stderr_tail(log).splitlines() == [f"line {n}" for n in range(100 - STDERR_LINES, 100)]
    long = io.StringIO("x" * (STDERR_CHARS + 500) + "\n\n")
    assert stderr_tail(long) == "x" * STDERR_CHARS


def test_a_secret_the_tail_s_cut_falls_inside_leaves_no_part_of_it():
    # a server that logs its token at startup, then enough to push the token across the
    # first character kept: the end of the token stayed, where no whole-value mask finds it
    token = "ghp_" + "0123456789abcdefghij" * 2
    log = io.StringIO(f"auth with {token}\n" + "y" * (STDERR_CHARS - 20) + "\n")
    assert len(stderr_tail(log)) == STDERR_CHARS and token[-12:] in stderr_tail(log)
    tail = stderr_tail(log, [token])
    assert token[-8:] not in tail and f"auth with {MASK}" in tail
    assert len(tail) <= STDERR_CHARS and tail.endswith("y")


@pytest.mark.parametrize(
    ("kind", "tail", "message"),
    [
        ("crashed", f"bad key {SECRET}", f"exited; its stderr ends:\nbad key {MASK}"),
        ("crashed", "", "exited (it wrote nothing to stderr)"),
        ("timeout", "", "exited"),
        ("not_found", "sh: mcp-x: not found", "exited"),  # the command never ran: no tail
        ("cannot_start", "permission denied", "exited"),
    ],
)
def test_a_failure_gets_the_tail_and_loses_its_secrets(kind, tail, message):
    got = with_stderr(Failure(kind, "exited"), tail, [SECRET])
    assert got == Failure(kind, message)
    assert with_stderr(Failure(kind, f"token {SECRET}"), "", [SECRET]).message.startswith(
        f"token {MASK}"
    )
