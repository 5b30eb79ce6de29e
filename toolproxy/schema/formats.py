"""The format checks the grader validates with: jsonschema's format checker of a draft, with
RFC 3339 `date-time` and `time` checked here when jsonschema has no package installed for
them (`is_date_time`, `is_time`), and `format_conforms`, the checker's `conforms` as a
compiled function (the quick path calls it for each `format`). Compiled by mypyc with the
grading core. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

import jsonschema

_FORMATS: Final[dict[type, jsonschema.FormatChecker]] = {}
_CONFORMS: Final[dict[type, Callable[[Any, str], bool]]] = {}  # `format_conforms` of each
# no groups: the fields are read by their fixed places (groups cost sre half the match)
_DATE_TIME: Final = re.compile(
    r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(?:\.\d+)?(?:[Zz]|[+-]\d\d:\d\d)", re.ASCII
)
_TIME: Final = re.compile(r"^(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:[Zz]|([+-])(\d\d):(\d\d))$", re.ASCII)


def is_date_time(value: object) -> bool:
    """RFC 3339 date-time (jsonschema checks it only with an optional package installed)."""
    if not isinstance(value, str):
        return True
    # `^...$` as `match` reads it: `$` also matches before one final newline
    text = value[:-1] if value[-1:] == "\n" else value
    if _DATE_TIME.fullmatch(text) is None:
        return False
    # the fields are fixed-width ASCII digits (the pattern says so): two-digit strings
    # compare as their numbers do, and a set holds every month-day; `datetime` with a time
    # zone, and int() of each field, made this 3.3-4.2 µs a value
    if text[11:13] > "23" or text[14:16] > "59" or text[17:19] > "60":  # 60: leap second
        return False
    day = text[5:10]
    if day not in _MONTH_DAYS or text[0:4] == "0000":  # years 1-9999, as `datetime`'s
        return False
    if day == "02-29" and not _leap(int(text[0:4])):
        return False
    last = text[-1]  # Z, or an offset's last digit: "+hh:mm"
    return last == "Z" or last == "z" or (text[-5:-3] <= "23" and text[-2:] <= "59")


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


_MONTH_DAYS: Final = frozenset(
    f"{month:02d}-{day:02d}"
    for month, days in enumerate((31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31), 1)
    for day in range(1, days + 1)
)  # every "MM-DD" of a leap year


def is_time(value: object) -> bool:
    """RFC 3339 full-time, e.g. 10:00:00Z or 10:00:00.5+02:00."""
    if not isinstance(value, str):
        return True
    m = _TIME.match(value)
    if m is None:
        return False
    hour, minute, second = int(m[1]), int(m[2]), int(m[3])
    offset_ok = m[4] is None or (int(m[5]) < 24 and int(m[6]) < 60)
    return hour < 24 and minute < 60 and second <= 60 and offset_ok


def format_conforms(checker: jsonschema.FormatChecker) -> Callable[[Any, str], bool]:
    """`checker.conforms`, as a compiled function: jsonschema's runs as Python (`check`,
    then a FormatError raised and caught for a value that does not conform), about 3,000
    instructions a date-time where this takes a tenth. Same answers: a format the checker
    does not know conforms; its function's falsy result or one of the exceptions it was
    registered with does not; any other exception propagates, as from `conforms`. Reads
    the checker's formats at each call, so a format registered later counts."""
    checks: dict[str, Any] = checker.checkers  # type: ignore[attr-defined]

    def conforms(value: Any, name: str) -> bool:
        entry = checks.get(name)
        if entry is None:
            return True
        func, raises = entry
        try:
            return bool(func(value))
        except raises:
            return False

    return conforms


def format_checker(cls: type) -> jsonschema.FormatChecker:
    checker = _FORMATS.get(cls)
    if checker is None:
        checker = jsonschema.FormatChecker(())
        checker.checkers = dict(cls.FORMAT_CHECKER.checkers)  # type: ignore[attr-defined]
        if "date-time" not in checker.checkers:
            checker.checks("date-time")(is_date_time)
        if "time" not in checker.checkers:
            checker.checks("time")(is_time)
        _FORMATS[cls] = checker
        _CONFORMS[cls] = format_conforms(checker)
    return checker


def conforms_of(cls: type) -> Callable[[Any, str], bool]:
    """`format_conforms` of the format checker of draft `cls` (`format_checker`)."""
    format_checker(cls)
    return _CONFORMS[cls]
