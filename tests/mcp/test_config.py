"""MCP configs in all three formats, as files users have, into server specs."""

from __future__ import annotations

import json
import os

import pytest

from tests import paths
from toolproxy.errors import UserError
from toolproxy.mcp.config import (
    MASK,
    ConfigError,
    Context,
    expand,
    input_env_name,
    mask,
    parse_config,
    parse_dotenv,
    parse_entry,
    secret_parts,
    strip_jsonc,
    transport_for_url,
    url_secrets,
)

FIXTURES = paths.FIXTURES / "mcp"
ENV = {
    "TOOLPROXY_TEST_PYTHON": "/opt/py/bin/python",
    "TOOLPROXY_TEST_SECRET": "s3cret-token-value",
    "TOOLPROXY_TEST_HTTP_URL": "http://127.0.0.1:9001/mcp",
    "TOOLPROXY_TEST_SSE_URL": "http://127.0.0.1:9002/sse",
    "TOOLPROXY_TEST_401_URL": "http://127.0.0.1:9003/mcp",
    "TOOLPROXY_TEST_REPO": "/tmp/repo",
}


def ctx(workspace: str = "/work/proj", environ: dict[str, str] | None = None) -> Context:
    return Context(workspace, "/home/u", ENV if environ is None else environ)


def by_name(specs):
    return {s.name: s for s in specs}


def parse_fixture(rel: str, workspace: str, environ=None):
    path = FIXTURES / rel
    return by_name(parse_config(path.read_text(), str(path), ctx(workspace, environ)))


def test_claude_desktop_config():
    specs = parse_fixture("claude_desktop_config.json", "/work/proj")
    assert list(specs) == ["time", "paged", "missing", "crash"]
    time = specs["time"]
    assert (time.transport, time.command) == ("stdio", "python")
    assert time.args == ("-m", "mcp_server_time", "--local-timezone", "Etc/UTC")
    assert time.error is None and time.secrets == ()
    paged = specs["paged"]
    assert paged.args == ("/work/proj/tests/mcp_servers/paged.py",)
    # An unset ${env:...} is empty, as in VS Code; a set one is expanded and is a secret.
    assert paged.env == {"PAGED_VARIANT": "", "PAGED_NOTE": " key=s3cret-token-value"}
    # The expanded ${env:...} is a secret by itself too, wherever the server echoes it.
    assert {" key=s3cret-token-value", "s3cret-token-value"} <= set(paged.secrets)
    assert "" not in paged.secrets
    assert specs["crash"].env == {"CRASH_TOKEN": "s3cret-token-value"}


def test_cursor_config_infers_remote_transports():
    specs = parse_fixture("cursor/.cursor/mcp.json", "/work/proj/tests/fixtures/mcp/cursor")
    assert specs["weather"].transport == "stdio"
    assert specs["weather"].command == "/opt/py/bin/python"
    assert specs["weather"].args == (
        "/work/proj/tests/fixtures/mcp/cursor/../../../mcp_servers/weather.py",
    )
    http, sse = specs["weather-http"], specs["weather-sse"]
    assert (http.transport, http.url) == ("http", "http://127.0.0.1:9001/mcp")
    assert (sse.transport, sse.url) == ("sse", "http://127.0.0.1:9002/sse")
    assert http.headers == {"Authorization": "Bearer s3cret-token-value"}
    assert {"Bearer s3cret-token-value", "s3cret-token-value"} <= set(http.secrets)


def test_vscode_config_needs_its_input():
    specs = parse_fixture("vscode/.vscode/mcp.json", "/work/proj/v")
    git = specs["git"]
    assert git.transport == "stdio" and git.error is None
    assert git.args == ("-m", "mcp_server_git", "--repository", "/tmp/repo")
    assert git.env_file == "/work/proj/v/servers.env"
    assert specs["weather-sse"].transport == "sse"
    http = specs["weather-http"]
    assert http.transport == "http"
    assert http.error is not None
    assert "needs input 'weather-key' (Weather API key)" in http.error
    assert "TOOLPROXY_INPUT_WEATHER_KEY=" in http.error


def test_vscode_input_from_the_environment_is_a_secret():
    environ = ENV | {"TOOLPROXY_INPUT_WEATHER_KEY": "input-key-123"}
    http = parse_fixture("vscode/.vscode/mcp.json", "/w", environ)["weather-http"]
    assert http.error is None
    assert http.headers == {"Authorization": "Bearer input-key-123"}
    assert "input-key-123" in http.secrets


