"""`HTTPS_PROXY` + the mitmproxy CA, exactly as the README tells users: openai SDK and curl."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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


def test_https_proxy_with_the_mitmproxy_ca(tmp_path, capture):
    cert, key = make_cert(tmp_path)
    reply = Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={"city": "Lyon"})])
    confdir = tmp_path / "mitmproxy"
    with ScriptedUpstream(Script.of(reply), tls=server_context(cert, key)) as upstream:
        assert upstream.url.startswith("https://")
        spec = ProxySpec(
            capture=capture,
            port=free_port(),
            flush_interval=0.05,
            confdir=str(confdir),
            # mitmproxy must trust our self-signed upstream, as it trusts real providers
            extra=["--set", f"ssl_verify_upstream_trusted_ca={cert}"],
        )
        with RunningProxy(spec) as proxy:
            ca = confdir / "mitmproxy-ca-cert.pem"
            assert ca.exists()
            env = {
                **os.environ,
                "HTTPS_PROXY": proxy.url,
                "SSL_CERT_FILE": str(ca),
                "UPSTREAM": upstream.url,
            }
            env.pop("NO_PROXY", None)
            env.pop("no_proxy", None)
            sdk = subprocess.run(
                [sys.executable, "-c", CLIENT], env=env, capture_output=True, text=True
            )
            assert sdk.returncode == 0, sdk.stderr
            assert json.loads(sdk.stdout) == {"city": "Lyon"}
            curl = subprocess.run(
                ["curl", "-sS", "--fail", "--cacert", str(ca), f"{upstream.url}/v1/models"],
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
