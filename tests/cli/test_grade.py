"""toolproxy.cli.grade: `label`, `grade` and `report` turn their options into typed calls."""

from __future__ import annotations

import yaml

from toolproxy.cli.main import main


def test_label_takes_the_store_filter_from_its_options(seeded_capture, tmp_path, capsys):
    out = tmp_path / "cases.yaml"
    argv = ["label", "-c", str(seeded_capture), "-o", str(out), "--model", "gpt-a-2026"]
    assert main([*argv, "--tool", "get_weather", "--until", "2026-03-01T12:00:01"]) == 0
    cases = yaml.safe_load(out.read_text())
    assert [c["exchange_id"] for c in cases] == ["a-0"]  # a-1 starts at 12:00:01


def test_label_no_calls_keeps_offered_text_turns(seeded_capture, tmp_path):
    out = tmp_path / "cases.yaml"
    assert main(["label", "-c", str(seeded_capture), "-o", str(out), "--no-calls"]) == 0
    cases = yaml.safe_load(out.read_text())
    assert [(c["exchange_id"], c["expect"]) for c in cases] == [
        ("a-0", "call"),
        ("a-1", "call"),
        ("a-2", "no_call"),
        ("b-0", "call"),
        ("c-0", "no_call"),  # r-0 was offered nothing; b-1 and m-0 are no model turns
    ]


def test_a_judge_needs_its_url_and_its_model(seeded_capture, tmp_path, capsys):
    cases = tmp_path / "cases.yaml"
    cases.write_text("cases:\n  - id: x\n    exchange_id: a-0\n    expect: no_call\n")
    argv = ["grade", str(cases), "-c", str(seeded_capture), "--run", "j"]
    assert main([*argv, "--judge-url", "http://127.0.0.1:9"]) == 2
    assert "--judge-url and --judge-model go together" in capsys.readouterr().err


def test_report_names_the_runs_it_knows(seeded_capture, capsys):
    assert main(["report", "-c", str(seeded_capture), "--run", "nope"]) == 2
    assert "unknown run(s) nope; runs: g1, g2" in capsys.readouterr().err


def test_label_learns_from_captured_turns_unless_told_otherwise(tmp_path, capsys):
    from tests.builders import chat_exchange
    from tests.seeded import CaptureRows, at
    from toolproxy.records import ToolCall

    rows = CaptureRows()
    call = ToolCall(index=0, call_id="c", name="lookup", arguments_raw="{}", arguments={})
    rows.turn(chat_exchange("prod-0", "s-p", at(0), finish_reason="tool_calls"), calls=[call])
    rows.turn(
        chat_exchange("cand-0", "s-c", at(1), proxy_id="replay:r1", finish_reason="tool_calls"),
        calls=[call],
    )
    capture = rows.write(tmp_path / "cap")
    out = tmp_path / "cases.yaml"
    assert main(["label", "-c", str(capture), "-o", str(out)]) == 0
    assert [c["exchange_id"] for c in yaml.safe_load(out.read_text())] == ["prod-0"]
    assert main(["label", "-c", str(capture), "-o", str(out), "--origin", "any"]) == 0
    assert [c["exchange_id"] for c in yaml.safe_load(out.read_text())] == ["prod-0", "cand-0"]
    capsys.readouterr()
    assert main(["sessions", "-c", str(capture), "--json"]) == 0  # production's by default
    assert '"s-p"' in (out := capsys.readouterr().out) and '"s-c"' not in out
    assert main(["sessions", "-c", str(capture), "--origin", "replayed", "--json"]) == 0
    assert '"s-c"' in (out := capsys.readouterr().out) and '"s-p"' not in out