def test_vscode_settings_shape_and_both_keys():
    text = json.dumps({"mcp": {"servers": {"a": {"command": "a"}}}})
    assert [s.name for s in parse_config(text, "settings.json", ctx())] == ["a"]
    both = json.dumps(
        {"mcpServers": {"a": {"command": "a"}}, "servers": {"b": {"url": "http://x/"}}}
    )
    assert [s.name for s in parse_config(both, "x.json", ctx())] == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{nope", "not valid JSON"),
        ('{\n  "servers": {\n    "a": [}\n}', "line 3"),
        ('{\n  "servers": {"a": "b}}', r"\(Unterminated string starting at line 2\)"),
        ("[1, 2]", "expected a JSON object"),
        ('{"other": {}}', "no 'mcpServers'"),
        ('{"servers": [1]}', "must be a JSON object"),
    ],
)
def test_files_that_are_not_configs(text, message):
    with pytest.raises(ConfigError, match=message) as info:
        parse_config(text, "conf.json", ctx())
    assert "conf.json" in str(info.value)
    assert isinstance(info.value, UserError)


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        ("python", "not a JSON object"),
        ({}, "neither 'command'"),
        ({"type": "websocket", "url": "ws://x"}, "unknown type 'websocket'"),
        ({"type": "stdio", "url": "http://x/"}, "needs a 'command'"),
        ({"type": "sse", "command": "x"}, "needs a 'url'"),
        ({"command": "x", "args": "a b"}, "args must be a list"),
        ({"command": "x", "env": {"A": True}}, "env.A must be a string"),
        ({"command": "x", "env": ["A"]}, "env must be an object"),
        ({"url": "http://x/", "headers": {"A": {"b": 1}}}, "headers.A must be a string"),
        ({"command": "x", "cwd": 3}, "cwd must be a string"),
        ({"command": "${command:pick}"}, "only the editor can resolve"),
        ({"command": "${env:TOOLPROXY_UNSET}"}, "command is empty once variables are expanded"),
        ({"url": "${env:TOOLPROXY_UNSET}"}, "url must be an http(s) URL, got ''"),
        ({"url": "ftp://h/?k=secret-value"}, "url must be an http(s) URL, got 'ftp://h/?k=***'"),
        ({"command": "x", "args": ["${config:a.b}"]}, "only the editor can resolve"),
    ],
)
def test_a_bad_entry_is_an_error_value(entry, error):
    spec = parse_entry("s", entry, "conf.json", ctx())
    assert spec.name == "s" and spec.source == "conf.json"
    assert spec.error is not None and error in spec.error


def test_entry_details():
    spec = parse_entry(
        "s",
        {
            "type": "streamable-http",
            "serverUrl": "https://u:pa55word@h.example/mcp?api_key=query-secret-1",
            "headers": {"X-Key": 12345678},
        },
        "c",
        ctx(),
    )
    assert spec.transport == "http" and spec.url.startswith("https://u:")
    assert spec.headers == {"X-Key": "12345678"}
    assert {"pa55word", "query-secret-1", "12345678"} <= set(spec.secrets)
    stdio = parse_entry(
        "s",
        {"command": "x", "args": [1, "b"], "env": {"N": None, "P": 2}, "cwd": "sub"},
        "c",
        ctx(),
    )
    assert stdio.args == ("1", "b") and stdio.env == {"P": "2"} and stdio.cwd == "/work/proj/sub"


def test_expand_variables():
    c = ctx("/work/proj", {"HOME_DIR": "/h"})
    assert expand("${workspaceFolder}/a", c) == "/work/proj/a"
    assert expand("${workspaceFolderBasename}", c) == "proj"
    assert expand("${userHome}${pathSeparator}x${/}y", c) == f"/home/u{os.sep}x{os.sep}y"
    assert expand("${env:HOME_DIR}:${env:UNSET}", c) == "/h:"
    assert expand("${HOME} ${unknown} $env ${}", c) == "${HOME} ${unknown} $env ${}"
    used: list[str] = []
    c2 = Context("/w", "/h", {"TOOLPROXY_INPUT_TOKEN_2": "tok"})
    assert expand("a ${input:token.2}", c2, used) == "a tok" and used == ["tok"]
    assert input_env_name("api-key") == "TOOLPROXY_INPUT_API_KEY"


def test_strip_jsonc():
    text = """{
  // a comment with "quotes" and a , before }
  "a": "http://x//y /* not a comment */", /* block
  comment */ "b": [1, 2, ],
  "c": {"d": "\\"//", "e": ",]"},
}"""
    assert json.loads(strip_jsonc(text)) == {
        "a": "http://x//y /* not a comment */",
        "b": [1, 2],
        "c": {"d": '"//', "e": ",]"},
    }
    assert strip_jsonc('{"a": 1} // end').strip() == '{"a": 1}'
    assert json.loads(strip_jsonc("[1, /* c */ ]")) == [1]
    assert json.loads(strip_jsonc('{"a": 1, // c\n}')) == {"a": 1}
    # Comments keep their line breaks, so JSON errors point at the right line.
    assert strip_jsonc("/* a\nb */x").count("\n") == 1


def test_mask_and_secret_parts():
    secrets = ["Bearer abcdef123456", "abcdef123456", "short", "abcdef123456789"]
    text = "sent abcdef123456789 and abcdef123456, not short"
    assert mask(text, secrets) == f"sent {MASK} and {MASK}, not short"
    assert secret_parts("Bearer tok-123456") == ["Bearer tok-123456", "tok-123456"]
    assert secret_parts("tok 1 2") == ["tok 1 2", "1 2"]
    assert secret_parts("plain") == ["plain"]
    assert url_secrets("http://u:pw@h/p?a=1&b=two") == ["pw", "1", "two"]
    assert url_secrets("http://[bad") == []


def test_parse_dotenv():
    text = "# c\nA=1\nexport B = \"two words\"\nC='x'\nnot a pair\n\nD=a=b\n"
    assert parse_dotenv(text) == {"A": "1", "B": "two words", "C": "x", "D": "a=b"}
    assert parse_dotenv((FIXTURES / "vscode" / "servers.env").read_text()) == {
        "GIT_PAGER": "cat",
        "EXTRA_TOKEN": "dotenv-secret-value",
    }


def test_transport_for_url():
    assert transport_for_url("http://h/sse") == "sse"
    assert transport_for_url("http://h/sse/") == "sse"
    assert transport_for_url("http://h/sse?x=1") == "sse"
    assert transport_for_url("http://h/mcp") == "http"
    assert transport_for_url("http://h/ssex") == "http"


def test_repr_keeps_credentials_out():
    spec = parse_entry(
        "s", {"url": "http://h/?k=query-secret", "headers": {"A": "header-secret"}}, "c", ctx()
    )
    assert "secret" not in repr(spec) and "name='s'" in repr(spec)
