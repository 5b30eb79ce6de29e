"""The eleven labels and their precedence."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolproxy.grade.labels import PRECEDENCE, RANK, first_label, outranks


def test_a_label_ranks_by_its_place_in_the_precedence():
    assert len(PRECEDENCE) == 11
    assert sorted(RANK, key=RANK.__getitem__) == list(PRECEDENCE)


@given(st.lists(st.sampled_from(PRECEDENCE), min_size=1))
def test_the_first_label_is_the_one_of_least_rank(labels):
    assert first_label(labels) == min(labels, key=RANK.__getitem__)


def test_no_label_found_is_none():
    assert first_label([]) is None


@given(st.sampled_from(PRECEDENCE), st.one_of(st.none(), st.sampled_from(PRECEDENCE)))
def test_a_label_outranks_none_and_every_label_after_it(label, other):
    assert outranks(label, other) is (
        other is None or PRECEDENCE.index(label) < PRECEDENCE.index(other)
    )
