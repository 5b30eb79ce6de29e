"""Keys in headers, query strings and bodies never reach any file the capture writes."""

from __future__ import annotations

import subprocess
import sys

import openai
import pytest

from toolproxy import store
from toolproxy.proxy import ProxySpec, RunningProxy, free_port
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