def test_grading_with_an_alias_judge_warns_and_grades(seeded_capture, tmp_path, capsys):
    import shutil

    capture = tmp_path / "cap"
    shutil.copytree(seeded_capture, capture)
    cases = tmp_path / "cases.yaml"
    cases.write_text("cases:\n  - id: x\n    exchange_id: a-0\n    expect: no_call\n")
    argv = ["grade", str(cases), "-c", str(capture), "--judge-url", "http://127.0.0.1:9/v1"]
    assert main([*argv, "--run", "j1", "--judge-model", "gpt-4o"]) == 0
    assert "warning: judge model 'gpt-4o' looks like an alias" in capsys.readouterr().err
    assert main([*argv, "--run", "j2", "--judge-model", "gpt-4o-2024-08-06"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_label_draws_a_stratified_sample_reproducibly(seeded_capture, tmp_path, capsys):
    def drawn(seed: int) -> list[str]:
        out = tmp_path / f"s{seed}.yaml"
        argv = ["label", "-c", str(seeded_capture), "-o", str(out), "--sample", "2"]
        assert main([*argv, "--stratify", "session", "--seed", str(seed)]) == 0
        text = out.read_text()
        assert f"a sample of 2 turns, stratified by session, seed {seed}" in text
        return [c["exchange_id"] for c in yaml.safe_load(text)]

    first = drawn(3)
    assert first == drawn(3) and len(first) == 2
    assert {x[0] for x in first} == {"a", "b"}  # one turn of each session
    assert main(["label", "-c", str(seeded_capture), "--stratify", "tool"]) == 2
    assert "--stratify goes with --sample N" in capsys.readouterr().err


def test_label_s_sampling_options_alone_or_with_import_are_refused(
    seeded_capture, tmp_path, capsys
):
    # --seed without --sample drew nothing and said nothing; with --import, --sample was
    # ignored and every imported case written
    imported = tmp_path / "in.jsonl"
    imported.write_text('{"id": "x", "exchange_id": "a-0", "expect": "no_call"}\n')
    base = ["label", "-c", str(seeded_capture), "-o", str(tmp_path / "o.yaml")]
    for extra, says in [
        (["--seed", "3"], "--seed goes with --sample N"),
        (["--import", str(imported), "--sample", "1"], "--sample draws from the capture"),
        (["--import", str(imported), "--seed", "1"], "--seed goes with --sample N"),
    ]:
        assert main([*base, *extra]) == 2, extra
        assert says in capsys.readouterr().err, extra
    assert not (tmp_path / "o.yaml").exists()


def test_a_sample_larger_than_the_matches_takes_them_all_and_says_so(
    seeded_capture, tmp_path, capsys
):
    every, drawn = tmp_path / "all.yaml", tmp_path / "drawn.yaml"
    assert main(["label", "-c", str(seeded_capture), "-o", str(every)]) == 0
    matching = len(yaml.safe_load(every.read_text()))
    capsys.readouterr()
    argv = ["label", "-c", str(seeded_capture), "-o", str(drawn), "--sample", "500"]
    assert main(argv) == 0
    assert len(yaml.safe_load(drawn.read_text())) == matching
    said = f"all {matching} matching turns (fewer than --sample 500)"
    assert said in capsys.readouterr().err
    assert said in drawn.read_text() and "a sample of 500" not in drawn.read_text()


def test_grading_files_that_hold_no_cases_is_an_error_not_an_empty_run(
    seeded_capture, tmp_path, capsys
):
    # an empty (or truncated, or mistyped) expectations file used to print "run e: 0 cases
    # graded" and exit 0, a CI gate passing on nothing, while `report --run e` then said
    # "unknown run(s) e"
    empty, listed = tmp_path / "empty.yaml", tmp_path / "none.jsonl"
    empty.write_text("")
    listed.write_text("\n\n")
    for jobs in ("1", "2"):
        argv = ["grade", str(empty), str(listed), "-c", str(seeded_capture), "-j", jobs]
        assert main([*argv, "--run", "e"]) == 2
        err = capsys.readouterr().err
        assert f"no cases in {empty}, {listed}: nothing graded" in err, err
    assert main(["report", "-c", str(seeded_capture), "--run", "e"]) == 2  # nothing stored
