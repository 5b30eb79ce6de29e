"""Draw a labeling sample the way review teams do: N turns, optionally stratified, the same
draw for the same seed (pure).

Stratified by a key (tool, model, session), every stratum gets its share of N in
proportion to its size (largest remainders round up; each stratum at least one while N
allows, so a rare tool is not left out), drawn at random within it. Without a key the
draw is a plain random sample. The sample keeps the input's order.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence


def shares(sizes: dict[str, int], n: int) -> dict[str, int]:
    """How many of `n` each stratum gets: at least one each while `n` allows (largest
    strata first), the rest in proportion to size by largest remainder, never more than a
    stratum holds."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    order = sorted(sizes, key=lambda k: (-sizes[k], k))
    got = dict.fromkeys(sizes, 0)
    for k in order[:n]:  # one each, as far as n goes
        got[k] = 1
    left = n - sum(got.values())
    while left > 0:
        # the stratum furthest below its proportional share, ties by size then name
        room = [k for k in order if got[k] < sizes[k]]
        k = max(room, key=lambda s: (sizes[s] * n / total - got[s], sizes[s], s))
        got[k] += 1
        left -= 1
    return got


def sample[T](
    items: Sequence[T], n: int, seed: int, key: Callable[[T], str] | None = None
) -> list[T]:
    """`n` of `items` (all when there are no more), stratified by `key` when given; the
    same `seed` draws the same sample; in the items' order."""
    if n >= len(items):
        return list(items)
    rng = random.Random(seed)
    strata: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        strata.setdefault(key(item) if key else "", []).append(i)
    quota = shares({k: len(v) for k, v in strata.items()}, n)
    chosen: set[int] = set()
    for k in sorted(strata):  # a fixed order, so the draw depends on the seed alone
        chosen.update(rng.sample(strata[k], quota[k]))
    return [item for i, item in enumerate(items) if i in chosen]
