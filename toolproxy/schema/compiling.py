"""A tool schema compiled once: `compile_schema` (the grader's hot path, compiled by mypyc
with the grading core; `schema.resolving` picks the schema a call is checked against).

`compile_schema` compiles a schema once (by object
identity, then by `schema_hash`, or by its text when the caller has no hash: orjson's
sorted bytes (`jsonfast.sorted_bytes`), else the canonical text; the hash is made only for a
schema outside the quick path) into a `CompiledSchema`:
`schema.quick`'s accept when the schema is in its subset, else a jsonschema validator
(Draft 2020-12 unless the schema's `$schema` names another draft; `format` is checked), or
why the schema is unusable. Verdicts of the metaschema check are remembered per schema hash
(`remember_verdicts`). The grader asks `compile_unless_proven`: a schema object met the
first times is read as it stands with the call's arguments (`schema.glance`), and compiled
only when that does not prove them valid or the object keeps coming. Format checks are
`schema.formats`'. Pure; nothing here raises on a bad schema. `schema.validator` words the
errors.
"""

from __future__ import annotations

import atexit
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

import jsonschema

from toolproxy.records import text_schema_hash
from toolproxy.schema.accepts import Accept, never
from toolproxy.schema.formats import conforms_of, format_checker
from toolproxy.schema.glance import fits, forget, glance, remember
from toolproxy.schema.quick import Parts, compile_quick
from toolproxy.schema.quickerrors import iter_errors as quick_errors
from toolproxy.util.jsonfast import canonical_dumps, plain_json, sorted_bytes

CACHE_SIZE = 4096
TEXT_KEY: Final = "text:"  # the cache's key for a schema by its canonical text, not hash
MAX_MESSAGE = 500


class CompiledSchema:
    """A schema ready to validate with: a quick accept (`schema.quick`), its jsonschema
    validator (built on first use), or why there is none (`error`). `key`: the schema
    hash, when it was given or needed (a quick schema compiled from its text has None)."""

    __slots__ = ("key", "error", "quick", "schema", "formats", "parts", "_validator")

    def __init__(
        self,
        key: str | None,
        validator: Any | None,
        error: str | None,
        *,
        quick: Accept | None = None,
        schema: Any = None,
        formats: jsonschema.FormatChecker | None = None,
        parts: Parts | None = None,
    ) -> None:
        self.key = key
        self.error = error
        self.quick = quick  # schema.quick's accept; with it, formats is set
        self.schema = schema  # the schema compiled (the first of its text)
        self.formats = formats
        self.parts: Parts = {} if parts is None else parts  # subschemas' accepts
        self._validator = validator

    @property
    def validator(self) -> Any | None:
        """The jsonschema validator instance (None when the schema is unusable); for a
        quick-path schema it is built on first use, without `check_schema`."""
        if self._validator is None and self.quick is not None:
            cls = _LATEST
            self._validator = cls(self.schema, format_checker=self.formats)
        return self._validator

    @property
    def usable(self) -> bool:
        """Can the schema be checked at all? Asked without building the validator (a
        quick-path schema's is built only when `quickerrors` cannot word the errors)."""
        return self.quick is not None or self._validator is not None

    def iter_errors(self, value: Any) -> Iterator[Any]:
        """jsonschema's errors for `value`: `quickerrors.QuickError`s when the schema and
        value allow it (the same fields, found faster), else `ValidationError`s. Needs a
        usable schema."""
        if self.quick is not None and self.formats is not None and plain_json(value):
            return quick_errors(self.schema, value, self.formats, self.parts)
        return self.validator.iter_errors(value)  # type: ignore[union-attr]

    def accepts(self, value: Any) -> bool:
        """True only when `value` is certainly valid (the quick path proved it); False
        means "ask the validator"."""
        quick = self.quick
        if quick is None:
            return False
        try:
            return quick.ok(value)
        except Exception:  # noqa: BLE001 - e.g. a format checker that raises: ask jsonschema
            return False


_LATEST: Final = jsonschema.Draft202012Validator  # the draft of a schema that names none
# The caches are plain dicts, oldest first (a read does not move an entry): setting an
# OrderedDict's item cost 1,800 instructions where a dict's costs 1,000.
_BY_KEY: Final[dict[str | bytes, CompiledSchema]] = {}
# id(schema) -> (schema, compiled); holding the schema keeps its id from being reused.
_BY_ID: Final[dict[int, tuple[Any, CompiledSchema]]] = {}
# schema_hash -> None (valid against its metaschema) or why it is unusable: verdicts a
# capture stored (`remember_verdicts`), and those reached here since (`new_verdicts`).
_VERDICTS: Final[dict[str, str | None]] = {}
_NEW: Final[dict[str, str | None]] = {}


def remember_verdicts(verdicts: Mapping[str, str | None]) -> None:
    """Metaschema verdicts already known (schema_hash -> None or the error), so compiling
    those schemas skips `check_schema` (about 2 ms a schema)."""
    _VERDICTS.update(verdicts)


