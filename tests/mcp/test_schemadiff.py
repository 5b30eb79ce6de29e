"""Every kind of difference between a server's tool definition and an agent's copy."""

from __future__ import annotations

import copy

from toolproxy.mcp.schemadiff import (
    Change,
    diff_schemas,
    diff_tool,
    inline_refs,
    types_of,
)

REAL = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "days": {"type": "integer", "minimum": 1},
        "filters": {
            "type": "object",
            "properties": {
                "since": {"type": "string", "format": "date-time", "description": "From"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["since"],
        },
    },
    "required": ["city"],
}


def kinds(changes: list[Change]) -> list[tuple[str, str]]:
    return [(c.kind, c.path) for c in changes]


def edited(edit) -> dict:
    schema = copy.deepcopy(REAL)
    edit(schema)
    return schema


def test_identical_schemas_have_no_changes():
    assert diff_tool("d", REAL, "d", copy.deepcopy(REAL)) == []
    # key order and titles do not matter
    titled = edited(lambda s: s["properties"]["city"].update(title="City"))
    assert diff_schemas(REAL, dict(reversed(list(titled.items())))) == []


def test_parameters_added_and_removed():
    copy_ = edited(lambda s: s["properties"].update(country=s["properties"].pop("city")))
    copy_["required"] = ["country"]
    assert diff_schemas(REAL, copy_) == [
        Change(kind="param_removed", path="city", server=REAL["properties"]["city"]),
        Change(kind="param_added", path="country", offered=REAL["properties"]["city"]),
    ]


def test_type_changed():
    copy_ = edited(lambda s: s["properties"]["days"].update(type="string"))
    assert diff_schemas(REAL, copy_) == [
        Change(kind="type_changed", path="days", server=["integer"], offered=["string"])
    ]
    # a type list compares as a set; a dropped type is a change to "none stated"
    assert diff_schemas({"type": ["string", "null"]}, {"type": ["null", "string"]}) == []
    assert diff_schemas({"type": "string"}, {}) == [
        Change(kind="type_changed", path="", server=["string"], offered=None)
    ]


def test_required_changed_both_ways():
    copy_ = edited(lambda s: s.update(required=["days"]))
    assert diff_schemas(REAL, copy_) == [
        Change(kind="required_changed", path="city", server=True, offered=False),
        Change(kind="required_changed", path="days", server=False, offered=True),
    ]
    # required names without a property entry still count
    assert kinds(diff_schemas({"required": ["x"]}, {})) == [("required_changed", "x")]


def test_enum_changed_narrowed_added_dropped():
    narrowed = edited(lambda s: s["properties"]["unit"].update(enum=["celsius"]))
    assert diff_schemas(REAL, narrowed) == [
        Change(
            kind="enum_changed",
            path="unit",
            server=["celsius", "fahrenheit"],
            offered=["celsius"],
        )
    ]
    reordered = edited(lambda s: s["properties"]["unit"].update(enum=["fahrenheit", "celsius"]))
    assert diff_schemas(REAL, reordered) == []
    added = edited(lambda s: s["properties"]["city"].update(enum=["Paris"]))
    assert diff_schemas(REAL, added)[0].model_dump() == {
        "kind": "enum_changed",
        "path": "city",
        "keyword": None,
        "server": None,
        "offered": ["Paris"],
    }
    # const is a one-value enum
    assert diff_schemas({"const": "a"}, {"enum": ["a"]}) == []


def test_descriptions_of_tool_and_parameters():
    copy_ = edited(lambda s: s["properties"]["city"].pop("description"))
    assert diff_tool("Weather now", REAL, "Weather", copy_) == [
        Change(kind="description_changed", path="", server="Weather now", offered="Weather"),
        Change(kind="description_changed", path="city", server="City name", offered=None),
    ]
    assert diff_tool("", {}, None, {}) == []  # empty and absent descriptions are the same


def test_nested_objects_by_json_path():
    def edit(s: dict) -> None:
        f = s["properties"]["filters"]
        f["properties"]["since"].pop("format")
        f["properties"]["since"]["description"] = "Start"
        f["properties"]["tags"]["items"]["type"] = "integer"
        f["properties"]["until"] = {"type": "string"}
        f["required"] = []

    assert [(c.kind, c.path, c.keyword) for c in diff_schemas(REAL, edited(edit))] == [
        ("required_changed", "filters.since", None),
        ("description_changed", "filters.since", None),
        ("keyword_changed", "filters.since", "format"),
        ("type_changed", "filters.tags[]", None),
        ("param_added", "filters.until", None),
    ]


