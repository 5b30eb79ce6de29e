"""toolproxy.cli.mcp: the `mcp` subcommands turn their options into typed calls."""

from __future__ import annotations

import json

from toolproxy.cli.main import main


def test_pull_selects_servers_from_its_options(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no config files here: only the ad hoc server counts
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"a": {"command": "true"}}}))
    argv = ["mcp", "pull", "-c", str(tmp_path / "cap"), "--config", str(config)]
    assert main([*argv, "--server", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
    assert main(["mcp", "pull", "-c", str(tmp_path / "cap"), "--timeout", "0"]) == 2
    assert "--timeout must be positive" in capsys.readouterr().err


def test_check_and_budget_read_one_session(seeded_capture, capsys):
    assert main(["mcp", "check", "-c", str(seeded_capture), "--session", "s-b", "--json"]) == 0
    (call,) = json.loads(capsys.readouterr().out)["calls"]
    assert (call["exchange_id"], call["source"], call["check"]["valid"]) == ("b-0", "offered", True)
    assert main(["mcp", "budget", "-c", str(seeded_capture), "--session", "s-a", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["requests"]) == 3


def test_drift_without_pulled_schemas_for_a_server_says_so(seeded_capture, capsys):
    assert main(["mcp", "drift", "-c", str(seeded_capture), "--server", "other"]) == 2
    assert "no pulled MCP schemas for server(s) other" in capsys.readouterr().err


def test_the_reports_read_the_agent_s_own_traffic_unless_told(seeded_capture, capsys):
    # a replay re-offers the recorded tools once per candidate and repeat: counted in, a
    # budget's requests and a drift's exchanges grew with every replay run
    def requests(*more: str) -> int:
        assert main(["mcp", "budget", "-c", str(seeded_capture), "--json", *more]) == 0
        return json.loads(capsys.readouterr().out)["capture"]["requests"]

    assert (requests(), requests("--origin", "replayed"), requests("--origin", "any")) == (6, 1, 7)
    for command in ("drift", "check"):
        assert main(["mcp", command, "-c", str(seeded_capture), "--origin", "replayed"]) == 0
        capsys.readouterr()
