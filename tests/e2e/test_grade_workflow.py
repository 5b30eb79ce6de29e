"""The README's grading workflow on a real capture: demo → label → edit → grade → report."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from toolproxy.cli.demo import run_demo
from toolproxy.cli.main import main


def test_label_grade_report_on_the_demo_capture(tmp_path, capsys):
    capture, cases = tmp_path / "cap", tmp_path / "cases.yaml"
    run_demo(capture, out=lambda line: None)
    assert main(["label", "-c", str(capture), "--out", str(cases), "--no-calls"]) == 0
    text = cases.read_text()
    assert "city: Paris" in text and "expect: no_call" in text
    # a reviewer decides Tokyo was the wrong city for the parallel case
    cases.write_text(text.replace("city: Tokyo", "city: Osaka"))
    capsys.readouterr()

    assert main(["grade", str(cases), "-c", str(capture), "--run", "demo", "--json"]) == 0
    graded = json.loads(capsys.readouterr().out)
    rows = graded["grades"] if isinstance(graded, dict) else graded
    labels = sorted(r["label"] for r in rows if not r["passed"])
    # the Osaka edit is a hallucination; the demo's cut-off arguments are a truncation
    assert labels == ["hallucinated_param", "truncation"]
    # a run name is never overwritten
    assert main(["grade", str(cases), "-c", str(capture), "--run", "demo"]) == 2
    capsys.readouterr()

    out, junit = tmp_path / "report", tmp_path / "gate.xml"
    code = main(
        [
            "report",
            "-c",
            str(capture),
            "--run",
            "demo",
            "--out",
            str(out),
            "--junit",
            str(junit),
            "--threshold",
            "selection_accuracy>=0.95",
            "--threshold",
            "pass_rate>=0.9",
        ]
    )
    assert code == 1  # pass rate 7/9 fails the second gate
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and [c.get("name") for c in suite.iter("testcase")] == [
        "selection_accuracy>=0.95",
        "pass_rate>=0.9",
    ]
    assert sum(1 for _ in suite.iter("failure")) == 1
    gallery = (out / "report.md").read_text()
    assert "### `hallucinated_param`" in gallery and "expected 'Osaka', got 'Tokyo'" in gallery
    assert (out / "report.csv").exists() and json.loads((out / "report.json").read_text())
