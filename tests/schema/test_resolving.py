"""Which schema a call is checked against: the real one beats the offered one."""

from __future__ import annotations

from toolproxy.records import ToolOffered
from toolproxy.schema.resolving import ResolvedSchema, offered_schema, resolve_schema

REAL = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
    "required": ["city", "unit"],
}
SENT = {"type": "object", "properties": {"city": {"type": "string"}}}


def offered(name: str, parameters: object = SENT) -> ToolOffered:
    return ToolOffered(position=0, name=name, parameters=parameters, schema_hash="h")


def test_the_real_schema_beats_the_offered_one():
    got = resolve_schema("get_weather", [offered("get_weather")], [("wx", "get_weather", REAL)])
    assert got == ResolvedSchema(REAL, "mcp_server", "wx", "get_weather")


def test_prefixed_names_find_their_server_tool():
    servers = [("wx", "get_weather", REAL), ("other", "get_weather", SENT)]
    got = resolve_schema("mcp__wx__get_weather", [offered("mcp__wx__get_weather")], servers)
    assert (got.source, got.server, got.tool, got.schema) == (
        "mcp_server",
        "wx",
        "get_weather",
        REAL,
    )


def test_offered_schema_when_no_server_has_the_tool():
    tools = [offered("other", {"type": "object"}), offered("local_tool")]
    got = resolve_schema("local_tool", tools, [("wx", "get_weather", REAL)])
    assert got == ResolvedSchema(SENT, "offered", None, "local_tool")


def test_ambiguous_server_names_fall_back_to_the_offered_schema():
    servers = [("a", "search", REAL), ("b", "search", REAL)]
    assert resolve_schema("search", [offered("search")], servers).source == "offered"


def test_no_schema_at_all():
    assert resolve_schema("nope", [offered("x")], []) == ResolvedSchema(None, "none")
    assert resolve_schema(None, [offered("x")], [("s", "x", REAL)]).source == "none"


def test_a_resolved_schema_compares_by_value():
    got = ResolvedSchema(REAL, "offered", tool="t")
    assert got == ResolvedSchema(REAL, "offered", None, "t") and got.server is None
    assert got != ResolvedSchema(SENT, "offered", None, "t")


def test_the_offered_pair_is_what_resolving_a_name_gives():
    tools = {"get": SENT, "bare": None}  # `bare` was offered without a parameters schema
    assert offered_schema("get", tools) == (SENT, "offered")
    assert offered_schema("bare", tools) == (None, "offered")
    assert offered_schema("other", tools) == (None, "none")
    assert offered_schema(None, tools) == (None, "none")
    for name in ("get", "bare", "other", None):
        got = resolve_schema(name, tools, [])
        assert (got.schema, got.source) == offered_schema(name, tools)
        assert got.tool == (name if got.source == "offered" else None)
