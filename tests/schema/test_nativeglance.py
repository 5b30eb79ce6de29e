"""The C reading (`nativeglance.c`) gives the Python reading's answer or hands the question
back (None): never another answer; and on the keywords it reads, it answers. Run on the
venv's build in both cores (the pure core loads the built file here, not in the grader)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.schema.test_glance import BFCL_LIKE, mixed
from tests.schema.test_quick import TOOL, TRICKY, object_of, scalars, type_names, values
from tests.util.test_compiled import built_module
from toolproxy.schema import glance as reading
from toolproxy.schema.accepts import BOUNDS
from toolproxy.schema.glance import fits_py, glance_py
from toolproxy.schema.quick import LENGTHS, MAX_DEPTH
from toolproxy.util import compiled

REPO = Path(__file__).resolve().parents[2]
NAN = float("nan")
# values a bound or a length reads: long and short strs and lists, ints past any float
SIZED = ["abc", "üéà", "x" * 5, [1, 2, 3], [[], {}], 10**400, -(10**400), float("inf"), -1e300]
SIZED += ["2025-03-01T10:00:00Z", "2025-02-30T10:00:00Z", "10:00:00Z", "2025-03-01", "a@b.c"]


def built_glance() -> ModuleType:
    """The venv's build of `nativeglance.c`, for these very sources, reading `format` with
    glance's checker (glance.py gives it when it loads the module; the pure core does not)."""
    module = built_module("toolproxy.schema.nativeglance")
    module.set_conforms(reading.CONFORMS)
    return module


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return built_glance()


def agrees(native: ModuleType, schema: Any, value: Any) -> bool | None:
    """The C answer for (schema, value) and for the schema alone, each None or the Python
    one's (asserted); the C answer to `glance`."""
    found = native.glance(schema, value)
    assert found is None or found is glance_py(schema, value), (schema, value)
    alone = native.fits(schema)
    assert alone is None or alone is fits_py(schema), schema
    return found


def nodes(schema: Any) -> list[Any]:
    """`schema` and every schema under it (so each leaf meets every value too)."""
    found = [schema]
    if isinstance(schema, dict):
        props = schema.get("properties")
        subs = list(props.values()) if isinstance(props, dict) else []
        subs += [schema[k] for k in ("items", "additionalProperties") if k in schema]
        subs += [
            s for k in ("anyOf", "allOf") if isinstance(schema.get(k), list) for s in schema[k]
        ]
        for sub in subs:
            found += nodes(sub)
    return found


def test_the_compiled_core_reads_in_c_and_the_pure_one_does_not():
    assert (reading.NATIVE_GLANCE is not None) is compiled.in_use()
    assert (reading.NATIVE_FITS is not None) is compiled.in_use()


def test_its_depth_limit_is_the_compilers(native):
    assert native.MAX_DEPTH == MAX_DEPTH


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed, st.lists(values, min_size=1, max_size=6))
def test_it_never_gives_another_answer(native, schema: Any, found: list[Any]):
    for node in nodes(schema):
        for value in found + TRICKY + SIZED:
            agrees(native, node, value)


# Schemas of the keywords it reads only, right and wrong, at any depth
annotations = {
    "description": st.text(max_size=3) | st.just(5),
    "title": st.text(max_size=3) | st.none(),
    "$comment": st.text(max_size=3) | st.just([]),
    "default": values,
    "examples": st.lists(scalars, max_size=2) | st.just("e"),
    "deprecated": st.booleans() | st.just(1),
    "readOnly": st.booleans() | st.just("yes"),
    "writeOnly": st.booleans(),
}
# bounds and lengths the compiler takes and ones it refuses (a bool, NaN, infinity, a
# negative or a float count), and ints past any float or size
bounds = st.integers(-3, 3) | st.sampled_from([1.5, -0.5, 10**400, float("inf"), NAN, True, "1"])
counts = st.integers(0, 3) | st.sampled_from([-1, 1.0, True, 10**30, None])
read_leaf = st.fixed_dictionaries(
    {},
    optional={
        "type": type_names
        | st.lists(type_names, min_size=1, max_size=3)  # repeats too
        | st.sampled_from(["strng", [], ["string", 5], 5]),
        "enum": st.lists(scalars | st.lists(scalars, max_size=2), max_size=4) | st.just("x"),
        "const": scalars | st.lists(scalars, max_size=2),
        "format": st.sampled_from(["date-time", "time", "date", "email", "ipv4", "no-such"])
        | st.just(5),
        **{bound: bounds for bound in BOUNDS},
        **{length: counts for length in LENGTHS},
        **annotations,
    },
)


