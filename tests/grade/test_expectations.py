"""Expectation files: good files load to the expected cases (every matcher kind), bad ones
give every error with its line and field path, and what is written loads back equal."""

from __future__ import annotations

import pytest

from tests import paths
from toolproxy.grade.expectations import (
    ExpectationError,
    case_to_dict,
    dump_cases,
    dump_matcher,
    load_cases,
    parse_matcher,
)
from toolproxy.grade.model import Case, ExpectedCall, Matcher

FIXTURES = paths.FIXTURES / "expectations"
BAD = FIXTURES / "bad"

EXPECTED = [
    Case(
        id="weather-paris",
        exchange_id="ex-1",
        calls=[
            ExpectedCall(
                tool="get_weather",
                allow_extra_args=False,
                args={
                    "city": Matcher(kind="exact", value="Paris"),
                    "country": Matcher(value="NO"),
                    "day": Matcher(value="2024-05-01"),
                    "filters": Matcher(value={"unit": "c", "days": [1, 2]}),
                    "literal": Matcher(value={"match": "this"}),
                    "unit": Matcher(kind="enum", values=["celsius", "fahrenheit"]),
                    "source": Matcher(kind="any_of", values=["api", "cache", None]),
                    "days": Matcher(kind="range", min=1, max=7),
                    "lat": Matcher(kind="tolerance", value=48.85, tolerance=0.01),
                    "code": Matcher(kind="regex", pattern="^[A-Z]{2}$"),
                    "when": Matcher(kind="datetime", value="2024-05-01T14:00:00+02:00"),
                    "tags": Matcher(kind="unordered", value=["rain", "wind"]),
                    "label": Matcher(kind="text", value="  Paris,  France "),
                    "summary": Matcher(
                        kind="judge", criterion="a short weather summary", optional=True
                    ),
                    "lang": Matcher(kind="any", optional=True),
                    "anything": Matcher(kind="any"),
                    "min_only": Matcher(kind="range", min=0),
                    "maybe": Matcher(value=3, optional=True),
                },
            )
        ],
        tags=["smoke", "weather"],
        notes="two lines\nof notes\n",
    ),
    Case(
        id="parallel",
        exchange_id="ex-2",
        order="unordered",
        calls=[
            ExpectedCall(tool="get_time", args={"tz": Matcher(value="UTC")}),
            ExpectedCall(tool="get_weather"),
        ],
    ),
    Case(
        id="chat-only",
        messages=[{"role": "user", "content": "hi"}],
        tools=[],
        wire_format="openai_chat",
        expect="no_call",
    ),
]


@pytest.mark.parametrize("name", ["good.yaml", "good.jsonl"])
def test_good_files_load_to_the_expected_cases(name):
    assert load_cases([FIXTURES / name]) == EXPECTED


def test_a_plain_list_and_a_cases_mapping_are_the_same(tmp_path):
    listed = tmp_path / "list.yml"
    listed.write_text((FIXTURES / "good.yaml").read_text().replace("\ncases:\n", "\n"))
    assert "cases:" not in listed.read_text()
    assert load_cases([listed]) == EXPECTED


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".jsonl"])
def test_dumped_cases_load_back_equal(tmp_path, suffix):
    path = tmp_path / f"out{suffix}"
    dump_cases(EXPECTED, path, header="a header\n\nwith a blank line")
    assert load_cases([path]) == EXPECTED


def test_dumped_yaml_is_block_style_with_shorthand(tmp_path):
    path = tmp_path / "out.yaml"
    dump_cases(EXPECTED, path, header="hello")
    text = path.read_text()
    assert text.startswith("# hello\n- id: weather-paris\n")
    assert "      args:\n        city: Paris\n        country: 'NO'\n" in text
    assert "        day: '2024-05-01'\n" in text  # quoted: other YAML readers see a date
    assert "        lang:\n          optional: true\n" in text
    assert "  notes: |\n    two lines\n    of notes\n" in text


def test_empty_dump_is_a_valid_empty_file(tmp_path):
    for name in ("e.yaml", "e.jsonl"):
        dump_cases([], tmp_path / name)
        assert load_cases([tmp_path / name]) == []


