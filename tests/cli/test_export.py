"""`toolproxy export --otlp-file`: the summary line, the filter, the header option."""

from __future__ import annotations

import json

import pytest

from toolproxy.cli.export import headers_of
from toolproxy.cli.main import main
from toolproxy.errors import UserError


def test_the_file_form_says_what_it_wrote(seeded_capture, tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    argv = ["export", "-c", str(seeded_capture), "--otlp-file", str(out), "--run", "g1"]
    assert main(argv) == 0
    said = capsys.readouterr().err
    assert said == (
        "exported 5 sessions as traces (15 spans: 7 model calls, 2 tool executions; "
        f"2 grades attached) to {out}\n"
    )
    request = json.loads(out.read_text())
    (resource,) = request["resourceSpans"]
    attrs = {a["key"]: a["value"]["stringValue"] for a in resource["resource"]["attributes"]}
    assert attrs["openinference.project.name"] == "toolproxy"
    assert attrs["toolproxy.capture"] == seeded_capture.name


def test_the_exchange_filter_picks_sessions(seeded_capture, tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    argv = ["export", "-c", str(seeded_capture), "--otlp-file", str(out), "--model", "claude-x"]
    assert main([*argv, "--project", "p", "--service-name", "agent-x"]) == 0
    assert "exported 1 session as traces (3 spans: 2 model calls" in capsys.readouterr().err
    text = out.read_text()
    assert '"agent-x"' in text and '"p"' in text


def test_headers_are_key_value_pairs():
    assert headers_of(["Authorization=Basic a=b", " x-k = v "]) == {
        "Authorization": "Basic a=b",
        "x-k": "v",
    }
    with pytest.raises(UserError, match="KEY=VALUE"):
        headers_of(["=v"])
