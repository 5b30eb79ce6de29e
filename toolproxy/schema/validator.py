"""Which schema a tool call is checked against, and whether its arguments satisfy it.

The issue's rule: a call is validated against the MCP server's real schema when one is
known for that tool, otherwise against the schema the agent sent; each result says which
(`source`). `resolve_schema` picks the schema, `check_call` validates; both are pure and
never raise on bad input (unparseable arguments and invalid schemas are results).

Validation follows JSON Schema Draft 2020-12 unless the schema's `$schema` names another
draft; `format` is checked. Validators are compiled once per schema (by object identity,
then by `schema_hash`), so checking many calls against a few schemas stays cheap.
`cmd_mcp_check` is the thin `toolproxy mcp check` adapter over the capture.

Stable strings (`ResolvedSchema.source`):
    mcp_server  the real inputSchema of the MCP server tool `match_tool` mapped the name to
    offered     the parameters schema the agent sent with the request that got the call
    none        neither is known: only JSON parsing is checked
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from typing import Any, Literal, Protocol

import jsonschema
from jsonschema.exceptions import relevance
from pydantic import BaseModel, Field

from toolproxy.records import ToolCall, schema_hash
from toolproxy.schema.quick import Accept, compile_quick
from toolproxy.schema.quickerrors import iter_errors as quick_errors
from toolproxy.util.jsonfast import plain_json
from toolproxy.wire.common import parse_arguments
from toolproxy.wire.toolnames import match_tool

SchemaSource = Literal["mcp_server", "offered", "none"]
CACHE_SIZE = 4096
MAX_ERRORS = 50
MAX_MESSAGE = 500


class OfferedLike(Protocol):
    """What resolution needs of an offered tool (`records.ToolOffered` fits)."""

    @property
    def name(self) -> str: ...

    @property
    def parameters(self) -> Any: ...


@dataclass(frozen=True)
class ResolvedSchema:
    """The schema a call is checked against, and where it came from."""

    schema: Any  # the JSON Schema (None when source is "none")
    source: SchemaSource
    server: str | None = None  # MCP server name, for source "mcp_server"
    tool: str | None = None  # server tool name, or the offered tool's name


class SchemaViolation(BaseModel):
    """One way the arguments fail the schema."""

    path: str = Field(description="JSON path into the arguments, e.g. $.filters.since")
    message: str = Field(description="jsonschema's message (cut at 500 characters)")
    validator: str = Field(description="the failing keyword: required, type, enum, ...")


class SchemaCheck(BaseModel):
    """The outcome of checking one call's arguments against one schema."""

    valid: bool = Field(description="arguments parsed and satisfied the schema")
    parse_error: str | None = Field(default=None, description="why arguments are not JSON")
    schema_error: str | None = Field(
        default=None, description="why the schema itself could not be used"
    )
    errors: list[SchemaViolation] = Field(
        default_factory=list, description="violations, most relevant first (at most 50)"
    )


def resolve_schema(
    call_name: str | None,
    offered: Sequence[OfferedLike],
    server_tools: Sequence[tuple[str, str, Any]],
) -> ResolvedSchema:
    """The schema for a call named `call_name`: the real one, else the offered one, else none.

    `server_tools` are (server, tool, input_schema); the model-facing name is mapped to a
    server tool with `toolnames.match_tool`, so prefixed names (`mcp__git__git_status`)
    find their server. `offered` is the tools block of the request that got the call.
    """
    if call_name is None:
        return ResolvedSchema(None, "none")
    if server_tools:
        schemas = {(server, tool): schema for server, tool, schema in server_tools}
        hit = match_tool(call_name, schemas)
        if hit is not None:
            return ResolvedSchema(schemas[hit], "mcp_server", hit[0], hit[1])
    for tool in offered:
        if tool.name == call_name:
            return ResolvedSchema(tool.parameters, "offered", None, tool.name)
    return ResolvedSchema(None, "none", None, None)


