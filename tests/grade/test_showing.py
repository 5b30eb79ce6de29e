from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from toolproxy.grade.showing import show


def test_show_of_a_deep_value_is_cut() -> None:
    deep: list = []
    for _ in range(3000):
        deep = [deep]
    assert show(deep).startswith("[[")


@example(10**45)  # 46 digits: reprlib cuts an int past 40, a short-scalar shortcut did not
@example("\x00" * 30)  # 30 characters whose repr is 122
@given(st.one_of(st.text(max_size=120), st.integers(), st.floats(), st.booleans(), st.none()))
def test_show_of_a_scalar_is_reprlibs(value: object) -> None:
    from toolproxy.grade.showing import _SHOW

    assert show(value) == _SHOW.repr(value)


def _json_like() -> st.SearchStrategy[object]:
    """Values as arguments and expectations hold them, and a few no JSON has: tuples,
    integer keys, sets (which `show` leaves to reprlib)."""
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=100),
        st.sampled_from(["", "x" * 80, "é" * 81, "\\n" * 50, 10**39, 10**40, -(10**40)]),
    )  # fmt: skip
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=8),
            st.lists(inner, max_size=3).map(tuple),
            st.dictionaries(st.text(max_size=6), inner, max_size=8),
            st.dictionaries(st.integers(0, 9) | st.text(max_size=2), inner, max_size=3),
            st.frozensets(st.integers(), max_size=3).map(set),
        ),
        max_leaves=40,
    )


@example({"b": [1, 2, {"c": {"d": [5]}}], "a": (7,)})  # sorted keys, a 1-tuple, a deep cut
@example([[[[1]]], [[[]]], {}, [], ()])  # empty containers past the level limit
@example([[[(1,)]], [(2,)], {"k": {"j": (3,)}}])  # a 1-tuple cut ("(...)") and whole ("(2,)")
@given(_json_like())
def test_show_is_reprlibs_for_any_value(value: object) -> None:
    from toolproxy.grade.showing import _SHOW

    assert show(value) == _SHOW.repr(value)
