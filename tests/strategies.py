"""Hypothesis strategies that more than one test module draws from."""

from __future__ import annotations

from hypothesis import strategies as st

# JSON's own values, every number finite: what a JSON text reads as, NaN and the
# infinities aside
finite_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
