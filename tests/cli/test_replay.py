"""toolproxy.cli.replay: `replay-diff` over a stored replay run (the seeded capture)."""

from __future__ import annotations

import json

from toolproxy.cli.main import main


def test_replay_diff_lists_every_call_or_only_the_changed(seeded_capture, capsys):
    assert main(["replay-diff", "rp", "-c", str(seeded_capture), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(d["step"], d["replayed_arguments"]) for d in rows] == [
        (1, {"city": "Paris"}),
        (2, {"q": "Rome"}),
    ]
    assert main(["replay-diff", "rp", "-c", str(seeded_capture), "--changed"]) == 0
    table = capsys.readouterr().out
    assert 'search({"q":"Rome"})' in table and "tool" in table
    assert 'get_weather({"city":"Paris"})' not in table


def test_an_unknown_run_is_a_clear_error(seeded_capture, capsys):
    assert main(["replay-diff", "nope", "-c", str(seeded_capture)]) == 2
    assert "no replay run named 'nope'" in capsys.readouterr().err


def test_a_known_run_with_nothing_changed_for_a_candidate_is_empty_not_an_error(
    seeded_capture, capsys
):
    assert main(["replay-diff", "rp", "-c", str(seeded_capture), "--candidate", "x"]) == 0
    assert "get_weather" not in capsys.readouterr().out
