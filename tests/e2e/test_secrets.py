"""Keys in headers, query strings and bodies never reach any file the capture writes."""

from __future__ import annotations

import subprocess
import sys

import openai
import pytest

from toolproxy import store
from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port
from toolproxy.scripted import Reply, Script

from .conftest import assert_clean

KEY = "sk-live-SECRET-0123456789abcdef"
TENANT = "tenant-secret-ABCDEFGH"
META = "meta-secret-ZYXWVUTS"


def test_keys_never_touch_disk(upstream, capture, tmp_path):
    # The upstream echoes the key back in an error body, as real providers do.
    upstream.set_script(
        Script.of(
            Reply(text="fine"),
            Reply(
                status=401, error_body={"error": {"message": f"Incorrect API key provided: {KEY}"}}
            ),
        )
    )
    spec = ProxySpec(
        capture=capture,
        upstream=upstream.url,
        port=free_port(),
        flush_interval=0.05,
        redact_headers=["X-Tenant"],
        redact_json=["metadata.secret"],
    )
    with RunningProxy(spec) as proxy:
        client = openai.OpenAI(
            base_url=f"{proxy.url}/v1",
            api_key=KEY,
            max_retries=0,
            default_query={"key": KEY},
            default_headers={"x-api-key": KEY, "X-Tenant": TENANT, "Cookie": f"sid={KEY}"},
        )
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            extra_body={"api_key": KEY, "metadata": {"secret": META, "keep": "visible"}},
        )
        with pytest.raises(openai.AuthenticationError):
            client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "again"}]
            )
        log = proxy.stop()
    assert_clean(log)
    export = tmp_path / "export.jsonl"
    store.export_jsonl(capture, "exchanges", export)
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolproxy.cli",
            "sql",
            "--capture",
            str(capture),
            "--json",
            "SELECT * FROM exchanges",
        ],
        capture_output=True,
        text=True,
        check=True,
    )

    # compacted and uncompacted both: check the segment files, then compact and check again
    def scan():
        found = []
        for path in [*capture.rglob("*"), export]:
            if path.is_file():
                data = path.read_bytes()
                found += [(path, s) for s in (KEY, TENANT, META) if s.encode() in data]
        return found

    assert scan() == []
    store.compact(capture)
    assert scan() == []
    for text in (log, cli.stdout, cli.stderr):
        assert KEY not in text and TENANT not in text and META not in text
    # and the capture is still useful: the non-secret parts are there
    assert "visible" in cli.stdout and "Incorrect API key provided: [REDACTED]" in cli.stdout


# --- the three leaks an adversarial run found: encoded query values, keys in bodies that
# are not JSON, and keys echoed back in bodies that are not UTF-8 ---------------------------

SIG = "ab/cd+ef=SIGNATURE-0123456789"  # needs URL-encoding: %2F %2B %3D
BODY_KEY = "sk-body-SECRET-9876543210"
AUTH = "sk-auth-SECRET-5555555555"


def spellings(secret: str) -> list[bytes]:
    """A secret as it could stand in a file: raw, URL-encoded, base64, JSON-escaped."""
    import base64
    import json
    from urllib.parse import quote, quote_plus

    forms = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
    found = [f.encode() for f in forms]
    return found + [base64.b64encode(secret.encode())]


