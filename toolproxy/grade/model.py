"""The grading contract's input: expectation cases and what the model did. Pure, no I/O.

Expectation files (YAML or JSONL, validated by `schemas/expectations.schema.json`) hold
`Case`s. The checker turns (case, `Observation`) into a `grade.grades.CaseGrade`; runs of
grades are stored (`grade.rows`) and the metrics read them back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Self, cast

from mypy_extensions import mypyc_attr

from toolproxy.records import ToolCall

MatcherKind = Literal[
    "exact",  # default: equal by value (nested objects/lists compared by value)
    "any_of",  # equal to one of `values`
    "enum",  # alias of any_of for string enums (kept apart for reports)
    "range",  # number within [min, max] (either bound optional)
    "tolerance",  # number within `tolerance` of `value` (absolute)
    "regex",  # string fully matching `pattern`
    "datetime",  # ISO-8601 timestamps equal as instants (+02:00 vs Z agree)
    "unordered",  # list equal to `value` ignoring order (elements compared by value)
    "text",  # strings equal ignoring case and runs of whitespace
    "judge",  # an LLM judge decides whether the value means `criterion`
    "any",  # any value is accepted (in files `{optional: true}` alone, or `{match: any}`)
    "object",  # an object whose named `fields` each match their own matcher, at any depth
    "list",  # a list whose elements match `items` (in order, or in any `order`)
]


@mypyc_attr(acyclic=True)  # no fields: lets `grades`' records be acyclic (its subclasses here
class Record:  # stay collected as mypyc makes any class)
    """What the grading records share with pydantic models (`model_dump`, `model_copy`,
    `model_validate`). They are slotted dataclasses because a run makes several per case
    and per call: a pydantic model costs 2-3x as much to build (3.0 against 1.0 µs for a
    `Matcher`, 8.2 against 3.6 µs for a case of one call), and cases come from files
    `expectations` has already checked against their JSON Schema. Each writes its own
    `__init__` (`init=False`): mypyc compiles it, where a dataclass's generated one runs as
    Python and sets every field of the native class through a descriptor."""

    __slots__ = ()

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """The fields as a dict, nested records (and pydantic models) as dicts too."""
        names = self.__dataclass_fields__  # type: ignore[attr-defined]
        return {name: _dumped(getattr(self, name), mode) for name in names}

    def model_copy(self, update: dict[str, Any] | None = None) -> Self:
        """A shallow copy with `update` applied, as pydantic's."""
        return record_copy(self, update)

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        """An instance from a dict as `model_dump` wrote it (unknown keys ignored)."""
        return record_from(cls, data, cls._field)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled and copied (`copy.copy`, `copy.deepcopy`) by its fields, rebuilt through
        its `__init__`: compiled, a record's class makes an instance only that way, so the
        default (an instance made empty, then its state set) raised for want of the
        required fields."""
        names = self.__dataclass_fields__  # type: ignore[attr-defined]
        return record_from, (type(self), {name: getattr(self, name) for name in names})

    @classmethod
    def _field(cls, name: str, value: Any) -> Any:
        return value


def record_copy(record: Any, update: dict[str, Any] | None) -> Any:
    """A dataclass record's shallow copy with `update` applied (pydantic's `model_copy`)."""
    return dataclasses.replace(record, **(update or {}))


def record_from(cls: Any, data: Any, convert: Callable[[str, Any], Any] | None = None) -> Any:
    """A dataclass record of `cls` from a dict as `model_dump` wrote it, unknown keys ignored
    (pydantic's `model_validate`); `convert(name, value)` builds a nested value."""
    if isinstance(data, cls):
        return data
    names = cls.__dataclass_fields__
    items = dict(data).items()
    if convert is None:
        return cls(**{k: v for k, v in items if k in names})
    return cls(**{k: convert(k, v) for k, v in items if k in names})


def _dumped(value: Any, mode: str) -> Any:
    if isinstance(value, list):
        return [_dumped(v, mode) for v in value]
    if isinstance(value, dict):
        return {k: _dumped(v, mode) for k, v in value.items()}
    dump = getattr(value, "model_dump", None)  # a record or a pydantic model
    return value if dump is None else dump(mode=mode)


@dataclass(slots=True, kw_only=True, init=False)
class Matcher(Record):
    """How one argument is compared. Any matcher may also be `optional` (may be omitted).

    Built from files by `toolproxy.grade.expectations`, which checks them first (the JSON
    Schema and `casecheck`); code that builds one is held to these types by mypy."""

    kind: MatcherKind = "exact"
    value: Any = None
    values: list[Any] | None = None
    min: float | None = None
    max: float | None = None
    tolerance: float | None = None
    pattern: str | None = None
    criterion: str | None = None  # judge: what the value must mean
    pass_at: float | None = None  # judge: the least score that passes, 1 (default) or 0.5
    # text: what the comparison ignores (None: case, whitespace)
    ignore: list[Literal["case", "whitespace", "punctuation"]] | None = None
    fields: dict[str, Matcher] | None = None  # object: key -> the matcher its value satisfies
    items: list[Matcher] | None = None  # list: one matcher per element
    # list: elements in the items' order (default) or any order
    order: Literal["ordered", "unordered"] | None = None
    # object: keys not in fields are fine (default true); list: elements beyond the items
    # are fine (default false)
    allow_extra: bool | None = None
    optional: bool = False

    def __init__(
        self,
        *,
        kind: MatcherKind = "exact",
        value: Any = None,
        values: list[Any] | None = None,
        min: float | None = None,
        max: float | None = None,
        tolerance: float | None = None,
        pattern: str | None = None,
        criterion: str | None = None,
        pass_at: float | None = None,
        ignore: list[Literal["case", "whitespace", "punctuation"]] | None = None,
        fields: dict[str, Matcher] | None = None,
        items: list[Matcher] | None = None,
        order: Literal["ordered", "unordered"] | None = None,
        allow_extra: bool | None = None,
        optional: bool = False,
    ) -> None:
        """Bounds are floats however given (a file's `max: 3` reports as `max 3.0`)."""
        self.kind, self.value, self.values = kind, value, values
        self.min = None if min is None else float(min)
        self.max = None if max is None else float(max)
        self.tolerance = None if tolerance is None else float(tolerance)
        self.pass_at = None if pass_at is None else float(pass_at)
        self.pattern, self.criterion, self.ignore = pattern, criterion, ignore
        self.fields, self.items, self.order = fields, items, order
        self.allow_extra, self.optional = allow_extra, optional

    @classmethod
    def _field(cls, name: str, value: Any) -> Any:
        if name == "fields" and isinstance(value, dict):
            return {k: Matcher.model_validate(v) for k, v in value.items()}
        if name == "items" and isinstance(value, list):
            return [Matcher.model_validate(v) for v in value]
        return value


@dataclass(slots=True, kw_only=True, init=False)
class ExpectedCall(Record):
    """One call the model should make. `args` values are Matchers; in files a plain value
    is shorthand for an exact matcher, and `{"optional": true}` alone means may-be-anything."""

    tool: str
    args: dict[str, Matcher] = field(default_factory=dict)
    allow_extra_args: bool = True  # arguments the expectation does not name are not graded

    def __init__(
        self, *, tool: str, args: dict[str, Matcher] | None = None, allow_extra_args: bool = True
    ) -> None:
        self.tool, self.allow_extra_args = tool, allow_extra_args
        self.args = {} if args is None else args

    @classmethod
    def _field(cls, name: str, value: Any) -> Any:
        if name == "args" and isinstance(value, dict):
            return {k: Matcher.model_validate(v) for k, v in value.items()}
        return value


JUDGE_SCORES = (0.0, 0.5, 1.0)  # what a judge answers: does not / partly / satisfies


@dataclass(slots=True, kw_only=True, init=False)
class Provenance(Record):
    """Who labeled a case, when, how, and from which recorded turn."""

    by: str | None = None  # the reviewer (label --by)
    at: str | None = None  # when, ISO 8601 UTC
    via: str | None = None  # label | label --sample | label --import | tui | adjudicated
    exchange_id: str | None = None  # the recorded turn labeled
    session_id: str | None = None
    model: str | None = None  # the model that made the turn

    def __init__(
        self,
        *,
        by: str | None = None,
        at: str | None = None,
        via: str | None = None,
        exchange_id: str | None = None,
        session_id: str | None = None,
        model: str | None = None,
    ) -> None:
        self.by, self.at, self.via = by, at, via
        self.exchange_id, self.session_id, self.model = exchange_id, session_id, model


@dataclass(slots=True, kw_only=True, init=False)
class Case(Record):
    """A labeled expectation: what should have happened for one model turn."""

    id: str
    exchange_id: str | None = None  # a recorded exchange to grade
    wire_format: str | None = None
    messages: Any = None  # own messages when no exchange_id
    tools: Any = None  # own tools block when no exchange_id
    # output: structured output (response_format / text.format), graded as one call to
    # wire.structured.OUTPUT whose args are the output's fields
    expect: Literal["call", "no_call", "output"] = "call"
    calls: list[ExpectedCall] = field(default_factory=list)
    order: Literal["ordered", "unordered"] = "ordered"
    # calls beyond the expected ones to expected tools: allow (over-tooling only), forbid
    # (each one a spurious_call), or at most this many (>= 0)
    extra_calls: Literal["allow", "forbid"] | int = "allow"
    tags: list[str] = field(default_factory=list)
    notes: str | None = None
    provenance: Provenance | None = None  # who labeled it, when

    def __init__(
        self,
        *,
        id: str,
        exchange_id: str | None = None,
        wire_format: str | None = None,
        messages: Any = None,
        tools: Any = None,
        expect: Literal["call", "no_call", "output"] = "call",
        calls: list[ExpectedCall] | None = None,
        order: Literal["ordered", "unordered"] = "ordered",
        extra_calls: Literal["allow", "forbid"] | int = "allow",
        tags: list[str] | None = None,
        notes: str | None = None,
        provenance: Provenance | None = None,
    ) -> None:
        self.id, self.exchange_id, self.wire_format = id, exchange_id, wire_format
        self.messages, self.tools, self.expect = messages, tools, expect
        self.calls = [] if calls is None else calls
        self.order, self.extra_calls = order, extra_calls
        self.tags = [] if tags is None else tags
        self.notes, self.provenance = notes, provenance

    def model_copy(self, update: dict[str, Any] | None = None) -> Self:
        """A shallow copy with `update` applied, as pydantic's, built by the constructor
        itself (`dataclasses.replace` reads the fields by name and calls it with keywords:
        4.7 µs a case, and `label --import` copies every case to stamp it)."""
        if update and not update.keys() <= _CASE_FIELDS:
            return record_copy(self, update)  # refuses the unknown name as replace does
        copy = Case(
            id=self.id, exchange_id=self.exchange_id, wire_format=self.wire_format,
            messages=self.messages, tools=self.tools, expect=self.expect, calls=self.calls,
            order=self.order, extra_calls=self.extra_calls, tags=self.tags, notes=self.notes,
            provenance=self.provenance,
        )  # fmt: skip
        for name, value in (update or {}).items():
            setattr(copy, name, value)
        return cast(Self, copy)

    @classmethod
    def _field(cls, name: str, value: Any) -> Any:
        if name == "calls" and isinstance(value, list):
            return [ExpectedCall.model_validate(c) for c in value]
        if name == "provenance" and isinstance(value, dict):
            return Provenance.model_validate(value)
        return value


_CASE_FIELDS: Final = frozenset(f.name for f in dataclasses.fields(Case))


@dataclass(slots=True, kw_only=True, init=False)
class Observation(Record):
    """What the model did for one case's turn."""

    exchange_id: str | None = None
    session_id: str | None = None
    model: str | None = None
    finish_reason: str | None = None
    complete: bool = True
    calls: list[ToolCall] = field(default_factory=list)
    offered: list[dict[str, Any]] = field(default_factory=list)  # name + parameters schema
    text: str | None = None  # the reply's text (a call lost in it: toolproxy.wire.leaked)

    def __init__(
        self,
        *,
        exchange_id: str | None = None,
        session_id: str | None = None,
        model: str | None = None,
        finish_reason: str | None = None,
        complete: bool = True,
        calls: list[ToolCall] | None = None,
        offered: list[dict[str, Any]] | None = None,
        text: str | None = None,
    ) -> None:
        self.exchange_id, self.session_id, self.model = exchange_id, session_id, model
        self.finish_reason, self.complete, self.text = finish_reason, complete, text
        self.calls = [] if calls is None else calls
        self.offered = [] if offered is None else offered

    @classmethod
    def _field(cls, name: str, value: Any) -> Any:
        if name == "calls" and isinstance(value, list):
            return [ToolCall.model_validate(c) for c in value]
        return value
