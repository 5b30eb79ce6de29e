"""`toolproxy model install | serve` (the serving itself: tests/localmodel)."""

from __future__ import annotations

from toolproxy.cli.main import main
from toolproxy.localmodel import weights


def test_install_says_where_the_weights_are(capsys):
    assert main(["model", "install"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("local model weights: ") and ".gguf (" in out


def test_serve_without_weights_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(weights.ENV, str(tmp_path / "nowhere.gguf"))
    assert main(["model", "serve", "--port", "1"]) == 2
    assert "which is not a file" in capsys.readouterr().err