def shaped_children(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Objects and arrays of `children` (what a program holds of them)."""
    return st.one_of(
        object_of(
            children,
            st.sampled_from(["a", "b", "c", "verbose"]),
            st.lists(st.sampled_from(["a", "b", "c"]), max_size=3) | st.just(["a", 1]),
        ),
        st.builds(lambda items: {"type": "array", "items": items}, children),
        st.builds(lambda props: {"properties": props}, st.just([]) | st.just({})),
    )


def read_children(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        shaped_children(children),
        st.builds(lambda subs: {"anyOf": subs}, st.lists(children, max_size=3)),  # [] too
        st.builds(lambda subs: {"allOf": subs}, st.lists(children, max_size=3)),
        st.just({"anyOf": {"type": "string"}}),
    )


read_in_c = st.recursive(st.booleans() | read_leaf, read_children, max_leaves=8)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(read_in_c, st.lists(values, min_size=1, max_size=6))
def test_on_what_it_reads_it_answers_and_agrees(native, schema: Any, found: list[Any]):
    """(Else the test above could pass by handing every question back.)"""
    for node in nodes(schema):
        for value in found + TRICKY + SIZED:
            assert agrees(native, node, value) is not None, (node, value)
        assert native.fits(node) is not None, node


class Args(dict):  # type: ignore[type-arg]
    pass


class Items(list):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize(
    ("schema", "value", "answer"),
    [
        (BFCL_LIKE, {"city": "Paris"}, True),  # minimum, read here
        ({**BFCL_LIKE, "pattern": "a"}, {"city": "Paris"}, None),  # pattern: Python's re
        ({"type": "string", "format": "date"}, "x", False),  # format: the checker given
        ({"format": "date-time"}, "2025-03-01T10:00:00+01:00", True),
        ({"format": "date-time"}, 5, True),  # a format checks strs only
        ({"format": "no-such"}, "x", True),  # a format the checker does not know
        (TOOL, {"a": "x"}, None),  # $defs, $ref
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, None, True),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, 1, False),
        ({"anyOf": [{"type": "string"}, {"type": "strng"}]}, "x", False),  # one refused
        ({"anyOf": [{"type": "string"}, {"pattern": "x"}]}, 1, None),  # pattern: Python's re
        ({"allOf": [{"type": "integer"}, {"minimum": 1}]}, 1, True),
        ({"allOf": [{"type": "integer"}, {"minimum": 1}]}, 0, False),
        ({"anyOf": []}, 1, False),
        ({"type": "string", "maxLength": 3}, "abcd", False),
        ({"type": "string", "maxLength": 3}, "üéàx"[:3], True),  # code points, not bytes
        ({"minLength": 10**30}, "a", False),  # a count past any size
        ({"maxItems": 10**30}, [1], True),
        ({"minItems": -1}, [], False),  # no count: the compiler refuses it
        ({"maxLength": True}, "", False),
        ({"minimum": 1}, 1, True),  # each bound at its edge
        ({"maximum": 1}, 1.0, True),
        ({"exclusiveMinimum": 1}, 1, False),
        ({"exclusiveMaximum": 1.5}, 1.5, False),
        ({"minLength": 2, "maxLength": 2}, "ab", True),
        ({"minItems": 1, "maxItems": 1}, [None], True),
        ({"minimum": 1}, True, False),  # a bool under a bound: left to jsonschema
        ({"minimum": 1}, "a", True),  # no number: no bound
        ({"maximum": 1e308}, 10**400, False),  # an int past any float, compared exactly
        ({"exclusiveMinimum": 10**400}, float("inf"), True),
        ({"exclusiveMaximum": 2}, 2.0, False),
        ({"minimum": float("inf")}, 1, False),  # no finite bound
        ({"minimum": 0}, NAN, False),
        ({"type": "object", "nullable": True}, {}, None),  # an unknown keyword
        ({1: "x"}, {}, None),  # a key that is no str
        ({"type": "object", "properties": {"a": True}}, {1: "x"}, None),
        ({"properties": {}, "required": list("abcdefghi")}, {}, None),  # 9 names: a set
        ({"type": "string", "description": 5, "format": "date"}, "x", False),  # no str first
        ({"type": "object", "properties": {"a": {"type": "string"}}}, Args(a="x"), False),
        ({"properties": {"a": {"type": "string"}}}, Args(a="x"), False),  # read past `type`
        ({"items": {"type": "string"}}, Items(["a"]), False),
        ({"properties": {}, "required": "a"}, {}, False),
        ({"properties": {}, "required": ["a"], "additionalProperties": None}, {"a": 1}, False),
        ({"enum": [NAN]}, NAN, False),  # the same NaN object: still equal to nothing
        ({"enum": [1, "a"]}, 1.0, True),  # 1 is 1.0
        ({"enum": [1]}, True, False),  # a bool is no 1
        ({"enum": [float("nan")]}, float("nan"), False),  # NaN equals nothing
        ({"const": None}, None, True),
        ({"enum": ["a", "b", "c"]}, "c", True),  # each option, the last too
        ({"type": "array", "items": {"enum": [1, 2]}}, [2, 1], True),
        ({"enum": [10**400]}, 1e308, False),  # an int no float reaches
        ({"type": "integer"}, 3.0, True),
        ({"type": "integer"}, float("inf"), False),
        ({"type": ["integer", "integer"]}, 3, False),
        (False, None, False),
    ],
)
def test_what_it_answers_and_what_it_hands_back(native, schema: Any, value: Any, answer: Any):
    """Read as it stands, then compiled (`remember`: from its program, when it has one)."""
    native.clear()
    assert agrees(native, schema, value) is answer
    native.remember(schema)
    assert agrees(native, schema, value) is answer
    native.clear()


def test_deeper_than_the_compiler_goes_is_not_proven(native):
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(MAX_DEPTH + 6):
        deep = {"type": "object", "properties": {"a": deep}}
    assert agrees(native, deep, {}) is False
    assert native.remember(deep) is False  # no program
    assert agrees(native, deep, {}) is False
    chain: Any = {"type": "string"}
    for _ in range(MAX_DEPTH + 6):
        chain = {"items": chain}
    assert agrees(native, chain, []) is False
    assert native.remember(chain) is False
    assert agrees(native, chain, []) is False
    native.clear()


@pytest.mark.parametrize("path", sorted((REPO / "schemas" / "mcp").rglob("*.json")))
def test_a_pulled_mcp_schema(native, path: Path):
    schema = json.loads(path.read_text(encoding="utf-8"))["tool"]["inputSchema"]
    for value in [*TRICKY, {"timezone": "Europe/Paris"}, {"source_timezone": "UTC", "time": "x"}]:
        agrees(native, schema, value)


def test_a_format_is_read_with_the_checker_it_was_given(native):
    """What glance_py answers of a checker that raises (not proven), and a checker given
    nothing but a BaseException to raise is asked of again in Python."""

    def raising(error: BaseException) -> Any:
        def conforms(value: Any, name: str) -> bool:
            raise error

        return conforms

    schema = {"type": "string", "format": "date-time"}
    try:
        native.set_conforms(raising(ValueError("bad")))
        assert native.glance(schema, "x") is False
        assert native.fits(schema) is True  # no value: no checker asked
        native.set_conforms(raising(KeyboardInterrupt()))
        assert native.glance(schema, "x") is None
        with pytest.raises(TypeError, match="a callable"):
            native.set_conforms(5)
    finally:
        native.set_conforms(reading.CONFORMS)
    assert native.glance(schema, "2025-03-01T10:00:00Z") is True


# --- a compiled schema: read from the program made of it ---------------------------------

# the keywords a program holds (bounds, lengths, format, anyOf and allOf: read as they stand)
program_leaf = st.fixed_dictionaries(
    {},
    optional={
        "type": type_names
        | st.lists(type_names, min_size=1, max_size=3)
        | st.sampled_from(["strng", [], 5]),
        "enum": st.lists(scalars | st.lists(scalars, max_size=2), max_size=4) | st.just("x"),
        "const": scalars | st.lists(scalars, max_size=2),
        **annotations,
    },
)


in_programs = st.recursive(st.booleans() | program_leaf, shaped_children, max_leaves=10)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(in_programs | mixed, st.lists(values, min_size=1, max_size=6))
def test_a_compiled_schema_answers_from_its_program_as_it_did_before(
    native, schema: Any, found: list[Any]
):
    """Every schema that fits and has only the keywords a program holds gets one; with it,
    each answer is the one read from the schema itself, and glance_py's."""
    native.clear()
    before = {id(v): native.glance(schema, v) for v in found + TRICKY}
    made = native.remember(schema)
    if made:
        assert native.fits(schema) is True, schema
    for value in found + TRICKY:
        now = native.glance(schema, value)
        assert now is before[id(value)], (schema, value)
        assert now is None or now is glance_py(schema, value), (schema, value)
    assert native.programs() == (1, int(made))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(in_programs)
def test_each_schema_in_the_programs_subset_that_fits_gets_one(native, schema: Any):
    native.clear()
    assert native.remember(schema) is (native.fits(schema) is True), schema


def test_a_schema_outside_the_programs_is_read_as_it_stands(native):
    native.clear()
    bounded = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}
    assert native.remember(bounded) is False
    for n in (0, 1):
        assert native.glance(bounded, {"n": n}) is (n == 1)
    assert native.programs() == (1, 0)


