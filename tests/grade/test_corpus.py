"""The control corpus: every known output gets its exact label and per-argument buckets."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.fixtures.corpus import ITEMS, CorpusItem, keyword_judge
from toolproxy.grade.checker import make_grader
from toolproxy.grade.labels import PRECEDENCE


def grade(item: CorpusItem):
    grader = make_grader(keyword_judge if item.use_judge else None, item.server_tools)
    return grader(item.case, item.observation())


@pytest.mark.parametrize("item", ITEMS, ids=[i.id for i in ITEMS])
def test_corpus_item_gets_its_label_and_buckets(item: CorpusItem):
    got = grade(item)
    assert got.label == item.label, [c.errors for c in got.calls]
    assert got.not_graded is item.not_graded
    assert got.passed is (item.label is None and not item.not_graded)
    buckets = tuple({a.name: a.bucket for a in c.args} for c in got.calls)
    assert buckets == item.buckets
    if item.schema_source is not None:
        assert got.calls[0].schema_source == item.schema_source
    assert (got.leaked_format, got.leaked_label) == (item.leaked or (None, None))


def test_every_leaked_format_the_corpus_shows_is_a_no_call():
    leaked = [i for i in ITEMS if i.leaked]
    assert len(leaked) >= 5 and all(i.label == "no_call" for i in leaked)
    assert {i.leaked[1] for i in leaked if i.leaked} >= {"passed", "wrong_tool"}


def test_at_least_five_items_per_label():
    counts = Counter(i.label for i in ITEMS)
    assert {label: counts[label] >= 5 for label in PRECEDENCE} == dict.fromkeys(PRECEDENCE, True)


def test_passing_items_cover_every_matcher_kind():
    kinds = {
        m.kind
        for i in ITEMS
        if i.label is None and not i.not_graded
        for c in i.case.calls
        for m in c.args.values()
    }
    assert kinds == {
        "exact",
        "any_of",
        "enum",
        "range",
        "tolerance",
        "regex",
        "datetime",
        "unordered",
        "text",
        "judge",
        "object",
        "list",
    }


def test_item_ids_are_unique():
    assert len({i.id for i in ITEMS}) == len(ITEMS)


def test_the_judge_reason_is_kept():
    item = next(i for i in ITEMS if i.id == "ok-judge")
    body = next(a for a in grade(item).calls[0].args if a.name == "body")
    assert (body.judged, body.judge_reason) == (True, "mentions 'the deploy'")


def test_failing_call_names_its_stage():
    stages = {i.id: grade(i).calls[0].stage_failed for i in ITEMS if i.label and i.buckets}
    assert stages["tr-mid-string"] == "parse"
    assert stages["hp-verbose"] == "schema"
    assert stages["hp-wrong-city"] == "semantic"
    assert stages["es-valid-escape-misread"] == "semantic"
    assert stages["nc-text-answer"] == "selection"
