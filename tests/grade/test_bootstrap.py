"""Drawing counts of distinct rows is the same bootstrap as drawing row indices."""

from __future__ import annotations

import random
import statistics
from collections import Counter

import pytest

from toolproxy.grade.bootstrap import by_counts, by_index, differences


def paired_pass_rows(n: int, only_base: int, only_cand: int, both: int) -> list:
    rows = [(1.0, 1.0, 0.0, 1.0)] * only_base + [(0.0, 1.0, 1.0, 1.0)] * only_cand
    rows += [(1.0, 1.0, 1.0, 1.0)] * both
    return rows + [(0.0, 1.0, 0.0, 1.0)] * (n - len(rows))


def test_counts_and_indices_draw_the_same_distribution_as_theory_says() -> None:
    n, p10, p01 = 400, 30, 70  # paired pass/fail: the difference's variance is known
    rows = paired_pass_rows(n, p10, p01, 150)
    counted = by_counts(sorted(Counter(rows).items()), n, 4000, random.Random(1))
    indexed = by_index(rows, 4000, random.Random(2))
    a, b = p10 / n, p01 / n
    sd = ((a + b - (b - a) ** 2) / n) ** 0.5
    for draws in (counted, indexed):
        assert len(draws) == 4000
        assert statistics.fmean(draws) == pytest.approx(b - a, abs=4 * sd / 4000**0.5)
        assert statistics.stdev(draws) == pytest.approx(sd, rel=0.06)


def test_a_ratio_of_sums_with_uneven_denominators_agrees_between_the_two() -> None:
    rng = random.Random(3)
    kinds = [(0.0, 2.0, 1.0, 2.0), (1.0, 3.0, 0.0, 3.0), (2.0, 4.0, 2.0, 4.0), (0.0, 1.0, 0.0, 1.0)]
    rows = [rng.choice(kinds) for _ in range(600)]
    counted = by_counts(sorted(Counter(rows).items()), len(rows), 4000, random.Random(4))
    indexed = by_index(rows, 4000, random.Random(5))
    assert statistics.fmean(counted) == pytest.approx(statistics.fmean(indexed), abs=0.002)
    assert statistics.stdev(counted) == pytest.approx(statistics.stdev(indexed), rel=0.06)
    q = statistics.quantiles(counted, n=40)
    r = statistics.quantiles(indexed, n=40)
    assert (q[0], q[-1]) == pytest.approx((r[0], r[-1]), abs=0.004)  # the 2.5 % / 97.5 % tails


def test_one_distinct_row_gives_its_own_difference_every_time() -> None:
    rows = [(1.0, 4.0, 3.0, 4.0)] * 50
    assert differences(rows, 100, random.Random(0)) == [0.5] * 100


def test_few_distinct_rows_are_drawn_as_counts_and_many_as_indices() -> None:
    few = paired_pass_rows(500, 40, 60, 200)
    assert differences(few, 50, random.Random(7)) == by_counts(
        sorted(Counter(few).items()), 500, 50, random.Random(7)
    )
    many = [(float(i), 1.0, float(i % 7), 1.0) for i in range(300)]  # dollars: all distinct
    assert differences(many, 50, random.Random(7)) == by_index(many, 50, random.Random(7))


def test_draws_whose_denominator_sums_to_zero_give_no_difference() -> None:
    rows = [(1.0, 1.0, 1.0, 1.0)] + [(0.0, 0.0, 0.0, 1.0)] * 99  # one case has a denominator
    for draw in (by_index, lambda r, k, g: by_counts(sorted(Counter(r).items()), 100, k, g)):
        got = draw(rows, 2000, random.Random(8))
        assert 1000 < len(got) < 1500  # P(the case is drawn) = 1 - 0.99**100 = 0.634
        assert all(-1.0 < d < -0.9 for d in got)  # k of 100 drawn: k / 100 - 1/1
