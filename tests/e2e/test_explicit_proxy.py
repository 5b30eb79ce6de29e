"""`HTTPS_PROXY` + the mitmproxy CA, exactly as the README tells users: openai SDK and curl."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port
from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream

from .conftest import assert_clean, wait_rows
from .tls import make_cert, server_context

CLIENT = """
import os, openai
client = openai.OpenAI(base_url=os.environ["UPSTREAM"] + "/v1", api_key="sk-explicit-test",
                       max_retries=0)
reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
print(reply.choices[0].message.tool_calls[0].function.arguments)
"""


@contextmanager
def explicit_proxy(tmp_path, capture, reply: Reply) -> Iterator[tuple[Any, Any, dict[str, str]]]:
    """A TLS scripted upstream playing `reply`, mitmdump + toolproxy as an explicit proxy in
    front of it (trusting the upstream's self-signed certificate, as it trusts real
    providers), and the environment a client gets: `HTTPS_PROXY`, the CA as `CA`."""
    cert, key = make_cert(tmp_path)
    confdir = tmp_path / "mitmproxy"
    with ScriptedUpstream(Script.of(reply), tls=server_context(cert, key)) as upstream:
        assert upstream.url.startswith("https://")
        spec = ProxySpec(
            capture=capture,
            port=free_port(),
            flush_interval=0.05,
            confdir=str(confdir),
            extra=["--set", f"ssl_verify_upstream_trusted_ca={cert}"],
        )
        with RunningProxy(spec) as proxy:
            ca = confdir / "mitmproxy-ca-cert.pem"
            assert ca.exists()
            env = {**os.environ, "HTTPS_PROXY": proxy.url, "CA": str(ca), "UPSTREAM": upstream.url}
            env.pop("NO_PROXY", None)
            env.pop("no_proxy", None)
            yield upstream, proxy, env


def test_https_proxy_with_the_mitmproxy_ca(tmp_path, capture):
    reply = Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={"city": "Lyon"})])
    with explicit_proxy(tmp_path, capture, reply) as (upstream, proxy, env):
        env["SSL_CERT_FILE"] = env["CA"]
        sdk = subprocess.run(
            [sys.executable, "-c", CLIENT], env=env, capture_output=True, text=True
        )
        assert sdk.returncode == 0, sdk.stderr
        assert json.loads(sdk.stdout) == {"city": "Lyon"}
        curl = subprocess.run(
            ["curl", "-sS", "--fail", "--cacert", env["CA"], f"{upstream.url}/v1/models"],
            env=env,
            capture_output=True,
            text=True,
        )
        assert curl.returncode == 0, curl.stderr
        assert json.loads(curl.stdout)["object"] == "list"
        rows = wait_rows(
            capture,
            "SELECT scheme, method, path, wire_format FROM exchanges ORDER BY started_at",
            2,
        )
        assert_clean(proxy.stop())
    assert rows == [
        ("https", "POST", "/v1/chat/completions", "openai_chat"),
        ("https", "GET", "/v1/models", "unknown"),
    ]


BEDROCK = """
import os, boto3
client = boto3.client("bedrock-runtime", region_name="us-east-1",
                      endpoint_url=os.environ["UPSTREAM"], aws_access_key_id="AKIAEXPLICIT0001",
                      aws_secret_access_key="explicit-secret-key-0123456789")
events = client.converse_stream(modelId="anthropic.claude-3-5-haiku-20241022-v1:0",
                                messages=[{"role": "user", "content": [{"text": "Lyon?"}]}])
print([e for e in events["stream"] if "contentBlockStart" in e][0]["contentBlockStart"])
"""


def _signature_holds(request, url: str) -> bool:
    """Whether the request the upstream got still carries a valid SigV4 signature for what
    it holds: signed again from its own headers, at its own time, it signs the same."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    headers = {k: v for k, v in request.headers.items() if k != "authorization"}
    signed = request.headers["authorization"].split("SignedHeaders=")[1].split(",")[0]
    again = AWSRequest(
        method=request.method,
        url=url + request.path,
        data=request.raw,
        headers={k: v for k, v in headers.items() if k in signed.split(";")},
    )
    auth = SigV4Auth(
        Credentials("AKIAEXPLICIT0001", "explicit-secret-key-0123456789"), "bedrock", "us-east-1"
    )
    again.context["timestamp"] = headers["x-amz-date"]  # signed at the time it says
    signature = auth.signature(auth.string_to_sign(again, auth.canonical_request(again)), again)
    return request.headers["authorization"].endswith(f"Signature={signature}")


def test_bedrock_through_https_proxy_keeps_its_signature(tmp_path, capture):
    """As the README tells Bedrock users: explicit proxy mode, boto3 trusting mitmproxy's CA
    through AWS_CA_BUNDLE; the request reaches the upstream with its SigV4 signature valid
    for what arrived, and the ConverseStream is recorded."""
    reply = Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={"city": "Lyon"})])
    with explicit_proxy(tmp_path, capture, reply) as (upstream, proxy, env):
        env["AWS_CA_BUNDLE"] = env["CA"]
        sdk = subprocess.run(
            [sys.executable, "-c", BEDROCK], env=env, capture_output=True, text=True
        )
        assert sdk.returncode == 0, sdk.stderr
        assert "get_weather" in sdk.stdout
        rows = wait_rows(capture, "SELECT wire_format, parse_status FROM exchanges", 1)
        assert_clean(proxy.stop())
        (received,) = upstream.requests
    assert _signature_holds(received, upstream.url)
    # what a reverse proxy does (the host rewritten to the provider's) breaks it
    moved = {**received.headers, "host": "bedrock-runtime.us-east-1.amazonaws.com"}
    assert not _signature_holds(dataclasses.replace(received, headers=moved), upstream.url)
    assert rows == [("bedrock_converse", "ok")]
