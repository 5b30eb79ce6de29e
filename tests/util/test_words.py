import pytest

from toolproxy.util.words import counted


@pytest.mark.parametrize(
    ("n", "text"), [(0, "0 cases"), (1, "1 case"), (2, "2 cases"), (-1, "-1 cases")]
)
def test_one_is_singular_and_every_other_count_plural(n: int, text: str) -> None:
    assert counted(n, "case") == text
