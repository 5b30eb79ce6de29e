"""`toolproxy label` on real captures (DuckDB in a temp dir, rows written as the recorder
writes them): recorded calls become cases that load back unchanged; filters, --append,
--no-calls, --import."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests import paths
from tests.builders import HOSTED, chat_exchange
from tests.seeded import CaptureRows
from toolproxy.cli.main import main
from toolproxy.grade.expectations import ExpectationError, load_cases
from toolproxy.grade.labeling import (
    LabelFilters,
    append_cases,
    case_id,
    cases_from_capture,
)
from toolproxy.grade.model import Case, ExpectedCall, Matcher
from toolproxy.records import ToolCall, ToolOffered
from toolproxy.store.segments import SegmentWriter

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
FIXTURES = paths.FIXTURES / "expectations"
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}}


def turn(
    n: int,
    calls: list[tuple[str | None, str]],
    *,
    session: str = "s1",
    model: str = "gpt-a",
    offered: tuple[str, ...] = ("get_weather", "get_time"),
    status: int = 200,
    wire_format: str = "openai_chat",
) -> dict[str, list[dict[str, Any]]]:
    """Rows of one exchange as the recorder writes them: calls are (name, raw arguments)."""
    exchange_id = f"{n:08x}-aaaa-4bbb-8ccc-{n:012x}"
    ex = chat_exchange(
        exchange_id,
        session,
        T0 + timedelta(minutes=n),
        **(HOSTED | {"status_code": status}),
        wire_format=wire_format,
        error_kind="http_5xx" if status >= 500 else None,
        model_requested=model,
        messages=[{"role": "user", "content": f"question {n}"}],
        assistant_text=None if calls else "an answer in text",
    )
    made = []
    for i, (name, raw) in enumerate(calls):
        try:
            parsed, error = json.loads(raw), None
        except ValueError as e:
            parsed, error = None, str(e)
        call = ToolCall(
            index=i,
            call_id=f"c{n}-{i}",
            name=name,
            arguments_raw=raw,
            arguments=parsed,
            parse_error=error,
        )
        made.append(call)
    rows = CaptureRows()
    rows.turn(
        ex,
        calls=made,
        offered=[
            ToolOffered(position=i, name=name, parameters=WEATHER, schema_hash="h")
            for i, name in enumerate(offered)
        ],
    )
    return rows.rows


def record(capture: Path, *turns: dict[str, list[dict[str, Any]]]) -> Path:
    merged = CaptureRows()
    for rows in turns:
        for table, items in rows.items():
            merged.add(table, items)
    return merged.write(capture, "p1")


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    return record(
        tmp_path / "cap",
        turn(1, [("get_weather", '{"city": "Paris", "days": [1, 2], "opts": {"unit": "c"}}')]),
        turn(2, [("get_weather", '{"city": "Oslo"}'), ("get_time", '{"tz": "Europe/Oslo"}')]),
        turn(3, [], session="s2"),  # text answer
        turn(4, [("get_time", '{"tz": "UTC"')], session="s2", model="gpt-b"),  # cut short
        turn(
            5,
            [("get_weather", '{"city": "Rome", "q": {"match": "x"}, "o": {"optional": true}}')],
            session="s2",
            model="gpt-b",
        ),
        turn(6, [], status=500, offered=("get_weather",)),  # upstream error: never a case
        turn(7, [], offered=()),  # text with no tools offered: nothing to expect
        turn(8, [("search", "{}")], wire_format="unknown"),  # not a model endpoint
    )


def label(*argv: str | Path) -> int:
    return main(["label", *map(str, argv)])


def unstamped(cases: list[Case]) -> list[Case]:
    """The cases without who labeled them and when (the same turn labeled twice differs
    only there)."""
    return [
        c.model_copy(
            update={"provenance": c.provenance.model_copy(update={"by": None, "at": None})}
        )
        if c.provenance
        else c
        for c in cases
    ]


def test_each_turn_with_calls_becomes_a_case_accepting_them(capture):
    cases = cases_from_capture(capture, LabelFilters())
    assert [c.id for c in cases] == [
        "get_weather-00000001",
        "get_weather+get_time-00000002",
        "get_time-00000004",
        "get_weather-00000005",
    ]
    first = cases[0]
    assert first.exchange_id == "00000001-aaaa-4bbb-8ccc-000000000001"
    assert first.expect == "call" and first.order == "ordered"
    assert first.calls == [
        ExpectedCall(
            tool="get_weather",
            args={
                "city": Matcher(value="Paris"),
                "days": Matcher(value=[1, 2]),
                "opts": Matcher(value={"unit": "c"}),
            },
        )
    ]
    assert first.notes == "labeled from session s1, model gpt-a, 2024-05-01T12:01:00+00:00"
    parallel = cases[1]
    assert parallel.order == "unordered"
    assert [c.tool for c in parallel.calls] == ["get_weather", "get_time"]
    assert parallel.calls[1].args == {"tz": Matcher(value="Europe/Oslo")}


def test_unparseable_arguments_keep_the_call_without_args_and_say_so(capture):
    (cut,) = [
        c for c in cases_from_capture(capture, LabelFilters()) if c.id.startswith("get_time-")
    ]
    assert cut.calls == [ExpectedCall(tool="get_time")]
    assert "call 0 (get_time): arguments did not parse" in (cut.notes or "")
    assert '\'{"tz": "UTC"\'' in (cut.notes or "")


def test_argument_objects_that_look_like_matchers_stay_exact(capture, tmp_path):
    (rome,) = [c for c in cases_from_capture(capture, LabelFilters()) if c.id.endswith("05")]
    assert rome.calls[0].args["q"] == Matcher(value={"match": "x"})
    out = tmp_path / "c.yaml"
    label("--capture", capture, "--session", "s2", "--out", out)
    assert "        q:\n          match: exact\n          value:\n            match: x\n" in (
        out.read_text()
    )
    unstamped = {"provenance": None}  # who and when differ between the two labelings
    assert load_cases([out])[1].model_copy(update=unstamped) == rome.model_copy(update=unstamped)


def test_every_labeled_case_says_who_when_how_and_from_which_turn(capture, tmp_path, monkeypatch):
    from datetime import datetime

    out = tmp_path / "c.yaml"
    label("--capture", capture, "--session", "s2", "--out", out, "--by", "alice")
    cases = load_cases([out])
    for case in cases:
        p = case.provenance
        assert p is not None and (p.by, p.via, p.exchange_id) == (
            "alice",
            "label",
            case.exchange_id,
        )
        assert p.session_id == "s2" and p.model and datetime.fromisoformat(p.at or "").tzinfo
    assert "  provenance:\n    by: alice\n" in out.read_text()
    # the reviewer from the environment; a sample says it was one
    monkeypatch.setenv("TOOLPROXY_REVIEWER", "bob")
    label("--capture", capture, "--out", out, "--sample", "2", "--seed", "1")
    assert {(c.provenance.by, c.provenance.via) for c in load_cases([out])} == {
        ("bob", "label --sample")
    }
    # an import stamps the cases that have no provenance and keeps those that have one
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(
        '{"id": "a", "exchange_id": "x1", "expect": "no_call"}\n'
        '{"id": "b", "exchange_id": "x2", "expect": "no_call", '
        '"provenance": {"by": "carol", "via": "vendor"}}\n'
    )
    assert label("--import", mixed, "--out", out) == 0
    got = {c.id: (c.provenance.by, c.provenance.via) for c in load_cases([out])}
    assert got == {"a": ("bob", "label --import"), "b": ("carol", "vendor")}


def test_one_labeling_stamps_all_its_cases_with_one_reading_of_the_clock(
    capture, tmp_path, monkeypatch
):
    # the time a command labeled; asked once per case, 91,000 imported cases read the
    # clock 91,000 times (2.2 µs each) and a run crossing a second got two times
    import toolproxy.grade.labeling as labeling

    ticks = iter(f"2026-11-28T03:00:{s:02d}+00:00" for s in range(60))
    monkeypatch.setattr(labeling, "now_iso", lambda: next(ticks))
    out = tmp_path / "c.jsonl"
    assert label("--capture", capture, "--out", out) == 0
    labeled = load_cases([out])
    assert len(labeled) > 1
    assert {c.provenance.at for c in labeled} == {"2026-11-28T03:00:00+00:00"}
    assert label("--import", FIXTURES / "good.jsonl", "--out", out) == 0
    imported = load_cases([out])
    assert len(imported) > 1
    assert {c.provenance.at for c in imported} == {"2026-11-28T03:00:01+00:00"}


def test_a_call_without_a_name_is_kept_and_noted(tmp_path):
    cap = record(tmp_path / "cap", turn(1, [(None, '{"a": 1}')]))
    (case,) = cases_from_capture(cap, LabelFilters())
    assert case.calls == [ExpectedCall(tool="(unnamed)", args={"a": Matcher(value=1)})]
    assert "call 0: the model gave no tool name" in (case.notes or "")


def test_no_calls_adds_text_turns_that_were_offered_tools(capture):
    cases = cases_from_capture(capture, LabelFilters(no_calls=True))
    no_call = [c for c in cases if c.expect == "no_call"]
    assert [c.id for c in no_call] == ["no_call-00000003"]
    assert no_call[0].calls == [] and no_call[0].exchange_id.startswith("00000003")


@pytest.mark.parametrize(
    ("filters", "ids"),
    [
        (LabelFilters(sessions=["s2"]), ["get_time-00000004", "get_weather-00000005"]),
        (LabelFilters(models=["gpt-b"]), ["get_time-00000004", "get_weather-00000005"]),
        (LabelFilters(tools=["get_time"]), ["get_weather+get_time-00000002", "get_time-00000004"]),
        (
            LabelFilters(since=T0 + timedelta(minutes=2), until=T0 + timedelta(minutes=5)),
            ["get_weather+get_time-00000002", "get_time-00000004"],
        ),
        (
            LabelFilters(sessions=["s2"], tools=["get_weather"], no_calls=True),
            ["no_call-00000003", "get_weather-00000005"],
        ),
        (LabelFilters(sessions=["nope"]), []),
    ],
)
def test_filters(capture, filters, ids):
    assert [c.id for c in cases_from_capture(capture, filters)] == ids


def test_ids_stay_unique_when_exchange_ids_share_a_prefix(tmp_path):
    cap = record(tmp_path / "cap", turn(1, [("t", "{}")]), turn(2, [("t", "{}")]))
    rows = [
        {**row, "exchange_id": row["exchange_id"].replace("00000002-", "00000001-")}
        for row in turn(2, [("t", "{}")])["exchanges"]
    ]
    SegmentWriter(cap, "p2", sync=False).write({"exchanges": rows})
    calls = [
        {**row, "exchange_id": rows[0]["exchange_id"]}
        for row in turn(2, [("t", "{}")])["tool_calls"]
    ]
    SegmentWriter(cap, "p3", sync=False).write({"tool_calls": calls})
    ids = [c.id for c in cases_from_capture(cap, LabelFilters())]
    assert len(ids) == len(set(ids)) == 3
    assert "t-00000001-aaaa-4bbb-8ccc-000000000002" in ids


@pytest.mark.parametrize("suffix", [".yaml", ".jsonl"])
def test_written_files_load_back_unchanged(capture, tmp_path, suffix, capsys):
    out = tmp_path / "exp" / f"cases{suffix}"
    assert label("--capture", capture, "--no-calls", "--out", out) == 0
    assert unstamped(load_cases([out])) == unstamped(
        cases_from_capture(capture, LabelFilters(no_calls=True))
    )
    printed = capsys.readouterr().out
    assert f"wrote 5 cases to {out}" in printed
    assert f"toolproxy grade {out} --run NAME" in printed


def test_yaml_output_is_readable(capture, tmp_path):
    out = tmp_path / "cases.yaml"
    label("--capture", capture, "--session", "s1", "--out", out)
    text = out.read_text()
    assert text.startswith("# toolproxy label: labeled from capture")
    assert "- id: get_weather-00000001\n  exchange_id: 00000001-aaaa" in text
    assert "      args:\n        city: Paris\n        days:\n          - 1\n" in text
    assert "{" not in text.split("\n- id: get_weather+get_time")[0].split("args:")[1]
    assert "order: unordered" in text


def test_append_skips_ids_already_there_and_keeps_the_file(capture, tmp_path, capsys):
    out = tmp_path / "cases.yaml"
    label("--capture", capture, "--session", "s1", "--out", out)
    edited = out.read_text().replace("city: Paris", "city: {match: text, value: paris}  # edited")
    out.write_text(edited)
    capsys.readouterr()
    assert label("--capture", capture, "--append", "--out", out) == 0
    printed = capsys.readouterr().out
    assert "wrote 2 cases" in printed and "(2 skipped: id already in the file)" in printed
    text = out.read_text()
    assert text.startswith(edited) and "# edited" in text
    cases = load_cases([out])
    assert [c.id for c in cases] == [
        "get_weather-00000001",
        "get_weather+get_time-00000002",
        "get_time-00000004",
        "get_weather-00000005",
    ]
    assert cases[0].calls[0].args["city"] == Matcher(kind="text", value="paris")
    assert label("--capture", capture, "--append", "--out", out) == 0
    assert "wrote 0 cases" in capsys.readouterr().out
    assert load_cases([out]) == cases


def test_append_printed_skip_count(capture, tmp_path, capsys):
    out = tmp_path / "cases.jsonl"
    label("--capture", capture, "--session", "s1", "--out", out)
    capsys.readouterr()
    label("--capture", capture, "--append", "--out", out)
    assert "wrote 2 cases to" in (printed := capsys.readouterr().out)
    assert "(2 skipped: id already in the file)" in printed
    assert len(out.read_text().splitlines()) == 4


@pytest.mark.parametrize(
    "existing",
    [
        "cases:\n  - id: mine\n    exchange_id: x\n    expect: no_call\n",
        "cases:\n- id: mine\n  exchange_id: x\n  expect: no_call\n",
        "- id: mine\n  exchange_id: x\n  expect: no_call",  # no final newline
        "[{id: mine, exchange_id: x, expect: no_call}]\n",  # flow style: rewritten
        "# nothing yet\n",
    ],
)
def test_append_to_every_yaml_shape(tmp_path, existing):
    out = tmp_path / "cases.yaml"
    out.write_text(existing)
    before = load_cases([out])
    new = [
        Case(
            id="new",
            exchange_id="y",
            calls=[ExpectedCall(tool="t", args={"a": Matcher(value=1)})],
            notes="two\nlines",
        ),
    ]
    append_cases(new, out)
    assert load_cases([out]) == before + new


def test_nothing_matched_writes_nothing_and_says_so(capture, tmp_path, capsys):
    out = tmp_path / "cases.yaml"
    assert label("--capture", capture, "--model", "nope", "--out", out) == 1
    assert not out.exists()
    err = capsys.readouterr().err
    assert err == "toolproxy label: no recorded model turn matched the filters: nothing written\n"
    assert label("--capture", capture, "--session", "nope", "--out", out) == 2  # no such id
    assert "no session id is or starts with 'nope'" in capsys.readouterr().err


def test_import_validates_and_writes(tmp_path, capsys):
    out = tmp_path / "cases.yaml"
    assert label("--import", FIXTURES / "good.jsonl", "--out", out) == 0
    got = load_cases([out])
    assert [c.model_copy(update={"provenance": None}) for c in got] == load_cases(
        [FIXTURES / "good.jsonl"]
    )
    assert {c.provenance.via for c in got if c.provenance} == {"label --import"}
    assert "wrote 3 cases" in capsys.readouterr().out


def test_labeling_runs_with_the_collector_paused_and_gives_it_back(tmp_path, monkeypatch):
    # 90,818 cases: 8.4 s with the cyclic collector walking them, 7.0 s without
    import gc

    import toolproxy.grade.labeling as labeling

    seen = []
    write = labeling.write_cases

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return write(*args, **kwargs)

    monkeypatch.setattr(labeling, "write_cases", watched)
    assert label("--import", FIXTURES / "good.jsonl", "--out", tmp_path / "c.jsonl") == 0
    assert seen == [False]
    assert gc.isenabled()


def test_import_reports_every_bad_line(tmp_path, capsys):
    dataset = tmp_path / "data.jsonl"
    dataset.write_text(
        '{"id": "ok", "exchange_id": "x", "calls": [{"tool": "t"}]}\n'
        '{"id": "b", "exchange_id": "y", "calls": [{"tool": "t", "args": '
        '{"n": {"match": "range", "min": 3, "max": 1}}}]}\n'
        "\n"
        '{"id": "c", "exchange_id": "z", "calls": [{"tol": "t"}]}\n'
        "not json\n"
    )
    out = tmp_path / "cases.yaml"
    assert label("--import", dataset, "--out", out) == 2
    err = capsys.readouterr().err
    assert f"{dataset}:2: cases[1].calls[0].args.n.min: range min 3 is greater than max 1" in err
    assert f"{dataset}:4: cases[2].calls[0]: missing required field 'tool'" in err
    assert f"{dataset}:4: cases[2].calls[0].tol: unknown field 'tol' (did you mean 'tool'?)" in err
    assert f"{dataset}:5: not valid JSON" in err
    assert "4 problems" in err
    assert not out.exists()
    with pytest.raises(ExpectationError):
        load_cases([dataset])


def test_bad_arguments_are_user_errors(capture, tmp_path, capsys):
    assert label("--capture", capture, "--out", tmp_path / "cases.txt") == 2
    assert "end in .yaml, .yml or .jsonl" in capsys.readouterr().err
    assert label("--capture", capture, "--since", "yesterday", "--out", tmp_path / "c.yaml") == 2
    assert "--since: not an ISO-8601 time: 'yesterday'" in capsys.readouterr().err
    assert label("--capture", tmp_path / "nowhere", "--out", tmp_path / "c.yaml") == 2
    assert "not a toolproxy capture" in capsys.readouterr().err


def test_case_id_joins_distinct_tools():
    assert case_id(["a", "b", "a"], "0123abcd-ffff") == "a+b-0123abcd"
    assert case_id([], "x-y") == "no_call-xy"


def test_one_turn_becomes_the_case_label_would_write(seeded_capture):
    from toolproxy import store
    from toolproxy.grade.labeling import case_for_turn
    from toolproxy.store.queries import exchanges

    with store.reading(seeded_capture) as r:
        (a0,) = exchanges.details(r, ["a-0"])
    case = case_for_turn(a0.exchange, a0.calls)
    assert (case.id, case.exchange_id, case.expect) == ("get_weather-a0", "a-0", "call")
    assert [(c.tool, c.args["city"].value) for c in case.calls] == [("get_weather", "Paris")]
    assert case.notes.startswith("labeled from session s-a, model gpt-a-2026")
    quiet = case_for_turn(a0.exchange, a0.calls, no_call=True)
    assert (quiet.id, quiet.expect, quiet.calls) == ("no_call-a0", "no_call", [])
