"""Validation of call arguments against their schema, in words (`SchemaCheck`)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from toolproxy.records import ToolCall
from toolproxy.schema import compiling, formats, validator
from toolproxy.schema.formats import is_date_time, is_time
from toolproxy.schema.validator import SchemaCheck, check_call, check_tool_call, check_value

REAL = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
    "required": ["city", "unit"],
}


# --- validation ------------------------------------------------------------------------


def errors(check: SchemaCheck) -> list[tuple[str, str]]:
    return [(e.path, e.validator) for e in check.errors]


def test_valid_arguments():
    assert check_call('{"city": "Paris", "unit": "c"}', REAL) == SchemaCheck(valid=True)


def test_missing_required_wrong_type_and_enum():
    got = check_call('{"city": 3, "unit": "k"}', REAL)
    assert not got.valid and got.parse_error is None and got.schema_error is None
    assert sorted(errors(got)) == [("$.city", "type"), ("$.unit", "enum")]
    missing = check_call('{"unit": "c"}', REAL)
    assert errors(missing) == [("$", "required")]
    assert missing.errors[0].message == "'city' is a required property"


FORMATS = {
    "type": "object",
    "properties": {
        "since": {"type": "string", "format": "date-time"},
        "at": {"type": "string", "format": "time"},
        "day": {"type": "string", "format": "date"},
    },
}


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2024-05-01T12:00:00Z", True),
        ("2024-05-01t12:00:00.123+02:00", True),
        ("2016-12-31T23:59:60Z", True),
        ("2024-05-01 12:00:00Z", False),
        ("2024-02-30T12:00:00Z", False),
        ("2024-05-01T24:00:00Z", False),
        ("2024-05-01T12:00:00", False),
        ("2024-05-01T12:00:00+25:00", False),
        ("yesterday", False),
        ("２０２４-05-01T12:00:00Z", False),
    ],
)
def test_format_date_time_is_checked(value, ok):
    got = check_value({"since": value}, FORMATS)
    assert got.valid is ok
    assert ok or errors(got) == [("$.since", "format")]


def test_format_time_and_date_are_checked():
    assert check_value({"at": "10:00:00Z", "day": "2024-05-01"}, FORMATS).valid
    assert errors(check_value({"at": "10:00"}, FORMATS)) == [("$.at", "format")]
    assert not is_time("25:00:00Z") and not is_time("10:00:00+24:00")
    assert errors(check_value({"day": "2024-13-01"}, FORMATS)) == [("$.day", "format")]
    # formats apply to strings only
    assert is_date_time(5) and is_time(None)


def test_ref_and_one_of():
    schema = {
        "type": "object",
        "properties": {
            "filters": {"$ref": "#/$defs/Filters"},
            "id": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 10}]},
        },
        "$defs": {
            "Filters": {"type": "object", "properties": {"since": {"$ref": "#/$defs/When"}}},
            "When": {"type": "string", "format": "date-time"},
        },
    }
    assert check_value({"filters": {"since": "2024-05-01T00:00:00Z"}, "id": 3}, schema).valid
    assert errors(check_value({"filters": {"since": "nope"}}, schema)) == [
        ("$.filters.since", "format")
    ]
    # 12 is an integer and a number >= 10: oneOf wants exactly one
    assert errors(check_value({"id": 12}, schema)) == [("$.id", "oneOf")]
    assert errors(check_value({"id": 2.5}, schema)) == [("$.id", "oneOf")]


def test_any_of_and_the_best_error_comes_first():
    schema = {
        "type": "object",
        "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "required": ["z"],
    }
    got = check_value({"a": 1}, schema)
    assert errors(got) == [("$", "required"), ("$.a", "anyOf")]


def test_unparseable_and_empty_arguments_are_results():
    got = check_call('{"city": "Par', REAL)
    assert not got.valid and got.parse_error and not got.errors
    assert check_call("", REAL).parse_error == "empty arguments"
    assert check_call('{"x": NaN}', None).parse_error


def test_recorded_calls_keep_the_wire_parsers_reading():
    # an Anthropic stream's argument-less call: no text, arguments {}
    empty = ToolCall(index=0, name="t", arguments_raw="", arguments={})
    assert check_tool_call(empty, {"type": "object"}).valid
    assert errors(check_tool_call(empty, REAL)) == [("$", "required"), ("$", "required")]
    cut = ToolCall(index=0, name="t", arguments_raw='{"a', parse_error="cut short")
    assert check_tool_call(cut, None) == SchemaCheck(valid=False, parse_error="cut short")
    unparsed = ToolCall(index=0, name="t", arguments_raw='{"city": 1}')
    assert errors(check_tool_call(unparsed, REAL)) == [("$", "required"), ("$.city", "type")]


def test_no_schema_checks_parsing_only():
    assert check_call('{"anything": 1}', None) == SchemaCheck(valid=True)


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ({"type": "nope"}, "invalid schema"),
        ({"properties": {"a": {"pattern": "("}}}, "invalid schema"),
        ("not a schema", "schema is str"),
        ([{"type": "object"}], "schema is list"),
        ({"$ref": "https://example.com/remote.json"}, "unusable schema"),
        ({"$ref": "#/$defs/Missing"}, "unusable schema"),
    ],
)
def test_an_invalid_schema_is_a_result(schema, says):
    got = check_call("{}", schema)
    assert not got.valid and got.schema_error and got.schema_error.startswith(says)
    assert got.errors == []


def test_declared_draft_is_respected():
    # draft-04's boolean exclusiveMaximum: invalid under 2020-12, meaningful under draft-04
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "properties": {"n": {"maximum": 5, "exclusiveMaximum": True}},
    }
    assert errors(check_value({"n": 5}, draft4)) == [("$.n", "maximum")]
    assert check_value({"n": 4}, draft4).valid
    undeclared = {k: v for k, v in draft4.items() if k != "$schema"}
    assert check_value({"n": 4}, undeclared).schema_error
    # 2020-12 is the default: prefixItems is a keyword there, ignored by draft-07
    tuple_schema = {"prefixItems": [{"type": "integer"}]}
    assert not check_value(["x"], tuple_schema).valid
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **tuple_schema}
    assert check_value(["x"], draft7).valid


def test_boolean_schemas():
    assert check_call("{}", True).valid
    assert errors(check_call("{}", False)) == [("$", "false")]


def test_a_schema_jsonschema_chokes_on_is_a_result():
    assert check_call("{}", {"$schema": ["not", "a", "uri"]}).schema_error.startswith(
        "unusable schema: TypeError"
    )


def test_errors_and_messages_are_bounded():
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    got = check_value({f"k{i}": "x" * 1000 for i in range(80)}, schema)
    assert len(got.errors) == validator.MAX_ERRORS
    assert all(len(e.message) <= compiling.MAX_MESSAGE for e in got.errors)


def test_values_json_cannot_hold_do_not_crash():
    # not JSON-serialisable, so no schema_hash: cached by identity instead
    assert check_call("{}", {"type": "object", "x": {1, 2}}).valid
    assert check_call("1", {"enum": {1, 2}}).schema_error


def _date_time_by_datetime(value: str) -> bool:
    """RFC 3339 date-time as `datetime` reads the fields (what `is_date_time` must say)."""
    m = re.fullmatch(
        r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:[Zz]|([+-])(\d\d):(\d\d))",
        value,
        re.ASCII,
    )
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        datetime(year, month, day, hour, minute, min(second, 59), tzinfo=UTC)
    except ValueError:
        return False
    return second <= 60 and (m[7] is None or (int(m[8]) < 24 and int(m[9]) < 60))


def test_date_time_fields_are_read_as_datetime_reads_them():
    """Every calendar edge (year 0, leap years by the 4/100/400 rule, day 0 and 32, month 13,
    hour 24, minute 60, leap second 60 and 61, offsets) as `datetime` decides it."""
    dates = [
        f"{y}-{m}-{d}"
        for y in ("0000", "0001", "1900", "2000", "2023", "2024", "2100", "9999")
        for m in ("00", "01", "02", "04", "09", "11", "12", "13")
        for d in ("00", "01", "28", "29", "30", "31", "32")
    ]
    times = ["00:00:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60", "12:00:61", "09:30:00.25"]
    zones = ["Z", "z", "+02:00", "-23:59", "+24:00", "+05:60", ""]
    for date in dates:
        for time in times:
            for zone in zones:
                for t in ("T", "t"):
                    value = f"{date}{t}{time}{zone}"
                    assert is_date_time(value) is _date_time_by_datetime(value), value


_BEFORE = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:[Zz]|([+-])(\d\d):(\d\d))$",
    re.ASCII,
)


def _date_time_before(value: str) -> bool:
    """`is_date_time` as it read the fields through the pattern's groups (`match`, so `$`
    also matched before one final newline): the verdicts the group-free one must keep."""
    m = _BEFORE.match(value)
    if m is None:
        return False
    if value[11:13] > "23" or value[14:16] > "59" or value[17:19] > "60":
        return False
    day = value[5:10]
    if day not in formats._MONTH_DAYS or value[0:4] == "0000":
        return False
    if day == "02-29" and not formats._leap(int(value[0:4])):
        return False
    return m[7] is None or (m[8] <= "23" and m[9] <= "59")


def test_date_time_keeps_the_verdicts_it_read_through_groups():
    """Fractions, offsets at and past their edges, a final newline (one matches, as `$`
    reads it; two do not), other whitespace, digits outside ASCII, cut and padded texts."""
    stems = ["2024-02-29T23:59:60", "2023-02-29T10:00:00", "0001-01-01t00:00:00"]
    tails = [
        "Z", "z", ".5Z", ".123456+05:30", "+23:59", "-24:00", "+05:60", "+0530", "", "Z ",
        "Z\n", "Z\n\n", "+01:00\n", "\nZ", "ZZ", ".Z", "+01:00:00",
    ]  # fmt: skip
    values = [s + t for s in stems for t in tails]
    values += [v[:n] for v in values[:12] for n in range(len(v))]  # every prefix
    values += [" " + values[0], "２０２４-02-29T23:59:59Z", "2024-02-29T23:59:59Z\r", "\n"]
    for value in values:
        assert is_date_time(value) is _date_time_before(value), repr(value)
