"""The grader's format checks: `format_conforms` answers as the checker's own `conforms`."""

from __future__ import annotations

import jsonschema
import pytest

from toolproxy.schema import formats

FORMAT_VALUES = [
    "2025-03-01T10:00:00Z", "2025-02-30T10:00:00Z", "10:00:00Z", "25:00:00Z", "a@b.c", "nope",
    "192.168.0.1", "::1", "999.1.1.1", "https://x.org/a", "not a uri", "^a+$", "(", "P1D",
    "2025-03-01", "2025-13-01", "550e8400-e29b-41d4-a716-446655440000", "/a/b", "#/a", "",
    "é", 5, 2.5, True, None, [], {},
]  # fmt: skip


def test_format_conforms_answers_as_the_checkers_own():
    """The compiled `conforms` the quick path calls says what jsonschema's does, for every
    format the grader's checker knows and values that fit, fail or are of another type."""
    checker = formats.format_checker(jsonschema.Draft202012Validator)
    conforms = formats.format_conforms(checker)
    assert {"date-time", "time", "email", "ipv4", "regex"} <= set(checker.checkers)
    for name in [*checker.checkers, "unknown-format"]:
        for value in FORMAT_VALUES:
            assert conforms(value, name) is checker.conforms(value, name), (name, value)


def test_format_conforms_keeps_the_registered_exceptions_apart():
    checker = jsonschema.FormatChecker(())
    checker.checks("listed", raises=ValueError)(lambda v: int(v) > 0)
    checker.checks("unlisted")(lambda v: int(v) > 0)
    conforms = formats.format_conforms(checker)
    checker.checks("later")(lambda v: v == "ok")  # registered after: counts
    assert conforms("5", "listed") and not conforms("-5", "listed")
    assert not conforms("x", "listed")  # ValueError, registered: does not conform
    with pytest.raises(ValueError):
        conforms("x", "unlisted")  # as from jsonschema's `conforms`
    with pytest.raises(ValueError):
        checker.conforms("x", "unlisted")
    assert conforms("ok", "later") and not conforms("no", "later")
