"""`toolproxy import`: traffic files into a capture, chat datasets into cases, bad entries
named on stderr (exit 1) with the rest imported."""

from __future__ import annotations

import json

from tests.capture.test_importer import har_entry, write_har
from tests.grade.test_chatset import RECORD
from toolproxy import store
from toolproxy.cli.main import main
from toolproxy.grade.expectations import load_cases


def test_dataset_becomes_cases(tmp_path, capsys):
    data = tmp_path / "set.jsonl"
    data.write_text(json.dumps(RECORD) + "\n" + json.dumps(RECORD) + "\n")
    out = tmp_path / "exp" / "cases.yaml"
    assert main(["import", str(data), "--cases", str(out), "--by", "ana"]) == 0
    assert capsys.readouterr().out == f"wrote 4 cases to {out}\n"
    cases = load_cases([out])
    assert [c.expect for c in cases] == ["call", "no_call", "call", "no_call"]
    assert {c.provenance.by for c in cases} == {"ana"}
    assert "replay them, then grade" in out.read_text()
    # again with --append: the same ids are there already
    assert main(["import", str(data), "--cases", str(out), "--append"]) == 0
    assert "wrote 0 cases" in capsys.readouterr().out and len(load_cases([out])) == 4


def test_traffic_and_dataset_together_bad_parts_named(tmp_path, capsys):
    broken = har_entry()
    del broken["request"]["method"]
    har = write_har(tmp_path / "t.har", [har_entry(), broken])
    data = tmp_path / "set.jsonl"
    data.write_text(json.dumps(RECORD) + "\n{oops\n")
    capture, cases = tmp_path / "cap", tmp_path / "cases.jsonl"
    code = main(["import", str(har), str(data), "-c", str(capture), "--cases", str(cases)])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == (f"imported 1 exchange from 1 file into {capture}\nwrote 2 cases to {cases}\n")
    assert err.splitlines() == [
        f"toolproxy import: {har}: entry 2: not a complete HAR entry (missing 'method')",
        f"toolproxy import: {data}:2: Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)",
    ]
    assert store.query(capture, "SELECT count(*) FROM tool_calls")[1] == [(1,)]


def test_dataset_with_no_case_writes_nothing(tmp_path, capsys):
    data = tmp_path / "set.jsonl"
    data.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    out = tmp_path / "cases.yaml"
    assert main(["import", str(data), "--cases", str(out)]) == 1
    err = capsys.readouterr().err
    assert "no case in the datasets: nothing written" in err and not out.exists()
