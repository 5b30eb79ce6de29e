"""A schema compiled once per schema (by identity, hash or canonical text)."""

from __future__ import annotations

import json
import subprocess
import sys

from toolproxy.records import schema_hash
from toolproxy.schema import compiling
from toolproxy.schema.compiling import compile_schema
from toolproxy.schema.validator import check_call, check_value


def test_validators_are_compiled_once_per_schema():
    schema = {"type": "object", "properties": {"k": {"type": "integer"}}}
    first = compile_schema(schema)
    assert compile_schema(schema) is first
    assert compile_schema(json.loads(json.dumps(schema))) is first  # equal copy, same hash
    assert compile_schema(schema, key=schema_hash(schema)) is first
    assert check_call('{"k": 1}', first).valid
    assert not check_call('{"k": "1"}', first).valid


def test_a_schema_without_its_hash_keeps_its_verdict_under_the_hash():
    # cached by its canonical text, but the metaschema verdict of a schema outside the
    # quick path (oneOf) is what a capture stores: by schema_hash, as before
    compiling.new_verdicts()
    schemas = [
        {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        {"type": "object", "properties": {"n": {"type": "intger"}}},  # invalid
        {"type": "object", "properties": {"n": {"type": "integer"}}},  # quick: no verdict
    ]
    compiled = [compile_schema(s) for s in schemas]
    verdicts = compiling.new_verdicts()
    assert verdicts == {schema_hash(schemas[0]): None, schema_hash(schemas[1]): compiled[1].error}
    assert compiled[1].error and compiled[1].key == schema_hash(schemas[1])
    assert [compile_schema(json.loads(json.dumps(s))) for s in schemas] == compiled
    compiling.clear_caches()
    compiling.remember_verdicts(verdicts)  # a later run: the stored verdict, not checked again
    again = compile_schema(schemas[1])
    assert again is not compiled[1] and again.error == compiled[1].error
    assert compiling.new_verdicts() == {}


def test_only_schemas_of_one_text_share_a_compile():
    # orjson writes NaN as null: keyed by its bytes, these two would share one compile
    nan, null = {"const": float("nan")}, {"const": None}
    assert compile_schema(nan) is not compile_schema(null)
    assert check_value(None, null).valid and not check_value(None, nan).valid
    one, two = ({"type": "integer", "minimum": m} for m in (1, 1.0))  # "1" and "1.0"
    assert compile_schema(one) is compile_schema({"minimum": 1, "type": "integer"})
    assert compile_schema(two) is not compile_schema(one)
    odd = {"enum": [2**64]}  # beyond orjson: keyed by the json module's text
    assert compile_schema(json.loads(json.dumps(odd))) is compile_schema(odd)


def test_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(compiling, "CACHE_SIZE", 2)
    for n in range(5):
        assert check_value(n, {"const": n}).valid
    assert len(compiling._BY_KEY) <= 2 and len(compiling._BY_ID) <= 2


def test_a_run_makes_room_for_all_its_schemas_and_gives_it_back(monkeypatch):
    monkeypatch.setattr(compiling, "CACHE_SIZE", 2)
    schemas = [{"const": n} for n in range(5)]
    with compiling.cache_room(5):
        first = [compile_schema(s) for s in schemas]
        assert [compile_schema(s) for s in schemas] == first  # none compiled again
        with compiling.cache_room(3):  # a smaller room inside takes nothing away
            assert len(compiling._BY_KEY) == 5
    assert len(compiling._BY_KEY) <= 2 and len(compiling._BY_ID) <= 2
    assert compile_schema(schemas[0]) is not first[0]  # evicted once the run ended


def test_a_quick_schema_is_usable_without_building_its_validator():
    compiled = compile_schema({"type": "object", "properties": {"n": {"type": "integer"}}})
    assert compiled.usable and compiled._validator is None
    assert not check_value({"n": "1"}, compiled).valid  # worded by quickerrors
    assert compiled._validator is None
    unusable = compile_schema({"type": "object", "properties": {"n": {"type": "intger"}}})
    assert not unusable.usable and unusable.error


def test_the_caches_are_emptied_at_exit():
    """At exit the compiled schemas and noted keys go first: the interpreter's teardown
    collects several times, each walking every cached schema (a 90,818-case `grade -j1`
    spent 1.4 s after its command returned, 0.2 s once they go)."""
    code = """
import atexit
import sys
def sizes():
    c = sys.modules["toolproxy.schema.compiling"]
    print(len(c._BY_KEY), len(c._BY_ID), len(c._KEYS))
atexit.register(sizes)  # registered before the module's own handler, so it runs after it
from toolproxy.schema import compiling
for n in range(20):
    schema = {"type": "object", "properties": {f"p{n}": {"type": "string"}}}
    compiling.note_schema_key(schema, f"key{n}")
    compiling.compile_schema(schema)
sizes()
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split("\n")[:2] == ["20 20 20", "0 0 0"]


def tool(n: int = 0) -> dict[str, object]:
    """A new tool schema object (each test's own: nothing cached for it yet)."""
    return {
        "type": "object",
        "properties": {"city": {"type": "string"}, "n": {"type": "integer", "minimum": n}},
        "required": ["city"],
    }


def test_a_schema_met_the_first_times_is_read_not_compiled():
    schema = tool()
    for _ in range(compiling.GLANCES):  # proven valid as it stands: nothing compiled
        assert compiling.compile_unless_proven(schema, {"city": "Paris"}) is None
    assert id(schema) not in compiling._BY_ID
    compiled = compiling.compile_unless_proven(schema, {"city": "Paris"})  # met again
    assert compiled is not None and compiled.accepts({"city": "Paris"})
    assert compiling.compile_unless_proven(schema, {"city": "Rome"}) is compiled


def test_a_value_not_valid_gets_the_schema_uncompiled_to_word_its_errors():
    schema, value = tool(), {"n": -1, "x": [1]}  # no city, n too small
    found = compiling.compile_unless_proven(schema, value)
    assert found is not None and found.usable and not found.accepts(value)
    assert id(schema) not in compiling._BY_ID and not compiling._BY_KEY.get(schema_hash(schema))
    compiled = compile_schema(json.loads(json.dumps(schema)))  # an equal copy, compiled
    assert described(found, value) == described(compiled, value)
    for _ in range(compiling.GLANCES - 1):  # later sightings: glanced at, then compiled
        assert compiling.compile_unless_proven(schema, {"city": "Paris"}) is None
    assert compiling.compile_unless_proven(schema, {"city": "Paris"}) is compiled


def described(compiled: compiling.CompiledSchema, value: object) -> list[tuple[object, ...]]:
    return [
        (e.message, e.json_path, e.validator, list(e.schema_path))
        for e in compiled.iter_errors(value)
    ]


def test_dates_and_patterns_are_read_at_first_sight_and_their_errors_worded_alike():
    """(A `format` or `pattern` anywhere in a schema had it compiled at first sight.)"""
    schema = {
        "type": "object",
        "properties": {
            "day": {"type": "string", "format": "date-time"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        },
        "required": ["day"],
    }
    assert compiling.compile_unless_proven(schema, {"day": "2024-05-01T00:00:00Z"}) is None
    value = {"day": "2024-05-32T00:00:00Z", "code": "paris"}
    found = compiling.compile_unless_proven(schema, value)
    assert found is not None and found.usable and id(schema) not in compiling._BY_ID
    compiled = compile_schema(json.loads(json.dumps(schema)))
    assert len(described(found, value)) == 2
    assert described(found, value) == described(compiled, value)


def test_a_schema_outside_the_first_look_is_compiled():
    outside = {  # $ref: the compiler reads it, the first look does not
        "$defs": {"day": {"type": "string"}},
        "type": "object",
        "properties": {"day": {"$ref": "#/$defs/day"}},
    }
    assert compiling.compile_unless_proven(outside, {"day": "2024-05-01"}) is not None
    broken = {"type": "object", "properties": {"a": {}, "b": {"type": "strng"}}}
    unusable = compiling.compile_unless_proven(broken, {"a": 1})  # b is never given
    assert unusable is not None and not unusable.usable and "strng" in (unusable.error or "")


def test_a_noted_hash_already_compiled_is_a_lookup_else_a_glance():
    first, second = tool(5), tool(5)
    key = schema_hash(first)
    compiling.note_schema_key(first, key)
    compiling.note_schema_key(second, key)
    assert compiling.compile_unless_proven(first, {"city": "Paris"}) is None  # not compiled yet
    compiled = compile_schema(first, key)
    assert compiling.compile_unless_proven(second, {"city": "Paris"}) is compiled


def test_the_schemas_read_unseen_are_bounded_and_forgotten(monkeypatch):
    monkeypatch.setattr(compiling, "SEEN_SIZE", 4)
    schemas = [tool(n) for n in range(9)]
    for schema in schemas:
        assert compiling.compile_unless_proven(schema, {"city": "Paris", "n": 10}) is None
        assert len(compiling._SEEN) <= 4
    assert id(schemas[-1]) in compiling._SEEN  # the newest are kept
    compiling.clear_caches()
    assert not compiling._SEEN