def new_verdicts() -> dict[str, str | None]:
    """The verdicts `check_schema` reached since the last call (to store them)."""
    found = dict(_NEW)
    _NEW.clear()
    return found


def _draft(schema: dict[str, Any] | bool) -> Any:
    """The validator class of `schema`'s draft: Draft 2020-12 unless its `$schema` names
    another (read as `validator_for` reads it)."""
    if type(schema) is not bool and "$schema" in schema:
        return jsonschema.validators.validator_for(schema, default=_LATEST)
    return _LATEST


def _quick(schema: Any, key: str | None) -> CompiledSchema | None:
    """`schema` on the quick path (valid against the metaschema by construction, so it
    needs no verdict and no hash: `key` may be None), or None for `_compile`."""
    if not (isinstance(schema, dict) or isinstance(schema, bool)):  # no Union built per call
        return None
    try:
        cls = _draft(schema)
        if cls is not _LATEST:
            return None
        formats = format_checker(cls)
        parts: Parts = {}
        quick = compile_quick(schema, conforms_of(cls), parts)
    except Exception:  # noqa: BLE001 - `_compile` meets it again and words it
        return None
    if quick is None:
        return None
    return CompiledSchema(key, None, None, quick=quick, schema=schema, formats=formats, parts=parts)


def _compile(schema: Any, key: str) -> CompiledSchema:
    """`schema` outside the quick path: jsonschema's validator (its metaschema verdict
    remembered by `key`, the schema hash), or why it is unusable."""
    if not (isinstance(schema, dict) or isinstance(schema, bool)):  # no Union built per call
        return CompiledSchema(key, None, f"schema is {type(schema).__name__}, not an object")
    known = key in _VERDICTS
    try:
        cls = _draft(schema)
        formats = format_checker(cls)
        if known and _VERDICTS[key] is not None:
            return CompiledSchema(key, None, _VERDICTS[key])
        if not known:
            cls.check_schema(schema)
        compiled = CompiledSchema(key, cls(schema, format_checker=formats), None)
    except jsonschema.SchemaError as exc:
        compiled = CompiledSchema(key, None, cut_message(f"invalid schema: {exc.message}"))
    except Exception as exc:  # noqa: BLE001 - any schema jsonschema chokes on is a result
        error = f"unusable schema: {type(exc).__name__}: {exc}"
        compiled = CompiledSchema(key, None, cut_message(error))
    if not known and not key.startswith("id:"):
        _NEW[key] = _VERDICTS[key] = compiled.error
    return compiled


_room = 0  # `cache_room`: how many compiled schemas a run in progress needs kept


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    cache[key] = value
    if len(cache) > CACHE_SIZE:  # the room of a run is asked only beyond the usual size
        _trim(cache, max(CACHE_SIZE, _room))


