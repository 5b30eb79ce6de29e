import pytest

from toolproxy.capture import limits


@pytest.mark.parametrize(("value", "seconds"), [("0.01", 0.01), ("10", 10.0), (2, 2.0)])
def test_flush_seconds_in_range_are_taken_from_text_or_numbers(value, seconds):
    assert limits.flush_seconds(value) == seconds


@pytest.mark.parametrize("value", ["0", "10.5", "nan", "soon", "", "inf"])
def test_flush_seconds_out_of_range_or_not_numbers_name_the_range(value):
    with pytest.raises(ValueError, match=r"between 0.01 and 10 seconds, got"):
        limits.flush_seconds(value)


def test_a_retry_window_of_zero_is_allowed_and_an_hour_is_the_most():
    assert limits.retry_seconds("0") == 0.0
    assert limits.retry_seconds("3600") == 3600.0
    for bad in ("-1", "3601", "later"):
        with pytest.raises(ValueError, match="between 0 and 3600 seconds"):
            limits.retry_seconds(bad)


def test_a_name_is_anything_but_blank():
    assert limits.name("x-api-key") == "x-api-key"
    for bad in ("", " ", "\t"):
        with pytest.raises(ValueError, match="not blank"):
            limits.name(bad)


@pytest.mark.parametrize("path", ["api_key", "messages.content", "a.b.c"])
def test_dotted_paths_with_every_key_present_are_taken(path):
    assert limits.dotted_path(path) == path


@pytest.mark.parametrize("path", ["", " ", "a..b", ".a", "a.", "."])
def test_dotted_paths_with_an_empty_key_are_refused(path):
    with pytest.raises(ValueError, match="dotted JSON path"):
        limits.dotted_path(path)


def test_the_default_capture_is_the_environment_s_else_captures_default():
    assert limits.default_capture({}) == "captures/default"
    assert limits.default_capture({"TOOLPROXY_CAPTURE": "/srv/caps/prod"}) == "/srv/caps/prod"
    assert limits.default_capture({"TOOLPROXY_CAPTURE": "  "}) == "captures/default"
    assert limits.default_capture({"TOOLPROXY_CAPTURE": " caps/a "}) == "caps/a"
