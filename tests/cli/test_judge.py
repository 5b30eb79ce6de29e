"""`toolproxy judge calibrate` against a real HTTP server playing the judge's replies."""

from __future__ import annotations

import json

import pytest

from toolproxy import store
from toolproxy.cli.main import main
from toolproxy.scripted import Reply, Script

SET = """
items:
  - {id: paris, criterion: the city of Paris, value: Paris, human: 1}
  - {id: lyon, criterion: the city of Paris, value: Lyon, human: 0}
  - {id: district, criterion: "Paris, 8th arrondissement", value: Paris, human: partial}
  - {id: refusal, criterion: a polite refusal, value: "No.", human: fail}
  - {id: broken, criterion: a date, value: "2024-01-01", human: pass}
"""


def score(s: float, why: str) -> Reply:
    return Reply(text=json.dumps({"score": s, "reason": why}))


def calibrate(upstream, tmp_path, *extra: str) -> int:
    path = tmp_path / "set.yaml"
    path.write_text(SET)
    return main([
        "judge", "calibrate", str(path), "--judge-url", upstream.url + "/v1",
        "--judge-model", "judge-2024-01-01", *extra,
    ])  # fmt: skip


@pytest.fixture
def replies(scripted_upstream):
    scripted_upstream.set_script(
        Script.of(
            score(1, "same city"),
            score(0, "another city"),
            score(1, "Paris is Paris"),  # the human said partial
            score(1, "short but polite"),  # the human said fail
            Reply(text="I think it is a date."),  # not a score: listed, not counted
        )
    )
    return scripted_upstream


def test_prints_agreement_kappa_and_every_disagreement(replies, tmp_path, capsys) -> None:
    assert calibrate(replies, tmp_path) == 0
    out = capsys.readouterr().out
    assert "judge judge-2024-01-01 vs human labels: 4 of 5 items scored (pass at 1)" in out
    # pass/fail: human [T,F,F,F] judge [T,F,T,T]: po 2/4, pe .25*.75 + .75*.25 = .375,
    # kappa (.5 - .375) / .625 = .2
    assert "pass/fail agreement 50.0%, Cohen's kappa 0.200" in out
    assert "disagreements (2):" in out and "Paris is Paris" in out and "short but polite" in out
    assert "not scored (1):" in out and "broken" in out and "judge reply is not JSON" in out
    assert len(replies.requests) == 5


def test_json_min_kappa_and_the_cache(replies, tmp_path, capsys) -> None:
    cap = store.init_capture(tmp_path / "cap")
    assert calibrate(replies, tmp_path, "--json", "-c", str(cap), "--min-kappa", "0.4") == 1
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert (data["scored"], data["agreement"]) == (4, 0.5)
    assert data["kappa"] == pytest.approx(0.2)
    assert [d["id"] for d in data["disagreements"]] == ["district", "refusal"]
    assert "kappa 0.200 is below --min-kappa 0.4" in err
    # scores went to the capture's judge cache: a second run asks only the failed item
    before = len(replies.requests)
    replies.set_script(Script.of(score(1, "a date")))
    assert calibrate(replies, tmp_path, "--json", "-c", str(cap), "--pass-at", "0.5") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["scored"] == 5 and data["failed"] == {}
    assert len(replies.requests) == before + 1
    # passing at 0.5, the partial item agrees on pass/fail: 4 of 5
    assert data["agreement"] == pytest.approx(0.8)


def test_an_alias_judge_model_is_warned_about(replies, tmp_path, capsys) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(SET)
    main(["judge", "calibrate", str(path), "--judge-url", replies.url + "/v1",
          "--judge-model", "gpt-4o"])  # fmt: skip
    assert "judge model 'gpt-4o' looks like an alias" in capsys.readouterr().err
