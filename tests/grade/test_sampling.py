"""toolproxy.grade.sampling: stratified, reproducible labeling samples."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from toolproxy.grade.sampling import sample, shares


def test_shares_are_proportional_with_every_stratum_present():
    assert shares({"a": 80, "b": 15, "c": 5}, 20) == {"a": 16, "b": 3, "c": 1}
    assert shares({"a": 98, "b": 1, "c": 1}, 10) == {"a": 8, "b": 1, "c": 1}  # rare kept
    assert shares({"a": 5, "b": 5, "c": 5}, 2) == {"a": 1, "b": 1, "c": 0}  # n < strata
    assert shares({"a": 2, "b": 1}, 10) == {"a": 2, "b": 1}  # all there is


@given(
    st.dictionaries(st.sampled_from("abcdef"), st.integers(1, 50), min_size=1), st.integers(0, 300)
)
def test_shares_add_up_and_never_exceed_a_stratum(sizes, n):
    got = shares(sizes, n)
    assert sum(got.values()) == min(n, sum(sizes.values()))
    assert all(0 <= got[k] <= sizes[k] for k in sizes)
    if n >= len(sizes):
        assert all(got[k] >= 1 for k in sizes)


def test_the_same_seed_draws_the_same_sample_in_input_order():
    items = [(f"t{i % 3}", i) for i in range(30)]
    one = sample(items, 6, seed=7, key=lambda x: x[0])
    assert one == sample(items, 6, seed=7, key=lambda x: x[0])
    assert one == sorted(one, key=lambda x: x[1])
    assert Counter(k for k, _ in one) == {"t0": 2, "t1": 2, "t2": 2}
    assert one != sample(items, 6, seed=8, key=lambda x: x[0])
    assert sample(items, 99, seed=1) == items
    assert len(sample(items, 5, seed=1)) == 5