class CompiledSchema:
    """A schema ready to validate with: a quick accept (`schema.quick`), its jsonschema
    validator (built on first use), or why there is none (`error`)."""

    __slots__ = ("key", "error", "quick", "schema", "formats", "_validator")

    def __init__(
        self,
        key: str,
        validator: Any | None,
        error: str | None,
        *,
        quick: Accept | None = None,
        schema: Any = None,
        formats: jsonschema.FormatChecker | None = None,
    ) -> None:
        self.key = key
        self.error = error
        self.quick = quick  # schema.quick's accept; with it, schema and formats are set
        self.schema = schema
        self.formats = formats
        self._validator = validator

    @property
    def validator(self) -> Any | None:
        """The jsonschema validator instance (None when the schema is unusable); for a
        quick-path schema it is built on first use, without `check_schema`."""
        if self._validator is None and self.quick is not None:
            cls = jsonschema.Draft202012Validator
            self._validator = cls(self.schema, format_checker=self.formats)
        return self._validator

    @property
    def usable(self) -> bool:
        """Can the schema be checked at all? Asked without building the validator (a
        quick-path schema's is built only when `quickerrors` cannot word the errors)."""
        return self.quick is not None or self._validator is not None

    def iter_errors(self, value: Any) -> Iterator[jsonschema.ValidationError]:
        """jsonschema's errors for `value` (from `quickerrors` when the schema and value
        allow it: the same errors, found faster). Needs a usable schema."""
        if self.quick is not None and self.formats is not None and plain_json(value):
            return quick_errors(self.schema, value, self.formats)
        return self.validator.iter_errors(value)  # type: ignore[union-attr]

    def accepts(self, value: Any) -> bool:
        """True only when `value` is certainly valid (the quick path proved it); False
        means "ask the validator"."""
        quick = self.quick
        if quick is None:
            return False
        try:
            return quick(value)
        except Exception:  # noqa: BLE001 - e.g. a format checker that raises: ask jsonschema
            return False


_BY_KEY: OrderedDict[str, CompiledSchema] = OrderedDict()
# id(schema) -> (schema, compiled); holding the schema keeps its id from being reused.
_BY_ID: OrderedDict[int, tuple[Any, CompiledSchema]] = OrderedDict()
_FORMATS: dict[type, jsonschema.FormatChecker] = {}
_DATE_TIME = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:[Zz]|([+-])(\d\d):(\d\d))$",
    re.ASCII,
)
_TIME = re.compile(r"^(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:[Zz]|([+-])(\d\d):(\d\d))$", re.ASCII)


def is_date_time(value: object) -> bool:
    """RFC 3339 date-time (jsonschema checks it only with an optional package installed)."""
    if not isinstance(value, str):
        return True
    m = _DATE_TIME.match(value)
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        # second 60 is a leap second, allowed by RFC 3339
        datetime(year, month, day, hour, minute, min(second, 59), tzinfo=UTC)
    except ValueError:
        return False
    offset_ok = m[7] is None or (int(m[8]) < 24 and int(m[9]) < 60)
    return second <= 60 and offset_ok


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


def _format_checker(cls: type) -> jsonschema.FormatChecker:
    checker = _FORMATS.get(cls)
    if checker is None:
        checker = jsonschema.FormatChecker(())
        checker.checkers = dict(cls.FORMAT_CHECKER.checkers)  # type: ignore[attr-defined]
        if "date-time" not in checker.checkers:
            checker.checks("date-time")(is_date_time)
        if "time" not in checker.checkers:
            checker.checks("time")(is_time)
        _FORMATS[cls] = checker
    return checker


CHECKER = f"jsonschema {metadata.version('jsonschema')}"
# schema_hash -> None (valid against its metaschema) or why it is unusable: verdicts a
# capture stored (`remember_verdicts`), and those reached here since (`new_verdicts`).
_VERDICTS: dict[str, str | None] = {}
_NEW: dict[str, str | None] = {}


def remember_verdicts(verdicts: Mapping[str, str | None]) -> None:
    """Metaschema verdicts already known (schema_hash -> None or the error), so compiling
    those schemas skips `check_schema` (about 2 ms a schema)."""
    _VERDICTS.update(verdicts)


def new_verdicts() -> dict[str, str | None]:
    """The verdicts `check_schema` reached since the last call (to store them)."""
    found = dict(_NEW)
    _NEW.clear()
    return found


def _compile(schema: Any, key: str) -> CompiledSchema:
    if not isinstance(schema, dict | bool):
        return CompiledSchema(key, None, f"schema is {type(schema).__name__}, not an object")
    known = key in _VERDICTS
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        formats = _format_checker(cls)
        if cls is jsonschema.Draft202012Validator:
            quick = compile_quick(schema, formats.conforms)
            if quick is not None:  # valid against the metaschema by construction
                return CompiledSchema(key, None, None, quick=quick, schema=schema, formats=formats)
        if known and _VERDICTS[key] is not None:
            return CompiledSchema(key, None, _VERDICTS[key])
        if not known:
            cls.check_schema(schema)
        compiled = CompiledSchema(key, cls(schema, format_checker=formats), None)
    except jsonschema.SchemaError as exc:
        compiled = CompiledSchema(key, None, _cut(f"invalid schema: {exc.message}"))
    except Exception as exc:  # noqa: BLE001 - any schema jsonschema chokes on is a result
        error = f"unusable schema: {type(exc).__name__}: {exc}"
        compiled = CompiledSchema(key, None, _cut(error))
    if not known and not key.startswith("id:"):
        _NEW[key] = _VERDICTS[key] = compiled.error
    return compiled


_room = 0  # `cache_room`: how many compiled schemas a run in progress needs kept


