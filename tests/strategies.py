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

# Schemas made only of what glance reads (type, properties, required, additionalProperties,
# items, enum, const, annotations), nested, with names that json_path and the argument
# paths write specially: what the C schema stage reads (tests/grade/test_nativeschema.py).
SUBSET_KEYS = st.sampled_from(["city", "unit", "", "ü", "a b", "it's", "a\n", "x1_", "b\\s"])
_SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text(max_size=3)
_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
_LEAVES = st.one_of(
    st.builds(lambda t: {"type": t}, _TYPES),
    st.builds(lambda t: {"type": [t, "null"]}, _TYPES),
    st.builds(
        lambda v: {"enum": v}, st.lists(_SCALARS | st.lists(_SCALARS), min_size=1, max_size=3)
    ),
    st.builds(lambda v: {"const": v}, _SCALARS),
    st.sampled_from([True, False, {}, {"type": "string", "description": "d", "title": "t"}]),
)
subset_schemas = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.builds(
            lambda props, required, extra, typed: {
                **({"type": "object"} if typed else {}),
                "properties": props,
                "required": required,
                "additionalProperties": extra,
            },
            st.dictionaries(SUBSET_KEYS, inner, max_size=3),
            st.lists(SUBSET_KEYS, max_size=3, unique=True),
            st.booleans() | inner,
            st.booleans(),
        ),
        st.builds(lambda items: {"type": "array", "items": items}, inner),
        st.builds(  # required before properties: errors come in the schema's key order
            lambda props: {"required": ["city"], "properties": props},
            st.dictionaries(SUBSET_KEYS, inner, max_size=3),
        ),
    ),
    max_leaves=8,
)
subset_values = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(SUBSET_KEYS, inner, max_size=4),
    max_leaves=10,
)