BAD_CASES = [
    ("syntax.yaml", 6, "", "not valid YAML: expected ',' or '}'"),
    ("syntax.yaml", 6, "", "(while parsing a flow mapping opened at line 5)"),
    ("syntax.jsonl", 2, "", "not valid JSON: Expecting value at column 43"),
    ("shape.yaml", 1, "", "expected a list of cases, or a mapping {cases: [...]}"),
    ("unknown_field.yaml", 6, "cases[1].expcet", "unknown field 'expcet' (did you mean"),
    ("missing_tool.jsonl", 3, "cases[1].calls[0]", "missing required field 'tool'"),
    ("regex.yaml", 7, "cases[0].calls[0].args.city.pattern", "regex does not compile"),
    ("range.yaml", 10, "cases[0].calls[1].args.nights.min", "min 5 is greater than max 1"),
    ("range_empty.jsonl", 1, "cases[0].calls[0].args.n", "range needs min, max or both"),
    ("unknown_kind.yaml", 6, "cases[0].calls[0].args.city.match", "unknown match kind"),
    ("kind_field.yaml", 8, "cases[0].calls[0].args.city.patern", "did you mean 'pattern'"),
    ("kind_field.yaml", 6, "cases[0].calls[0].args.city", "missing required field 'pattern'"),
    ("datetime.yaml", 6, "cases[0].calls[0].args.when.value", "not an ISO-8601 timestamp"),
    ("no_call_with_calls.yaml", 4, "cases[0].calls", "expect: no_call takes no calls"),
    ("call_without_calls.yaml", 1, "cases[0]", "expect: call needs at least one"),
    ("both_sources.yaml", 3, "cases[0].messages", "exchange_id or messages, not both"),
    ("no_source.jsonl", 2, "cases[1]", "needs exchange_id (a recorded exchange) or messages"),
    ("duplicate_id.yaml", 7, "cases[2].id", "duplicate id 'a' (first at "),
    ("duplicate_key.yaml", 4, "", "duplicate key 'exchange_id'"),
    ("types.yaml", 3, "cases[0].order", "'sideways' is not one of"),
    ("types.yaml", 6, "cases[0].calls[0].allow_extra_args", "is not of type 'boolean'"),
    ("types.yaml", 8, "cases[0].calls[0].args.lat.tolerance", "is not of type 'number'"),
    ("types.yaml", 9, "cases[0].calls[0].args.unit.values", "should be non-empty"),
    ("types.yaml", 10, "cases[0].calls[0].args.topic", "missing required field 'criterion'"),
    ("tools_without_messages.yaml", 3, "cases[0].tools", "only used with messages"),
]


@pytest.mark.parametrize(("name", "line", "path", "message"), BAD_CASES)
def test_bad_files_point_at_line_and_field(name, line, path, message):
    with pytest.raises(ExpectationError) as info:
        load_cases([BAD / name])
    found = [(i.line, i.path) for i in info.value.issues if message in i.message]
    assert found == [(line, path)], info.value.issues
    assert all(i.file == str(BAD / name) for i in info.value.issues)
    assert f"{BAD / name}:{line}: " in str(info.value)


def test_every_bad_fixture_is_checked():
    assert {row[0] for row in BAD_CASES} == {p.name for p in BAD.iterdir()}


def test_all_errors_of_all_files_at_once():
    with pytest.raises(ExpectationError) as info:
        load_cases([BAD / "types.yaml", BAD / "regex.yaml", BAD / "no_source.jsonl"])
    issues = info.value.issues
    assert len(issues) == 9  # 5 + 1 + 1, and id 'a' defined again in two later files
    assert sum("duplicate id 'a'" in i.message for i in issues) == 2
    assert [i.file for i in issues] == sorted(i.file for i in issues)
    assert str(info.value).startswith("9 problems in expectation files:\n  ")