def test_compiling_a_schema_gives_it_a_program_and_clear_caches_forgets_it(native):
    from toolproxy.schema.compiling import clear_caches, compile_schema

    native.clear()
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    compile_schema(schema)
    if compiled.in_use():  # (the pure core gives the C module nothing)
        assert native.programs() == (1, 1)
        clear_caches()
        assert native.programs() == (0, 0)


def test_programs_held_together_each_answer_for_their_own_schema(native):
    """3,000 programs held at once, each of another schema (its own property, its own
    type): each answers as its own schema (one program read for another's passed every
    test that holds one schema at a time)."""
    kinds = [("string", "s", 1), ("integer", 1, "s"), ("boolean", True, None)]
    native.clear()
    held = []
    for i in range(3_000):
        kind, right, wrong = kinds[i % 3]
        schema = {"type": "object", "properties": {f"p{i}": {"type": kind}}}
        held.append((schema, {f"p{i}": right}, {f"p{i}": wrong}))
        assert native.remember(schema) is True
    assert native.programs() == (3_000, 3_000)
    for schema, right, wrong in held:
        assert native.glance(schema, right) is True, schema
        assert native.glance(schema, wrong) is False, schema
    native.clear()


def test_past_its_table_it_starts_again(native):
    """At most 2**15 schemas are held; the one past them finds the table empty."""
    native.clear()
    held = [{"type": "object", "properties": {"a": {"type": "string"}}} for _ in range(2**15)]
    assert all(native.remember(schema) for schema in held)
    assert native.programs() == (2**15, 2**15)
    # programs made one after another, the first, the middle and the last: each answers
    for schema in (held[0], held[2**14], held[-1]):
        assert native.glance(schema, {"a": 1}) is False
        assert native.glance(schema, {"a": "x"}) is True
    string = {"type": "string"}
    assert native.remember(string) is True
    assert native.programs() == (1, 1)
    # the program made as the table starts again answers
    assert native.glance(string, 1) is False and native.glance(string, "s") is True
    assert native.glance(held[0], {"a": 1}) is False  # read as it stands again
    assert native.remember(held[0]) is True and native.programs() == (2, 2)
    native.clear()


# past 32 properties, matched off the stack; 1,500: a program of ~130 KB
@pytest.mark.parametrize("n", [3, 32, 33, 80, 1_500])
def test_a_program_of_many_properties_answers_as_the_schema(native, n: int):
    props = {f"p{i}": {"type": "integer" if i % 2 else "string"} for i in range(n)}
    schema = {"type": "object", "properties": props, "required": ["p0", "x"]}
    schema["additionalProperties"] = {"type": "boolean"}
    right = {f"p{i}": i if i % 2 else "s" for i in range(n)} | {"x": True}
    values = [right, {**right, "x": 1}, {k: v for k, v in right.items() if k != "x"}]
    values += [{**right, f"p{n - 1}": "s" if (n - 1) % 2 else 1}, {"x": True, "p0": "s"}, {}]
    native.clear()
    before = [native.glance(schema, v) for v in values]
    assert native.remember(schema) is True
    assert [native.glance(schema, v) for v in values] == before
    assert (
        before == [glance_py(schema, v) for v in values] == [True, False, False, False, True, False]
    )
    native.clear()
