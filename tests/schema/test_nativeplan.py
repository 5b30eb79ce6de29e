"""A schema's plan (`nativeplan.c`) proves exactly what glance proves, for every schema
that fits: True only where glance says True, and wherever it does. Run on the venv's build
in both cores."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from tests.schema.test_glance import BFCL_LIKE, mixed
from tests.schema.test_quick import values
from tests.strategies import subset_schemas, subset_values
from tests.util.test_compiled import built_module
from toolproxy.schema import compiling
from toolproxy.schema.compiling import clear_caches, compile_schema
from toolproxy.schema.glance import fits_py, glance_py
from toolproxy.util import compiled

SETTINGS = settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return built_module("toolproxy.schema.nativeglance")


def proves(native: ModuleType, schema: Any, value: Any) -> bool | None:
    """The plan's answer (None: no plan), asserted to be glance's whenever glance proves."""
    plan = native.plan(schema)
    if plan is None:
        return None
    assert fits_py(schema) is True
    found = native.proves(plan, value)
    if found:  # never where glance does not prove
        assert glance_py(schema, value) is True, (schema, value)
    if native.glance(schema, value) is True:  # and wherever it does
        assert found, (schema, value)
    return found


@SETTINGS
@given(mixed, values)
def test_a_plan_proves_what_glance_proves_and_nothing_else(native, schema, value):
    proves(native, schema, value)


@pytest.mark.parametrize(
    "value, valid",
    [
        ({"city": "Paris"}, True),
        ({"city": "Paris", "days": 3, "unit": "celsius", "tags": ["a"]}, True),
        ({"city": "Paris", "extra": {"any": 1}}, True),  # additionalProperties: true
        ({"days": 3}, False),  # required city missing
        ({"city": 5}, False),
        ({"city": "Paris", "unit": "kelvin"}, False),
        ({"city": "Paris", "tags": ["a", 1]}, False),
        ({1: "Paris", "city": "Paris"}, False),  # a key glance hands back
    ],
)
def test_a_tool_schema_plan(native, value, valid):
    schema = {k: v for k, v in BFCL_LIKE.items()}
    schema["properties"] = {
        k: {kk: vv for kk, vv in v.items() if kk != "minimum"}
        for k, v in BFCL_LIKE["properties"].items()
    }
    assert proves(native, schema, value) is valid


def test_a_schema_glance_does_not_read_has_no_plan(native):
    assert native.plan({"type": "integer", "minimum": 1}) is None  # bounds: glance asks Python
    assert native.plan({"anyOf": [{"type": "string"}]}) is None
    assert native.plan("not a schema") is None
    assert native.plan(True) is not None


def test_proves_refuses_anything_but_a_plan(native):
    with pytest.raises(TypeError):
        native.proves({"type": "string"}, "x")


def test_a_compiled_quick_schema_keeps_its_plan_in_the_compiled_core():
    clear_caches()
    plain = compile_schema({"type": "object", "properties": {"q": {"type": "string"}}})
    bounded = compile_schema({"type": "integer", "minimum": 0})
    assert (plain.plan is not None) is compiled.in_use()
    assert bounded.plan is None
    assert (compiling.NATIVE_PLAN is not None) is compiled.in_use()
    clear_caches()


@SETTINGS
@given(subset_schemas, subset_values)
def test_on_schemas_glance_reads_a_plan_is_made_and_proves_alike(native, schema, value):
    assert (proves(native, schema, value) is not None) is (native.fits(schema) is True)
