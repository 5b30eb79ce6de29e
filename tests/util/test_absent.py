"""The one sentinel for a lookup whose value may be None."""

from __future__ import annotations

import importlib

import pytest

from toolproxy.util.absent import ABSENT

USERS = [
    "toolproxy.grade.checker",
    "toolproxy.grade.pairing",
    "toolproxy.grade.semantic",
    "toolproxy.schema.glance",
    "toolproxy.schema.resolving",
]


@pytest.mark.parametrize("module", USERS)
def test_every_module_looks_up_with_the_one_sentinel(module):
    assert importlib.import_module(module).ABSENT is ABSENT


def test_absent_is_no_json_value_and_says_so():
    assert {"a": None}.get("a", ABSENT) is None
    assert {"a": None}.get("b", ABSENT) is ABSENT
    assert ABSENT not in (None, False, 0, "", [], {})
    assert repr(ABSENT) == "ABSENT"