def test_duplicate_ids_across_files(tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text('\n{"id": "parallel", "exchange_id": "e", "expect": "no_call"}\n')
    with pytest.raises(ExpectationError) as info:
        load_cases([FIXTURES / "good.yaml", other])
    (issue,) = info.value.issues
    assert (issue.file, issue.line, issue.path) == (str(other), 2, "cases[0].id")
    assert f"first at {FIXTURES / 'good.yaml'}:31" in issue.message


def test_unreadable_paths_are_issues(tmp_path):
    with pytest.raises(ExpectationError) as info:
        load_cases([tmp_path / "missing.yaml", FIXTURES / "good.yaml", tmp_path / "x.txt"])
    assert [i.file for i in info.value.issues] == [
        str(tmp_path / "missing.yaml"),
        str(tmp_path / "x.txt"),
    ]
    assert [i.message for i in info.value.issues] == [
        "cannot read: No such file or directory",
        "expectation files end in .yaml, .yml or .jsonl",
    ]


def test_a_case_that_is_not_a_mapping(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('["id", "a"]\n')
    with pytest.raises(
        ExpectationError, match=r"c.jsonl:1: cases\[0\]: .* is not of type 'object'"
    ):
        load_cases([path])


def test_jsonl_duplicate_keys_are_errors(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "id": "b", "exchange_id": "x", "expect": "no_call"}\n')
    with pytest.raises(ExpectationError, match=r"d.jsonl:1: not valid JSON: duplicate key 'id'"):
        load_cases([path])


@pytest.mark.parametrize(
    ("value", "matcher"),
    [
        ("Paris", Matcher(value="Paris")),
        (None, Matcher(value=None)),
        ({"city": "Paris"}, Matcher(value={"city": "Paris"})),
        ({"optional": True, "x": 1}, Matcher(value={"optional": True, "x": 1})),  # a plain dict
        ({"optional": True}, Matcher(kind="any", optional=True)),
        ({"match": "exact", "value": {"match": 1}}, Matcher(value={"match": 1})),
        (
            {"match": "regex", "pattern": "a+", "optional": True},
            Matcher(kind="regex", pattern="a+", optional=True),
        ),
        ({"match": "range", "max": 3}, Matcher(kind="range", max=3)),
        (
            {"match": "text", "values": ["Washington, DC", "DC"], "ignore": ["punctuation"]},
            Matcher(kind="text", values=["Washington, DC", "DC"], ignore=["punctuation"]),
        ),
        ({"match": "text", "value": "x", "ignore": []}, Matcher(kind="text", value="x", ignore=[])),
        (
            {"match": "object", "fields": {"city": "Paris", "n": {"match": "range", "min": 1}}},
            Matcher(
                kind="object",
                fields={"city": Matcher(value="Paris"), "n": Matcher(kind="range", min=1)},
            ),
        ),
        (
            {
                "match": "list",
                "order": "unordered",
                "allow_extra": True,
                "items": [{"match": "object", "fields": {"a": {"optional": True}}}, 3],
            },
            Matcher(
                kind="list",
                order="unordered",
                allow_extra=True,
                items=[
                    Matcher(kind="object", fields={"a": Matcher(kind="any", optional=True)}),
                    Matcher(value=3),
                ],
            ),
        ),
    ],
)
def test_parse_matcher(value, matcher):
    assert parse_matcher(value) == matcher
    assert parse_matcher(dump_matcher(matcher)) == matcher


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ({"match": "text", "value": "a", "values": ["b"]}, "value or values, not both"),
        ({"match": "text"}, "text needs value (one string) or values"),
        ({"match": "text", "values": ["a"], "ignore": ["accents"]}, "'accents' is not one of"),
        ({"match": "text", "values": [1]}, "1 is not of type 'string'"),
        ({"match": "text", "value": "a", "pattern": "b"}, "does not apply to match: text"),
        ({"match": "object", "fields": {"x": {"match": "regex", "pattern": "("}}}, "compile"),
        ({"match": "list", "items": [{"match": "range"}]}, "range needs min, max or both"),
        ({"match": "list", "items": "abc"}, "'abc' is not of type 'array'"),
        ({"match": "object", "fields": {"x": {"match": "nope"}}}, "unknown match kind 'nope'"),
    ],
)
def test_a_bad_text_object_or_list_matcher_is_named(value, says):
    with pytest.raises(ExpectationError) as info:
        parse_matcher(value)
    assert any(says in i.message for i in info.value.issues), info.value.issues


def test_parse_matcher_errors_name_the_field():
    with pytest.raises(ExpectationError) as info:
        parse_matcher({"match": "tolerance", "value": "x"})
    assert {(i.path, i.message) for i in info.value.issues} == {
        ("", "missing required field 'tolerance'"),
        ("value", "'x' is not of type 'number'"),
    }


