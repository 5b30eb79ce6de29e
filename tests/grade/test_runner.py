"""`toolproxy grade`: real capture (DuckDB in a temp dir), real checker, and a real HTTP
server playing the judge's scripted verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.grade.test_observe import TIME, WEATHER, seed_exchange
from tests.store.helpers import summed_runs
from toolproxy import store
from toolproxy.cli.main import main
from toolproxy.grade.expectations import load_cases
from toolproxy.grade.grades import CaseGrade
from toolproxy.grade.rows import GradeRow
from toolproxy.grade.runner import (
    Grading,
    grade_cases,
    grade_run,
    read_inputs,
    schema_count,
    summarize,
)
from toolproxy.records import McpTool, SchemaVerdict, ToolCall, schema_hash
from toolproxy.schema.compiling import clear_caches
from toolproxy.schema.validator import CHECKER
from toolproxy.scripted import Reply, Script
from toolproxy.store.segments import SegmentWriter, encode_plain_row

SECRET = "sk-runner-secret-77e0c4"
KEY_ENV = "TEST_GRADE_JUDGE_KEY"


def call(name: str, raw: str, index: int = 0) -> ToolCall:
    try:
        parsed, error = json.loads(raw), None
    except ValueError as exc:
        parsed, error = None, str(exc)
    return ToolCall(
        index=index,
        call_id=f"call-{index}",
        name=name,
        arguments_raw=raw,
        arguments=parsed,
        parse_error=error,
    )


@pytest.fixture
def capture(tmp_path):
    cap = store.init_capture(tmp_path / "capture")
    seed_exchange(cap, "ex-good", calls=[call("get_weather", '{"city": "Paris"}')])
    seed_exchange(
        cap,
        "ex-wrong",
        calls=[call("get_time", '{"tz": "UTC"}')],
        offered=[("get_weather", WEATHER), ("get_time", TIME)],
    )
    seed_exchange(cap, "ex-text", assistant_text="It is sunny in Paris.")
    seed_exchange(cap, "ex-bad-json", calls=[call("get_weather", '{"city": Paris}')])
    seed_exchange(cap, "ex-500", status_code=500, error_kind="http_5xx")
    seed_exchange(cap, "ex-descr", calls=[call("get_weather", '{"city": "the French capital"}')])
    return cap


def cases_file(tmp_path: Path, cases: list[dict]) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump(cases, sort_keys=False))
    return path


WEATHER_PARIS = [{"tool": "get_weather", "args": {"city": "Paris"}}]
BASIC = [
    {"id": "good", "exchange_id": "ex-good", "calls": WEATHER_PARIS},
    {"id": "wrong", "exchange_id": "ex-wrong", "calls": WEATHER_PARIS},
    {"id": "text", "exchange_id": "ex-text", "calls": WEATHER_PARIS},
    {"id": "quiet", "exchange_id": "ex-text", "expect": "no_call"},
    {"id": "bad-json", "exchange_id": "ex-bad-json", "calls": WEATHER_PARIS},
    {"id": "upstream-500", "exchange_id": "ex-500", "calls": WEATHER_PARIS},
    {"id": "missing", "exchange_id": "ex-nowhere", "calls": WEATHER_PARIS},
    {
        "id": "own-messages",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}],
        "wire_format": "openai_chat",
        "calls": WEATHER_PARIS,
    },
]
JUDGED = [
    {
        "id": "judged",
        "exchange_id": "ex-descr",
        "calls": [
            {"tool": "get_weather", "args": {"city": {"match": "judge", "criterion": "Paris"}}}
        ],
    }
]


def grades(capture, run):
    _, rows = store.query(
        capture,
        "SELECT case_id, passed, label, not_graded, reason, calls FROM grades WHERE run = ? "
        "ORDER BY case_id",
        [run],
    )
    return {
        r[0]: {
            "passed": r[1],
            "label": r[2],
            "not_graded": r[3],
            "reason": r[4],
            "calls": json.loads(r[5]),
        }
        for r in rows
    }


def grade(capture, cases, run, *extra):
    return main(["grade", str(cases), "--capture", str(capture), "--run", run, *extra])


def test_grade_writes_one_row_per_case_as_the_named_run(capture, tmp_path, capsys):
    assert grade(capture, cases_file(tmp_path, BASIC), "r1") == 0
    got = grades(capture, "r1")
    assert {k: (v["passed"], v["label"], v["not_graded"]) for k, v in got.items()} == {
        "good": (True, None, False),
        "wrong": (False, "wrong_tool", False),
        "text": (False, "no_call", False),
        "quiet": (True, None, False),
        "bad-json": (False, "malformed_json", False),
        "upstream-500": (False, None, True),
        "missing": (False, None, True),
        "own-messages": (False, None, True),
    }
    assert got["upstream-500"]["reason"].startswith("upstream_failed: exchange ex-500")
    assert got["missing"]["reason"].startswith("no_exchange:")
    assert got["own-messages"]["reason"].startswith("needs_replay:")
    assert got["good"]["calls"][0]["actual_tool"] == "get_weather"
    _, meta = store.query(
        capture,
        "SELECT DISTINCT source, model, session_id, expected_tools FROM grades "
        "WHERE case_id = 'good'",
    )
    assert meta == [("capture", "gpt-req", "s-ex-good", '["get_weather"]')]
    out = capsys.readouterr().out
    assert "run r1: 8 cases" in out
    table = out.split("not graded:")[0].splitlines()[4:]
    assert [line.split() for line in table if line] == [
        ["passed", "2"],
        ["failed", "(all)", "3"],
        ["failed", "no_call", "1"],  # labels in precedence order
        ["failed", "wrong_tool", "1"],
        ["failed", "malformed_json", "1"],
        ["not", "graded", "3"],
    ]
    assert "needs_replay" in out
    # with the summary the runs are listed by (`store.gradewrites`)
    (count, passed, first, last) = summed_runs(capture)["r1"]
    _, (times,) = store.query(capture, "SELECT list(DISTINCT graded_at) FROM grades")
    assert (count, passed) == (8, 2) and [first] == [last] == times[0]


def test_an_existing_run_is_never_overwritten(capture, tmp_path, capsys):
    cases = cases_file(tmp_path, BASIC[:2])
    assert grade(capture, cases, "r1") == 0
    capsys.readouterr()
    assert grade(capture, cases, "r1") == 2
    err = capsys.readouterr().err
    assert "run 'r1' already has 2 grades" in err and "new --run name" in err
    assert len(grades(capture, "r1")) == 2
    assert grade(capture, cases, "r2") == 0
    store.compact(capture)  # the runs' rows move from segment files into the catalog
    assert grade(capture, cases, "r3") == 0
    capsys.readouterr()
    for taken, count in (("r1", 2), ("r3", 2)):  # one compacted, one not
        assert grade(capture, cases, taken) == 2
        assert f"run {taken!r} already has {count} grades" in capsys.readouterr().err
    assert grade(capture, cases_file(tmp_path, BASIC[:1]), "one") == 0
    assert "run one: 1 case graded into" in capsys.readouterr().out
    assert grade(capture, cases, "one") == 2
    assert "run 'one' already has 1 grade in" in capsys.readouterr().err


def test_json_output(capture, tmp_path, capsys):
    assert grade(capture, cases_file(tmp_path, BASIC[:3]), "j", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["run"] == "j"
    assert out["summary"] == {
        "cases": 3,
        "passed": 1,
        "failed": 2,
        "not_graded": 0,
        "by_label": {"no_call": 1, "wrong_tool": 1},
        "matcher_hints": 0,
    }
    assert [GradeRow.model_validate(g).case_id for g in out["grades"]] == ["good", "wrong", "text"]


def test_no_judge_means_not_graded_never_passed(capture, tmp_path):
    assert grade(capture, cases_file(tmp_path, JUDGED), "nj") == 0
    row = grades(capture, "nj")["judged"]
    assert (row["passed"], row["not_graded"]) == (False, True)
    assert row["reason"].startswith("no_judge:")


def judge_options(upstream):
    return [
        "--judge-url",
        upstream.url + "/v1",
        "--judge-model",
        "judge-1",
        "--judge-key-env",
        KEY_ENV,
    ]


def test_the_judge_grades_and_regrading_uses_the_cache(
    capture, tmp_path, scripted_upstream, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, SECRET)
    scripted_upstream.set_script(
        Script.of(Reply(text='{"verdict": true, "reason": "Paris is the French capital"}'))
    )
    cases = cases_file(tmp_path, JUDGED)
    assert grade(capture, cases, "j1", *judge_options(scripted_upstream)) == 0
    row = grades(capture, "j1")["judged"]
    assert (row["passed"], row["label"], row["not_graded"]) == (True, None, False)
    (arg,) = row["calls"][0]["args"]
    assert arg["judged"] and arg["judge_reason"] == "Paris is the French capital"
    assert len(scripted_upstream.requests) == 1
    assert grade(capture, cases, "j2", *judge_options(scripted_upstream)) == 0
    assert grades(capture, "j2")["judged"]["passed"] is True
    assert len(scripted_upstream.requests) == 1  # the cached verdict, no second request
    store.compact(capture)
    files = [p for p in Path(capture).rglob("*") if p.is_file()]
    assert all(SECRET.encode() not in p.read_bytes() for p in files)


def test_a_false_verdict_fails_the_field(capture, tmp_path, scripted_upstream, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)  # a variable named with --judge-key-env must be set
    scripted_upstream.set_script(Script.of(Reply(text='{"verdict": false, "reason": "not Paris"}')))
    assert (
        grade(capture, cases_file(tmp_path, JUDGED), "jf", *judge_options(scripted_upstream)) == 0
    )
    row = grades(capture, "jf")["judged"]
    assert (row["passed"], row["label"], row["not_graded"]) == (False, "hallucinated_param", False)
    assert row["calls"][0]["args"][0]["bucket"] == "hallucinated"


@pytest.mark.parametrize(
    "reply",
    [Reply(status=500), Reply(raw_body="garbage", content_type="text/plain"), Reply(hang_s=30)],
    ids=["500", "garbage", "hang"],
)
def test_a_faulty_judge_leaves_the_case_not_graded(
    capture, tmp_path, scripted_upstream, reply, monkeypatch
):
    import toolproxy.grade.runner as runner

    monkeypatch.setenv(KEY_ENV, SECRET)

    real = runner.make_judge
    # a short timeout and no retries keep the hang case quick; the endpoint is still real
    monkeypatch.setattr(runner, "make_judge", lambda *a: real(*a, timeout_s=0.5, retries=0))
    scripted_upstream.set_script(Script.of(reply))
    assert (
        grade(
            capture,
            cases_file(tmp_path, JUDGED + BASIC[:1]),
            "bad",
            *judge_options(scripted_upstream),
        )
        == 0
    )
    got = grades(capture, "bad")
    row = got["judged"]
    assert (row["passed"], row["label"], row["not_graded"]) == (False, None, True)
    assert row["reason"].startswith("judge_failed: judge judge-1 at ")
    (arg,) = row["calls"][0]["args"]
    assert arg["bucket"] == "not_graded" and "judge-1" in arg["judge_reason"]
    assert got["good"]["passed"] is True  # other cases are graded as usual
    assert store.query(capture, "SELECT count(*) FROM judge_cache")[1] == [(0,)]


def test_judge_options_go_together(capture, tmp_path, capsys):
    assert grade(capture, cases_file(tmp_path, JUDGED), "x", "--judge-url", "http://h/v1") == 2
    assert "--judge-url and --judge-model go together" in capsys.readouterr().err


def test_the_real_mcp_schema_is_used_when_known(capture, tmp_path):
    strict = {
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 3}},
        "required": ["city"],
        "additionalProperties": False,
    }
    tool = McpTool(
        pull_id="pull-1",
        pulled_at="2025-03-01T12:00:00Z",
        server="weather",
        transport="stdio",
        name="get_weather",
        input_schema=strict,
        schema_hash=schema_hash(strict),
        definition_hash="d",
    )
    SegmentWriter(capture, "pull-1", sync=False).write(
        {"mcp_tools": [tool.model_dump(mode="json")]}
    )
    assert grade(capture, cases_file(tmp_path, BASIC[:1]), "mcp") == 0
    row = grades(capture, "mcp")["good"]
    assert row["label"] == "schema_violation" and not row["passed"]
    assert row["calls"][0]["schema_source"] == "mcp_server"


def test_summary_counts_each_case_once():
    rows = [
        GradeRow(run="r", graded_at="t", case_id="a", passed=True),
        GradeRow(run="r", graded_at="t", case_id="b", passed=False, label="no_call"),
        GradeRow(
            run="r", graded_at="t", case_id="c", passed=False, label="wrong_tool", not_graded=True
        ),
        GradeRow(run="r", graded_at="t", case_id="d", passed=False, not_graded=True),
    ]
    assert summarize(rows) == {
        "cases": 4,
        "passed": 1,
        "failed": 2,
        "not_graded": 1,
        "by_label": {"no_call": 1, "wrong_tool": 1},
        "matcher_hints": 0,
    }


def test_a_grade_claiming_both_passed_and_not_graded_is_not_passed():
    from toolproxy.grade.model import Case, Observation

    grading = Grading("r", "t", None)
    grading.grader = lambda case, obs: CaseGrade(case_id=case.id, passed=True, not_graded=True)
    row = grading.grade(Case(id="a", exchange_id="e"), Observation(exchange_id="e"))
    assert (row.passed, row.not_graded, row.reason.split(":")[0]) == (False, True, "no_judge")


def test_a_judge_error_escaping_the_grader_is_graded_without_the_judge():
    from toolproxy.grade.judge import JudgeError
    from toolproxy.grade.model import Case, ExpectedCall, Observation

    def broken(criterion, value):
        raise JudgeError("endpoint down")

    grading = Grading("r", "t", broken)
    # a grader that lets the judge's error through instead of catching it
    grading.grader = lambda case, obs: grading._watch(broken)("c", 1)
    case = Case(id="a", exchange_id="e", calls=[ExpectedCall(tool="get_weather")])
    row = grading.grade(case, Observation(exchange_id="e"))
    assert (row.passed, row.not_graded) == (False, True)
    assert row.reason == "judge_failed: endpoint down"
    assert row.label == "no_call"  # what the judge-free grade says


def test_rows_are_stored_as_their_json_dump(capture, tmp_path):
    cases = load_cases([cases_file(tmp_path, BASIC)])
    rows = grade_run(capture, cases, "dumped", None)
    assert [r.as_row() for r in rows] == [r.model_dump(mode="json") for r in rows]


def test_the_runs_lines_are_its_rows_encoded_in_order(capture, tmp_path):
    cases = load_cases([cases_file(tmp_path, BASIC)])
    with store.reading(capture) as r:
        inputs = read_inputs(r, sorted({c.exchange_id for c in cases if c.exchange_id}))
    rows, lines = grade_cases(Grading("lines", "2026-01-01T00:00:00+00:00", None), cases, inputs)
    assert len(rows) == len(cases) > 1
    assert lines == b"".join(encode_plain_row(r.as_row()) for r in rows)
    assert [json.loads(line)["case_id"] for line in lines.splitlines()] == [c.id for c in cases]
    assert schema_count(inputs) == 2  # the two offered schemas, each read once


# A schema outside the quick path is checked against its metaschema once per capture.
ONE_OF = {"type": "object", "properties": {"city": {"oneOf": [{"type": "string"}]}}}
BROKEN = {"type": "object", "properties": {"city": {"type": "strng"}}}


@pytest.fixture
def fresh_process():
    """No compiled schema or verdict from earlier tests, and none left to later ones."""
    clear_caches()
    yield
    clear_caches()


def checks(capture):
    sql = "SELECT schema_hash, valid, error FROM schema_checks ORDER BY valid"
    return store.query(capture, sql)[1]


def test_metaschema_verdicts_are_stored_and_not_repaid(tmp_path, fresh_process):
    cap = store.init_capture(tmp_path / "capture")
    paris = [call("get_weather", '{"city": "Paris"}')]
    seed_exchange(cap, "ex-one-of", calls=paris, offered=[("get_weather", ONE_OF)])
    seed_exchange(cap, "ex-broken", calls=paris, offered=[("get_weather", BROKEN)])
    cases = cases_file(
        tmp_path,
        [
            {"id": "one-of", "exchange_id": "ex-one-of", "calls": WEATHER_PARIS},
            {"id": "broken", "exchange_id": "ex-broken", "calls": WEATHER_PARIS},
        ],
    )
    assert grade(cap, cases, "first") == 0
    stored = checks(cap)
    assert stored[0][:2] == (schema_hash(BROKEN), False)
    assert stored[0][2].startswith("invalid schema: 'strng' is not valid under any of")
    assert stored[1] == (schema_hash(ONE_OF), True, None)
    first = grades(cap, "first")
    assert first["broken"]["calls"][0]["errors"] == [f"schema not checked: {stored[0][2]}"]

    clear_caches()
    assert grade(cap, cases, "again") == 0
    assert checks(cap) == stored  # nothing new to remember
    assert grades(cap, "again") == {k: v for k, v in first.items()}


def test_a_stored_verdict_is_what_grading_uses(tmp_path, fresh_process):
    cap = store.init_capture(tmp_path / "capture")
    seed_exchange(
        cap,
        "ex-one-of",
        calls=[call("get_weather", '{"city": 5}')],
        offered=[("get_weather", ONE_OF)],
    )
    planted = SchemaVerdict(
        schema_hash=schema_hash(ONE_OF),
        checker=CHECKER,
        valid=False,
        error="invalid schema: planted by the test",
        checked_at="2026-01-01T00:00:00+00:00",
    )
    SegmentWriter(cap, "planted").write({"schema_checks": [planted.model_dump(mode="json")]})
    cases = cases_file(tmp_path, [{"id": "c", "exchange_id": "ex-one-of", "calls": WEATHER_PARIS}])
    assert grade(cap, cases, "r") == 0
    got = grades(cap, "r")["c"]["calls"][0]
    assert got["errors"][0] == "schema not checked: invalid schema: planted by the test"


def test_a_regrade_takes_the_next_free_name():
    from toolproxy.grade.runner import next_run_name

    assert next_run_name("nightly", []) == "nightly-2"
    assert next_run_name("nightly", ["nightly-2", "nightly-3"]) == "nightly-4"
    assert next_run_name("nightly-2", ["nightly-2"]) == "nightly-3"
    assert next_run_name("gpt-4o", []) == "gpt-4o-2"
    assert next_run_name("-7", []) == "-7-2"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_failures_against_a_matcher_written_wrong_are_counted_and_warned(
    capture, tmp_path, capsys, jobs
):
    # {regex: ...} without `match` is a literal: the case failed as a hallucinated value,
    # and only its detail (in the report or the TUI) said why
    typo = [{"tool": "get_weather", "args": {"city": {"regex": "^Par"}}}]
    cases = [
        {"id": "typo", "exchange_id": "ex-good", "calls": typo},
        {"id": "good", "exchange_id": "ex-good", "calls": WEATHER_PARIS},
        {"id": "wrong", "exchange_id": "ex-wrong", "calls": WEATHER_PARIS},
    ]
    path = cases_file(tmp_path, cases)
    assert grade(capture, path, f"h{jobs}", "-j", jobs) == 0
    err = capsys.readouterr().err
    assert "warning: 1 failed case expects a mapping that looks like a matcher" in err
    assert grade(capture, path, f"hj{jobs}", "-j", jobs, "--json") == 0
    assert json.loads(capsys.readouterr().out)["summary"]["matcher_hints"] == 1