def _trim(cache: dict[Any, Any], limit: int) -> None:
    """At most `limit` entries, the newest: beyond it, the oldest go in one batch, down to
    three quarters of it (a dict emptied from its front one entry at a time scans the
    entries deleted before it at each step)."""
    if len(cache) > limit:
        kept = list(cache.items())[len(cache) - limit * 3 // 4 :]
        cache.clear()
        cache.update(kept)


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
        _trim(_BY_KEY, max(CACHE_SIZE, before))
        _trim(_BY_ID, max(CACHE_SIZE, before))


# id(schema) -> (schema, its schema_hash) for schemas whose hash the capture already holds
_KEYS: Final[dict[int, tuple[Any, str]]] = {}
KEYS_SIZE = 1 << 17


# id(schema) -> (schema, how many times): objects `compile_unless_proven` proved values
# valid against without compiling them (holding each keeps its id from being reused)
_SEEN: Final[dict[int, tuple[Any, int]]] = {}
SEEN_SIZE = 1 << 16
# Sightings of one schema object read as it stands before it is compiled: on BFCL's tool
# schemas a compile and its cache key cost ~31,000 instructions, a glance ~7,500, a
# compiled check ~2,700, so compiling pays once an object was read about six times
# (31,000 / (7,500 - 2,700); the rent-or-buy rule: at most twice the better choice's cost).
GLANCES: Final = 6


def clear_caches() -> None:
    """Forget every compiled schema, noted key and verdict (what a fresh process knows)."""
    _BY_KEY.clear()
    _BY_ID.clear()
    _KEYS.clear()
    _SEEN.clear()
    _VERDICTS.clear()
    _NEW.clear()
    forget()


# At exit, before the interpreter's teardown: it collects several times, and each walks
# every cached schema (a 90,818-case `grade -j1`: 1.4 s after the command, 0.2 s without).
atexit.register(clear_caches)


def note_schema_key(schema: Any, key: str) -> None:
    """Remember `schema`'s schema_hash (as the capture recorded it), so compiling it later
    skips hashing it."""
    _KEYS[id(schema)] = (schema, key)
    _trim(_KEYS, KEYS_SIZE)


def compile_unless_proven(schema: Any, value: Any) -> CompiledSchema | None:
    """`schema` compiled, or None when `value` was proven valid against it without
    compiling it: a schema object met here at most GLANCES times, and not compiled under its
    noted hash already (then compiling it is a lookup), is read as it stands (`glance`),
    which costs less than its cache key and compile. When the value is not valid and the
    schema is in the quick path's subset (`fits`), the schema comes back uncompiled, to
    word the errors (`_unkept`). Met more often, or outside the subset, it is compiled
    (`compile_schema`), and checks after that cost a lookup and its accept."""
    sid: Any = id(schema)  # boxed once (an int typed so is boxed anew for each dict it keys)
    hit = _BY_ID.get(sid)
    if hit is not None and hit[0] is schema:
        return hit[1]
    key = _noted_key(schema, sid)
    if key is not None and key in _BY_KEY:
        return _compile_missed(schema, key)  # compiled under its noted hash: a lookup
    seen = _SEEN.get(sid)
    times = 0 if seen is None or seen[0] is not schema else seen[1]
    if times >= GLANCES:
        return _compile_missed(schema, key)
    if glance(schema, value):
        found = None
    elif fits(schema):  # in the quick path's subset, the value not valid: its errors
        found = _unkept(schema)  # need no compile
    else:
        return _compile_missed(schema, key)
    _SEEN[sid] = (schema, times + 1)
    _trim(_SEEN, SEEN_SIZE)
    return found


def _unkept(schema: Any) -> CompiledSchema:
    """`schema`, which `glance.fits`, ready to word a value's errors without compiling it:
    its accept proves nothing (`never`), so every value goes to `quickerrors`, which walks
    it whole (no subschema's accept to pass over). Not cached: met again, it is glanced at
    or compiled."""
    return CompiledSchema(
        None, None, None, quick=never, schema=schema, formats=format_checker(_LATEST)
    )


def compile_schema(schema: Any, key: str | None = None) -> CompiledSchema:
    """The cached validator for `schema` (`key`: its schema_hash, when the caller has it).

    Schemas are treated as immutable once seen: mutate a copy, not a checked schema.
    """
    hit = _BY_ID.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    return _compile_missed(schema, _noted_key(schema, id(schema)) if key is None else key)


def _noted_key(schema: Any, sid: Any) -> str | None:
    """The schema_hash `note_schema_key` noted for this schema object (`sid`: its id), if
    any."""
    noted = _KEYS.get(sid)
    return noted[1] if noted is not None and noted[0] is schema else None


def _compile_missed(schema: Any, key: str | None) -> CompiledSchema:
    """`compile_schema` past its lookup by identity, which missed (`key`: the schema_hash
    given or noted, if any)."""
    # by its hash when the caller has it, else by its text itself: a dict hashes the text
    # faster than SHA-256 does, and a quick schema never needs its hash. orjson's bytes
    # (`sorted_bytes`) stand for the text, written without walking the schema first; a hit
    # by them is compared with the schema compiled (NaN and null are both written null).
    # The canonical text when orjson refuses the schema.
    text = ""  # the canonical text, when made
    as_bytes: bytes | None = None
    cached: str | bytes
    if key is not None:
        cached = key
    else:
        as_bytes = sorted_bytes(schema)
        if as_bytes is not None:
            cached = as_bytes
        else:
            key, text = _text(schema)
            cached = key if key is not None else TEXT_KEY + text
    compiled = _BY_KEY.get(cached)
    if compiled is None:
        compiled = _new(schema, key, text)
        _remember(_BY_KEY, cached, compiled)
    elif as_bytes is not None and compiled.schema != schema:  # the same bytes, another value
        compiled = _new(schema, key, text)  # kept by its identity alone
    _remember(_BY_ID, id(schema), (schema, compiled))
    remember(schema)  # glance reads it from now on as compiled (nativeglance.c)
    return compiled


def _new(schema: Any, key: str | None, text: str) -> CompiledSchema:
    """`schema` compiled (`key`: its hash if known; `text`: its canonical text if made),
    holding the schema it was compiled from."""
    compiled = _quick(schema, key)
    if compiled is None:
        if key is None and not text:  # keyed by its bytes: the text is needed now
            key, text = _text(schema)
        compiled = _compile(schema, key if key is not None else text_schema_hash(text))
        compiled.schema = schema
    return compiled


def _text(schema: Any) -> tuple[str | None, str]:
    """(None, the canonical text schema_hash hashes), or (its identity as its key, ""):
    not JSON, so it cannot be a schema."""
    try:
        return None, canonical_dumps(schema)
    except (TypeError, ValueError):
        return f"id:{id(schema)}", ""


def cut_message(text: str) -> str:
    """`text` cut at MAX_MESSAGE characters (an ellipsis says so)."""
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"
