"""The judge against human labels: kappas with known answers, the set's format, and the
numbers a calibration reports."""

from __future__ import annotations

import pytest

from toolproxy.grade.calibrate import (
    CalibrationError,
    Item,
    Judged,
    calibrate,
    cohen_kappa,
    human_score,
    load_set,
)


def test_cohen_kappa_of_the_textbook_example() -> None:
    # 50 items: both yes 20, A yes B no 5, A no B yes 10, both no 15 -> po .7, pe .5, k .4
    pairs = [(1, 1)] * 20 + [(1, 0)] * 5 + [(0, 1)] * 10 + [(0, 0)] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert cohen_kappa([(1, 1), (0, 0)]) == pytest.approx(1.0)
    assert cohen_kappa([(1, 0), (0, 1)]) == pytest.approx(-1.0)
    assert cohen_kappa([(1, 1), (1, 1)]) is None  # one category only: chance explains all
    assert cohen_kappa([]) is None


def test_linearly_weighted_kappa_gives_half_credit_for_a_half_step() -> None:
    pairs = [(1.0, 1.0), (0.0, 0.0), (0.5, 1.0), (0.0, 0.5)]
    # po_w = (1 + 1 + .5 + .5) / 4 = .75; pe_w = 8 / 16 = .5 (worked by hand)
    got = cohen_kappa(pairs, lambda a, b: 1 - abs(a - b), (0.0, 0.5, 1.0))
    assert got == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("label", "score"),
    [(1, 1.0), (0.5, 0.5), (0, 0.0), ("pass", 1.0), ("Partial", 0.5), ("fail", 0.0),
     (True, 1.0), (False, 0.0), (0.7, None), ("maybe", None), (None, None), (2, None)],
)  # fmt: skip
def test_human_labels_take_three_forms(label: object, score: float | None) -> None:
    assert human_score(label) == score


def test_a_set_loads_from_yaml_and_from_json_lines() -> None:
    yaml_items = load_set(
        "items:\n  - {criterion: c1, value: {a: 1}, human: pass}\n"
        "  - {id: x, criterion: c2, value: v, human: 0.5, note: unsure}\n",
        "set.yaml",
    )
    assert [(i.id, i.criterion, i.value, i.human) for i in yaml_items] == [
        ("0", "c1", {"a": 1}, 1.0), ("x", "c2", "v", 0.5),
    ]  # fmt: skip
    jsonl = load_set('{"criterion": "c", "value": 3, "human": false}\n\n', "set.jsonl")
    assert jsonl == [Item(id="0", criterion="c", value=3, human=0.0)]


@pytest.mark.parametrize(
    ("text", "name", "said"),
    [
        ("items: [", "s.yaml", "s.yaml: not YAML"),
        ("cases: []", "s.yaml", "expected a mapping with an `items:` list"),
        ("items: []", "s.yaml", "s.yaml: no items"),
        ("items: [3]", "s.yaml", "s.yaml: items[0]: an item is a mapping"),
        ("items: [{criterion: c, human: 0.7}]", "s.yaml", "human: 0.7 is not 1, 0.5, 0"),
        ("items: [{criterion: '', human: 1}]", "s.yaml", "criterion: a non-empty string"),
        ("items: [{criterion: c, human: 1, score: 1}]", "s.yaml", "unknown field(s) score"),
        ("items: [{id: a, criterion: c, human: 1}, {id: a, criterion: c, human: 0}]",
         "s.yaml", "items[1]: id 'a' is used twice"),
        ('{"criterion": "c", "human": 1}\n{oops', "s.jsonl", "s.jsonl:2: not JSON"),
    ],
)  # fmt: skip
def test_a_bad_set_says_where(text: str, name: str, said: str) -> None:
    with pytest.raises(CalibrationError) as e:
        load_set(text, name)
    assert said in str(e.value)


def judged(human: float, score: float | None, i: int, error: str | None = None) -> Judged:
    item = Item(id=f"i{i}", criterion=f"c{i}", value=i, human=human)
    return Judged(item=item, score=score, reason=f"r{i}", error=error)


def test_calibration_counts_agreement_kappa_confusion_and_disagreements() -> None:
    pairs = [(1.0, 1.0), (1.0, 1.0), (0.0, 0.0), (0.0, 1.0), (0.5, 1.0), (1.0, 0.5)]
    rows = [judged(h, s, i) for i, (h, s) in enumerate(pairs)]
    rows.append(judged(1.0, None, 9, error="JudgeError: HTTP 500"))
    c = calibrate(rows)
    assert (c.items, c.scored, c.pass_at) == (7, 6, 1.0)
    # pass/fail at 1: human [T,T,F,F,F,T] judge [T,T,F,T,T,F] -> 3 of 6 agree
    assert c.agreement == pytest.approx(0.5)
    assert c.kappa == pytest.approx(cohen_kappa([(True, True)] * 2 + [(False, False)] +
                                                [(False, True)] * 2 + [(True, False)]))  # fmt: skip
    assert c.score_agreement == pytest.approx(3 / 6)
    assert c.confusion == {"0": {"0": 1, "1": 1}, "0.5": {"1": 1}, "1": {"1": 2, "0.5": 1}}
    assert [(d.id, d.human, d.judge, d.reason) for d in c.disagreements] == [
        ("i3", 0.0, 1.0, "r3"), ("i4", 0.5, 1.0, "r4"), ("i5", 1.0, 0.5, "r5"),
    ]  # fmt: skip
    assert c.failed == {"i9": "JudgeError: HTTP 500"}
    # passing at 0.5: i4 and i5 now agree on pass/fail
    assert calibrate(rows, pass_at=0.5).agreement == pytest.approx(5 / 6)


def test_nothing_scored_leaves_every_number_unknown() -> None:
    c = calibrate([judged(1.0, None, 0, error="down")])
    assert (c.agreement, c.kappa, c.score_agreement, c.score_kappa) == (None,) * 4


def test_the_docs_example_set_loads() -> None:
    from tests import paths

    doc = (paths.REPO / "docs" / "grading.md").read_text()
    start = doc.index("# judge-set.yaml")
    block = doc[start : doc.index("```", start)]
    items = load_set(block, "judge-set.yaml")
    assert [(i.id, i.human) for i in items] == [("refund-1", 0.0), ("city-1", 0.5)]