class _Echo(__import__("http.server").server.BaseHTTPRequestHandler):
    """An upstream that echoes what it was sent, the way providers' error pages do, in a
    body that is not UTF-8."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's hook name
        length = int(self.headers.get("content-length") or 0)
        sent = self.rfile.read(length)
        body = (
            b"\xff\xfe error: bad request "
            + self.path.encode()
            + b" auth="
            + (self.headers.get("authorization") or "").encode()
            + b" body="
            + sent
        )
        self.send_response(400)
        self.send_header("content-type", "text/plain; charset=latin-1")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_encoded_unparseable_and_binary_echoes_never_touch_disk(capture, tmp_path):
    import threading
    from http.server import ThreadingHTTPServer
    from urllib.parse import quote

    import httpx

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    upstream = f"http://127.0.0.1:{server.server_address[1]}"
    spec = ProxySpec(capture=capture, upstream=upstream, port=free_port(), flush_interval=0.05)
    try:
        with RunningProxy(spec) as proxy:
            for body in (
                b'{"model": "m", "api_key": "' + BODY_KEY.encode() + b'", "messages": [',  # cut
                b"model=m&apiKey=" + BODY_KEY.encode(),  # a form body
            ):
                r = httpx.post(
                    f"{proxy.url}/v1/chat/completions?sig={quote(SIG, safe='')}&keep=yes",
                    content=body,
                    headers={"authorization": f"Bearer {AUTH}"},
                )
                assert r.status_code == 400 and AUTH.encode() in r.content  # untouched
            log = proxy.stop()
    finally:
        server.shutdown()
    assert_clean(log)
    got = store.query(capture, "SELECT path, body_encoding, status_code FROM exchanges")[1]
    assert len(got) == 2 and {e for _, e, _ in got} == {"base64"}
    assert all("keep=yes" in path and "sig=[REDACTED]" in path for path, _, _ in got)
    export = tmp_path / "export.jsonl"
    store.export_jsonl(capture, "exchanges", export)
    forms = [f for s in (SIG, BODY_KEY, AUTH) for f in spellings(s)]

    def scan() -> list[tuple[str, bytes]]:
        return [
            (str(path), form)
            for path in [*capture.rglob("*"), export]
            if path.is_file()
            for form in forms
            if form in path.read_bytes()
        ]

    assert scan() == []
    store.compact(capture)
    assert scan() == []
    for form in forms:
        assert form.decode() not in log


# a key the upstream echoes where the capture cuts a text: at the body cap, at the 500
# characters an error message keeps ----------------------------------------------------

CUT_KEY = "sk-live-cut-SECRET-0123456789abcdef"


@pytest.mark.parametrize("max_body", [None, 495])
def test_a_key_cut_in_half_by_a_cap_leaves_no_half_on_disk(capture, tmp_path, max_body):
    import httpx

    from toolproxy.scripted import Reply, Script, ScriptedUpstream

    # 450 characters, then the key across character 500 (the error message's cut, after
    # "HTTP 401: ") and byte 495 (the body cap when set)
    text = "x" * 450 + f" Incorrect API key provided: {CUT_KEY}. " + "y" * 100
    assert text.index(CUT_KEY) < 495 < text.index(CUT_KEY) + len(CUT_KEY)
    refused = Reply(status=401, error_body=text, content_type="text/plain")
    extra = ["--set", f"toolproxy_max_body={max_body}"] if max_body else []
    with ScriptedUpstream(Script.of(refused)) as up:
        spec = ProxySpec(capture=capture, upstream=up.url, port=free_port(), flush_interval=0.05)
        spec.extra = extra
        with RunningProxy(spec) as proxy:
            r = httpx.post(
                f"{proxy.url}/v1/chat/completions",
                json={"model": "m", "messages": []},
                headers={"authorization": f"Bearer {CUT_KEY}"},
            )
            assert r.status_code == 401 and CUT_KEY in r.text  # untouched
            log = proxy.stop()
    assert_clean(log)
    ((message, body, truncated),) = store.query(
        capture, "SELECT error_message, response_body, truncated FROM exchanges"
    )[1]
    assert "Incorrect API key provided: [REDACTED]" in message
    assert truncated == bool(max_body) and body.endswith("[REDACTED]" if max_body else "y")
    half = CUT_KEY[: len(CUT_KEY) // 2].encode()  # more than the key's public prefix
    assert [p for p in capture.rglob("*") if p.is_file() and half in p.read_bytes()] == []


# --- credentials the request body carries for the provider: a hosted MCP server's header,
# OAuth token and URL key (Responses, whose answer echoes its tools back), the MCP
# connector's token (Anthropic) -----------------------------------------------------------

MCP_KEY = "sk-mcp-SECRET-0123456789abcdef"
OAUTH = "oauth-SECRET-ABCDEFGHIJ"
URL_KEY = "smithery-SECRET-0246813579"
TOKEN = "mcp-connector-SECRET-97531"


def test_credentials_for_hosted_mcp_servers_never_touch_disk(upstream, capture):
    import httpx

    upstream.set_script(Script.of(Reply(text="fine"), Reply(text="also fine")))
    spec = ProxySpec(capture=capture, upstream=upstream.url, port=free_port(), flush_interval=0.05)
    tool = {
        "type": "mcp",
        "server_label": "dice",
        "server_url": f"https://mcp.example.com/mcp?api_key={URL_KEY}&profile=p1",
        "headers": {"Authorization": f"Bearer {MCP_KEY}"},
        "authorization": OAUTH,
        "require_approval": "never",
    }
    with RunningProxy(spec) as proxy:
        client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="sk-agent", max_retries=0)
        answer = client.responses.create(model="m", input="roll 2d4", tools=[tool])
        # untouched: the agent reads its tools back as it sent them
        assert answer.tools[0].headers == {"Authorization": f"Bearer {MCP_KEY}"}
        r = httpx.post(
            f"{proxy.url}/v1/messages",
            headers={"x-api-key": "sk-agent", "anthropic-version": "2023-06-01"},
            json={
                "model": "claude",
                "max_tokens": 100,
                "messages": [{"role": "user", "content": "what tools?"}],
                "mcp_servers": [
                    {
                        "type": "url",
                        "url": "https://mcp.example.com/sse",
                        "name": "m",
                        "authorization_token": TOKEN,
                    }
                ],
            },
        )
        assert r.status_code == 200
        log = proxy.stop()
    assert_clean(log)
    secrets = [s.encode() for s in (MCP_KEY, OAUTH, URL_KEY, TOKEN)]
    leaked = [
        (p.name, s)
        for p in capture.rglob("*")
        if p.is_file()
        for s in secrets
        if s in p.read_bytes()
    ]
    assert leaked == []
    (tools,) = store.query(
        capture, "SELECT request_body FROM exchanges WHERE wire_format = 'openai_responses'"
    )[1][0]
    assert '"server_label": "dice"' in tools and "profile=p1" in tools  # the rest is kept
