"""The semantic stage: a call pairing proved matches as matching each argument grades it."""

from __future__ import annotations

from typing import Any

import pytest

from toolproxy.grade.matchers import matches
from toolproxy.grade.model import ExpectedCall, Matcher
from toolproxy.grade.semantic import match_args, proven_args

PROVABLE = [  # (matcher, a value it matches)
    (Matcher(value={"a": [1, 2]}), {"a": [1, 2]}),
    (Matcher(kind="any_of", values=["x", "y"]), "y"),
    (Matcher(kind="enum", values=["asc"]), "asc"),
    (Matcher(kind="range", min=0, max=5), 3),
    (Matcher(kind="tolerance", value=1.0, tolerance=0.1), 1.05),
    (Matcher(kind="regex", pattern="ab+"), "abb"),
    (Matcher(kind="text", value="Hello  World"), "hello world"),
    (Matcher(kind="unordered", value=[1, 2]), [2, 1]),
    (Matcher(kind="any"), None),
    (Matcher(kind="object", fields={"k": Matcher(kind="text", value="A")}), {"k": "a", "z": 1}),
    (Matcher(kind="list", items=[Matcher(kind="range", min=1)]), [4]),
    (Matcher(kind="exact", value=2, optional=True), 2),
]


@pytest.mark.parametrize("allow_extra", [False, True])
@pytest.mark.parametrize("extra", [{}, {"invented": 1}])
def test_a_proven_call_grades_its_arguments_as_matching_them_would(
    allow_extra: bool, extra: dict[str, Any]
) -> None:
    matchers = {f"p{i}": m for i, (m, _) in enumerate(PROVABLE)}
    args = {f"p{i}": v for i, (_, v) in enumerate(PROVABLE)} | extra
    assert all(matches(m, args[k]) for k, m in matchers.items())  # what pairing proved
    e = ExpectedCall(tool="t", args=matchers, allow_extra_args=allow_extra)
    judge = lambda criterion, value: (0.0, "never asked")  # noqa: E731
    for failed_before in (False, True):
        proven_failed: list = []
        matched_failed: list = []
        proven = proven_args(e, args, proven_failed)
        matched = match_args(e, args, judge, failed_before, matched_failed)
        assert [a.model_dump() for a in proven] == [a.model_dump() for a in matched]
        assert [(lab, a.model_dump()) for lab, a in proven_failed] == [
            (lab, a.model_dump()) for lab, a in matched_failed
        ]
    assert len(proven) == len(matchers) + (0 if allow_extra else len(extra))


def test_an_absent_argument_whose_expectation_is_a_misspelt_matcher_says_so() -> None:
    # {optinal: true} is a literal mapping, so the argument is required: absent, it fails
    e = ExpectedCall(tool="t", args={"unit": Matcher(value={"optinal": True}), "city": Matcher()})
    failed: list = []
    grades = match_args(e, {}, None, False, failed)
    assert [(g.name, g.bucket) for g in grades] == [("unit", "missing"), ("city", "missing")]
    assert grades[0].detail is not None and "'optinal' is not `optional`" in grades[0].detail
    assert grades[1].detail == "required, absent"
    assert [label for label, _ in failed] == ["missing_required", "missing_required"]
