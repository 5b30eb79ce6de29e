from toolproxy.capture.tap import BodyTap, RawExchange


def fake_clock(values):
    it = iter(values)
    return lambda: next(it)


def test_tap_returns_chunks_unchanged_and_keeps_a_copy():
    tap = BodyTap(limit=100, clock=fake_clock([1.0, 2.0, 3.0]))
    assert tap(b"ab") == b"ab"
    assert tap(b"cd") == b"cd"
    assert tap(b"") == b""
    assert tap.body() == b"abcd"
    assert (tap.first_at, tap.last_at, tap.ended_at) == (1.0, 2.0, 3.0)
    assert tap.ended and not tap.truncated and tap.size == 4
    assert tap.arrivals == [(0, 1.0), (2, 2.0)]  # each kept chunk: its offset, its time


def test_tap_caps_the_copy_but_passes_everything_through():
    tap = BodyTap(limit=3)
    assert tap(b"abcd") == b"abcd"
    assert tap(b"ef") == b"ef"
    assert tap.body() == b"abc"
    assert tap.size == 6 and tap.truncated and not tap.ended
    assert [offset for offset, _ in tap.arrivals] == [0]  # only chunks that were kept


def test_zero_limit_keeps_nothing():
    tap = BodyTap(limit=0)
    tap(b"x")
    assert tap.body() == b"" and tap.truncated


def test_raw_exchange_defaults():
    raw = RawExchange("id", 1.0, "GET", "http", "h", 80, "/", [], b"")
    assert raw.response_complete and raw.status_code is None and raw.response_body == b""
