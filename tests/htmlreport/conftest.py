"""A report of the shared seeded capture's two grading runs (g1 the baseline)."""

from __future__ import annotations

import pytest

from toolproxy.grade.report import build_report, build_tables, load_cases, load_gallery


@pytest.fixture(scope="module")
def cases(seeded_capture):
    return load_cases(seeded_capture, ["g1", "g2"])


@pytest.fixture(scope="module")
def report(seeded_capture, cases):
    made = build_report(cases, {}, baseline="g1")
    made.gallery = load_gallery(seeded_capture, cases)
    return made


@pytest.fixture(scope="module")
def tables(report):
    return build_tables(report)
