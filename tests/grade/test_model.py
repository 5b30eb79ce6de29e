"""toolproxy.grade.model: the grading records (slotted dataclasses with pydantic's verbs)."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation, Provenance
from toolproxy.records import ToolCall


def nested_case() -> Case:
    stop = Matcher(
        kind="object",
        fields={"city": Matcher(kind="text", value="Paris"), "nights": Matcher(kind="range")},
        allow_extra=False,
    )
    legs = Matcher(kind="list", items=[stop, Matcher(kind="any", optional=True)])
    return Case(
        id="trip",
        exchange_id="ex-1",
        calls=[ExpectedCall(tool="book", args={"legs": legs}, allow_extra_args=False)],
        order="unordered",
        extra_calls=2,
        tags=["travel"],
        provenance=Provenance(by="alice", via="label"),
    )


def test_a_case_dumped_to_dicts_validates_back_equal():
    case = nested_case()
    dumped = case.model_dump()
    assert dumped["calls"][0]["args"]["legs"]["items"][0]["fields"]["city"]["value"] == "Paris"
    assert dumped["provenance"] == {
        "by": "alice",
        "at": None,
        "via": "label",
        "exchange_id": None,
        "session_id": None,
        "model": None,
    }
    assert Case.model_validate(dumped) == case


def test_bounds_given_as_integers_are_floats():
    m = Matcher(kind="range", min=1, max=3)
    assert (m.min, m.max) == (1.0, 3.0)
    assert isinstance(m.max, float)
    given = {"kind": "tolerance", "value": 2, "tolerance": 1}
    assert Matcher.model_validate(given).tolerance == 1.0
    assert Matcher(kind="judge", criterion="polite", pass_at=1).pass_at == 1.0


def test_model_copy_changes_the_copy_only():
    case = nested_case()
    copy = case.model_copy(update={"id": "trip#1"})
    assert (copy.id, case.id) == ("trip#1", "trip")
    assert copy.calls is case.calls  # shallow, as pydantic's


def every_field_case() -> Case:
    return Case(
        id="c", exchange_id="x", wire_format="openai_chat", messages=[{"role": "user"}],
        tools=[{"name": "t"}], expect="output", calls=[ExpectedCall(tool="t")],
        order="unordered", extra_calls=2, tags=["a"], notes="n",
        provenance=Provenance(by="me", at="2026-11-28T03:00:00+00:00", via="label"),
    )  # fmt: skip


@pytest.mark.parametrize(
    "update",
    [
        None,
        {},
        {"id": "d"},
        {"provenance": None, "notes": None},
        {"calls": [], "extra_calls": "forbid"},
    ],
)
def test_a_case_copy_is_what_dataclasses_replace_gives(update):
    case = every_field_case()
    for f in dataclasses.fields(Case):  # a field added to Case and not to its copy shows here
        default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
        assert getattr(case, f.name) != default, f"every_field_case leaves {f.name} as default"
    copy = case.model_copy(update=update)
    made = dataclasses.replace(case, **(update or {}))
    assert copy == made and copy is not case
    for name in (f.name for f in dataclasses.fields(Case)):  # shallow, as pydantic's
        assert getattr(copy, name) is getattr(made, name)


def test_a_case_copy_refuses_a_field_the_case_lacks_as_replace_does():
    with pytest.raises(TypeError):
        every_field_case().model_copy(update={"id": "d", "colour": "red"})


def test_records_take_keywords_and_no_unknown_attributes():
    with pytest.raises(TypeError):
        Case("positional")  # type: ignore[misc]
    case = Case(id="a")
    with pytest.raises(AttributeError):
        case.tag = ["x"]  # type: ignore[attr-defined]


def test_an_observation_from_dicts_holds_tool_calls():
    obs = Observation.model_validate(
        {"exchange_id": "e", "calls": [{"index": 0, "name": "f", "arguments": {}}], "extra": 1}
    )
    assert obs.calls == [ToolCall(index=0, name="f", arguments={})]
    assert obs.model_dump(mode="json")["calls"][0]["name"] == "f"


def an_observation() -> Observation:
    call = ToolCall(index=0, call_id="c1", name="book", arguments_raw="{}", arguments={})
    return Observation(exchange_id="x", calls=[call], offered=[{"name": "book"}], text="t")


@pytest.mark.parametrize("make", [nested_case, every_field_case, an_observation])
def test_a_record_pickles_and_copies_to_an_equal_one(make):
    """Compiled (mypyc), a record's class builds an instance only through its `__init__`,
    which wants the required fields: pickling and `copy` must pass them (they did not)."""
    record = make()
    for made in (pickle.loads(pickle.dumps(record)), copy.copy(record), copy.deepcopy(record)):
        assert type(made) is type(record) and made == record and made is not record
    deep = copy.deepcopy(record)
    assert deep.calls is not record.calls and deep.calls[0] is not record.calls[0]
    assert copy.copy(record).calls is record.calls  # shallow, as pydantic's