def _remember(cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    cache[key] = value
    _trim(cache)


def _trim(cache: OrderedDict[Any, Any]) -> None:
    limit = max(CACHE_SIZE, _room)
    while len(cache) > limit:
        cache.popitem(last=False)


@contextmanager
def cache_room(schemas: int) -> Iterator[None]:
    """Room for `schemas` compiled schemas meanwhile, beyond `CACHE_SIZE` (a run over more
    compiled each again after its eviction: 51,728 compiles for 36,907 schemas)."""
    global _room
    before = _room
    _room = max(before, schemas)
    try:
        yield
    finally:
        _room = before
        _trim(_BY_KEY)
        _trim(_BY_ID)


# id(schema) -> (schema, its schema_hash) for schemas whose hash the capture already holds
_KEYS: OrderedDict[int, tuple[Any, str]] = OrderedDict()
KEYS_SIZE = 1 << 17


def clear_caches() -> None:
    """Forget every compiled schema, noted key and verdict (what a fresh process knows)."""
    _BY_KEY.clear()
    _BY_ID.clear()
    _KEYS.clear()
    _VERDICTS.clear()
    _NEW.clear()


def note_schema_key(schema: Any, key: str) -> None:
    """Remember `schema`'s schema_hash (as the capture recorded it), so compiling it later
    skips hashing it."""
    _KEYS[id(schema)] = (schema, key)
    while len(_KEYS) > KEYS_SIZE:
        _KEYS.popitem(last=False)


def compile_schema(schema: Any, key: str | None = None) -> CompiledSchema:
    """The cached validator for `schema` (`key`: its schema_hash, when the caller has it).

    Schemas are treated as immutable once seen: mutate a copy, not a checked schema.
    """
    hit = _BY_ID.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    noted = _KEYS.get(id(schema)) if key is None else None
    if noted is not None and noted[0] is schema:
        key = noted[1]
    if key is None:
        try:
            key = schema_hash(schema)
        except (TypeError, ValueError):  # not JSON-serialisable: cannot be a schema
            key = f"id:{id(schema)}"
    compiled = _BY_KEY.get(key)
    if compiled is None:
        compiled = _compile(schema, key)
        _remember(_BY_KEY, key, compiled)
    _remember(_BY_ID, id(schema), (schema, compiled))
    return compiled


def _cut(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def _keyword(error: jsonschema.ValidationError) -> str:
    # a `false` schema fails with no keyword
    return "false" if error.validator is None else str(error.validator)


def check_value(arguments: Any, schema: Any, key: str | None = None) -> SchemaCheck:
    """Validate already-parsed arguments against `schema` (None: nothing to check)."""
    if schema is None:
        return SchemaCheck(valid=True)
    compiled = schema if isinstance(schema, CompiledSchema) else compile_schema(schema, key)
    if compiled.accepts(arguments):
        return SchemaCheck(valid=True)
    if not compiled.usable:
        return SchemaCheck(valid=False, schema_error=compiled.error)
    try:
        found = sorted(compiled.iter_errors(arguments), key=lambda e: (e.json_path, _keyword(e)))
        if len(found) > 1:  # jsonschema's best match first, the rest in path order
            best = max(found, key=relevance)
            found.remove(best)
            found.insert(0, best)
        errors = [
            SchemaViolation(path=e.json_path, message=_cut(e.message), validator=_keyword(e))
            for e in found[:MAX_ERRORS]
        ]
    except Exception as exc:  # noqa: BLE001 - e.g. an unresolvable $ref surfaces only here
        return SchemaCheck(
            valid=False, schema_error=_cut(f"unusable schema: {type(exc).__name__}: {exc}")
        )
    return SchemaCheck(valid=not errors, errors=errors)


def check_call(arguments_raw: str, schema: Any, key: str | None = None) -> SchemaCheck:
    """Parse a call's argument text (strict JSON) and validate it against `schema`.

    `schema` may be a JSON Schema, a `CompiledSchema`, or None (only parsing is checked);
    `key` is its schema_hash if known, which saves hashing it on a cache miss.
    """
    arguments, error = parse_arguments(arguments_raw)
    if error is not None:
        return SchemaCheck(valid=False, parse_error=error)
    return check_value(arguments, schema, key)


def check_tool_call(call: ToolCall, schema: Any, key: str | None = None) -> SchemaCheck:
    """Validate a recorded call, trusting the wire parser's reading of its arguments.

    Prefer this over `check_call` for recorded calls: an Anthropic stream's argument-less
    call has arguments_raw "" but arguments {} (the API's own reading), not a parse error.
    """
    if call.parse_error is not None:
        return SchemaCheck(valid=False, parse_error=call.parse_error)
    if call.arguments is None:
        return check_call(call.arguments_raw, schema, key)
    return check_value(call.arguments, schema, key)