@pytest.mark.parametrize(
    ("matcher", "written"),
    [
        (Matcher(value=5), 5),
        (Matcher(value={"match": "x"}), {"match": "exact", "value": {"match": "x"}}),
        (Matcher(value={"optional": False}), {"match": "exact", "value": {"optional": False}}),
        (Matcher(value=None, optional=True), {"match": "exact", "value": None, "optional": True}),
        (Matcher(kind="any"), {"match": "any"}),
        (Matcher(kind="range", min=1), {"match": "range", "min": 1}),
        (Matcher(kind="judge", criterion="c"), {"match": "judge", "criterion": "c"}),
    ],
)
def test_dump_matcher_writes_the_shortest_equal_form(matcher, written):
    assert dump_matcher(matcher) == written


def test_case_to_dict_key_order():
    assert list(case_to_dict(EXPECTED[1])) == ["id", "exchange_id", "expect", "order", "calls"]
    assert list(case_to_dict(EXPECTED[2])) == ["id", "wire_format", "messages", "tools", "expect"]


def test_shared_definitions_under_x_keys_are_anchors_not_cases(tmp_path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        "x-tools:\n"
        "  weather: &weather {type: function, function: {name: get_weather, parameters: {}}}\n"
        "x-note: free text\n"
        "cases:\n"
        "  - id: a\n"
        "    messages: [{role: user, content: hi}]\n"
        "    tools: [*weather]\n"
        "    calls: [{tool: get_weather}]\n"
        "  - id: b\n"
        "    exchange_id: e\n"
        "    calls: [{tool: 3}]\n"
    )
    with pytest.raises(ExpectationError) as info:
        load_cases([path])
    assert [str(i) for i in info.value.issues] == [
        f"{path}:11: cases[1].calls[0].tool: 3 is not of type 'string'"
    ]
    path.write_text(path.read_text().replace("{tool: 3}", "{tool: get_weather}"))
    a, b = load_cases([path])
    assert a.tools == [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    assert b.exchange_id == "e"


def test_other_top_level_keys_beside_cases_are_refused(tmp_path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("tools: []\ncases:\n  - {id: a, exchange_id: e, calls: [{tool: t}]}\n")
    with pytest.raises(ExpectationError, match=r"cases.yaml:1: expected a list of cases, or a "):
        load_cases([path])


def test_structured_output_cases_load_and_write_back(tmp_path) -> None:
    from toolproxy.wire.structured import OUTPUT

    path = tmp_path / "cases.yaml"
    path.write_text(
        "- id: trip\n  exchange_id: e\n  expect: output\n"
        "  output: {city: {match: text, value: Paris}, days: 3}\n  allow_extra_fields: false\n"
    )
    (case,) = load_cases([path])
    assert case.expect == "output" and [c.tool for c in case.calls] == [OUTPUT]
    assert case.calls[0].allow_extra_args is False and set(case.calls[0].args) == {"city", "days"}
    out = tmp_path / "again.yaml"
    dump_cases([case], out)
    assert load_cases([out]) == [case]
    assert "output:" in out.read_text() and "calls" not in out.read_text()


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("{id: a, exchange_id: e, expect: output}", "expect: output needs output"),
        ("{id: a, exchange_id: e, expect: output, output: {x: 1}, calls: [{tool: t}]}",
         "expect: output takes output, not calls"),
        ("{id: a, exchange_id: e, calls: [{tool: t}], output: {x: 1}}",
         "output is only used with expect: output"),
        ("{id: a, exchange_id: e, expect: output, output: {x: {match: nope}}}", "nope"),
    ],
)  # fmt: skip
def test_structured_output_cases_that_cannot_be_graded(tmp_path, case, says) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(f"- {case}\n")
    with pytest.raises(ExpectationError, match=says):
        load_cases([path])


def test_a_judge_matcher_may_pass_at_half_a_point_and_writes_it_back():
    m = parse_matcher({"match": "judge", "criterion": "a French city", "pass_at": 0.5})
    assert (m.kind, m.criterion, m.pass_at) == ("judge", "a French city", 0.5)
    assert dump_matcher(m) == {"match": "judge", "criterion": "a French city", "pass_at": 0.5}
    assert dump_matcher(parse_matcher({"match": "judge", "criterion": "c"})) == {
        "match": "judge", "criterion": "c",
    }  # fmt: skip
    for bad in (0.7, "half", 0):
        with pytest.raises(ExpectationError, match="pass_at"):
            parse_matcher({"match": "judge", "criterion": "c", "pass_at": bad})
    with pytest.raises(ExpectationError, match="pass_at"):
        parse_matcher({"match": "exact", "value": 1, "pass_at": 0.5})
