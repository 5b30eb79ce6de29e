"""toolproxy.localmodel.server's command line (the serving itself: test_process.py)."""

from __future__ import annotations

from toolproxy.localmodel import weights
from toolproxy.localmodel.server import main


def test_missing_weights_are_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(weights.ENV, str(tmp_path / "nowhere.gguf"))
    assert main(["--port", "1"]) == 2
    err = capsys.readouterr().err
    gone = tmp_path / "nowhere.gguf"
    assert err == f"toolproxy model: ${weights.ENV} names {gone}, which is not a file\n"