def test_other_keywords():
    def edit(s: dict) -> None:
        s["properties"]["days"]["minimum"] = 0
        s["properties"]["unit"].pop("default")
        s["additionalProperties"] = False
        s["properties"]["filters"]["properties"]["tags"]["items"] = True

    assert [(c.path, c.keyword, c.server, c.offered) for c in diff_schemas(REAL, edited(edit))] == [
        ("", "additionalProperties", None, False),
        ("days", "minimum", 1, 0),
        ("filters.tags", "items", {"type": "string"}, True),
        ("unit", "default", "celsius", None),
    ]
    # the root schema's own description is a keyword; the tool's is description_changed
    assert [c.keyword for c in diff_schemas({"description": "a"}, {})] == ["description"]


def test_refs_are_inlined_before_diffing():
    with_refs = {
        "type": "object",
        "properties": {
            "city": {"$ref": "#/$defs/City"},
            "unit": {"$ref": "#/definitions/Unit", "default": "celsius"},
            "days": {"type": "integer", "minimum": 1},
            "filters": {"$ref": "#/$defs/Filters"},
        },
        "required": ["city"],
        "$defs": {
            "City": {"type": "string", "description": "City name"},
            "Filters": REAL["properties"]["filters"],
        },
        "definitions": {"Unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    }
    assert diff_tool("d", REAL, "d", with_refs) == []
    changed = copy.deepcopy(with_refs)
    changed["$defs"]["Filters"] = {"type": "object", "properties": {}}
    assert kinds(diff_tool("d", REAL, "d", changed)) == [
        ("param_removed", "filters.since"),
        ("param_removed", "filters.tags"),
    ]


def test_recursive_remote_and_dangling_refs_stay_put():
    tree = {
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        "$ref": "#/$defs/Node",
    }
    inlined = inline_refs(tree)
    assert inlined["properties"]["next"] == {"$ref": "#/$defs/Node"}
    assert inline_refs({"$ref": "#"}) == {"$ref": "#"}
    assert inline_refs({"a": {"$ref": "https://x/y.json"}}) == {"a": {"$ref": "https://x/y.json"}}
    assert inline_refs({"a": {"$ref": "#/nope/x"}, "b": [{"$ref": "#/a"}]}) == {
        "a": {"$ref": "#/nope/x"},
        "b": [{"$ref": "#/nope/x"}],
    }
    assert inline_refs({"l": [{"t": 1}], "r": {"$ref": "#/l/0"}})["r"] == {"t": 1}
    assert inline_refs({"d": {"a/b": {"t": 1}}, "r": {"$ref": "#/d/a~1b"}})["r"] == {"t": 1}


def test_exponential_ref_graphs_are_bounded():
    def node(i: int) -> dict:
        ref = {"$ref": f"#/$defs/D{i + 1}"}
        return {"properties": {"a": ref, "b": ref}}

    defs = {f"D{i}": node(i) for i in range(30)}
    defs["D30"] = {"type": "string"}
    inlined = inline_refs({"$defs": defs, "$ref": "#/$defs/D0"}, budget=100)
    assert len(str(inlined)) < 1_000_000  # 2**30 copies otherwise


def test_optional_unions_compare_as_their_branch_plus_null():
    optional = {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}], "default": None}
    assert diff_schemas({"type": "string", "format": "date"}, optional) == [
        Change(kind="type_changed", path="", server=["string"], offered=["null", "string"]),
        Change(kind="keyword_changed", path="", keyword="default", offered=None),
    ]
    assert types_of({"oneOf": [{"type": "integer"}, {"type": "string"}]}) == ["integer", "string"]
    assert types_of({"anyOf": [{"type": "integer"}, {"minimum": 1}]}) is None


def test_other_unions_compare_whole():
    a = {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "integer"}]}
    b = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert [(c.kind, c.keyword) for c in diff_schemas(a, b)] == [("keyword_changed", "anyOf")]
    # different types already say it; no second change for the union itself
    assert kinds(diff_schemas(a, {"anyOf": [{"type": "string"}]})) == [("type_changed", "")]


def test_non_object_schemas_do_not_crash():
    assert kinds(diff_schemas(True, {"type": "object"})) == [("type_changed", "")]
    assert diff_schemas(None, None) == []
    assert diff_schemas({"properties": []}, {"properties": None}) == []
