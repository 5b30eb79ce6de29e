"""Content-Encoding decoding: toolproxy.wire.body."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest
import zstandard

from tests import paths
from toolproxy.wire.body import decode_body

FIXTURES = paths.FIXTURES / "wire"
BODY = (FIXTURES / "chat_stream_parallel.sse").read_bytes()


def _raw_deflate(data: bytes) -> bytes:
    engine = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return engine.compress(data) + engine.flush()


ENCODERS = {
    "gzip": gzip.compress,
    "x-gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstandard.ZstdCompressor().compress,
}


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_each_coding_round_trips(coding: str) -> None:
    assert decode_body(ENCODERS[coding](BODY), coding) == (BODY, None)


@pytest.mark.parametrize("header", [None, "", "identity", " Identity "])
def test_no_coding_returns_the_same_bytes(header: str | None) -> None:
    assert decode_body(BODY, header) == (BODY, None)


def test_header_is_case_and_space_insensitive() -> None:
    assert decode_body(gzip.compress(BODY), " GZip ") == (BODY, None)


def test_chain_is_undone_from_the_right() -> None:
    encoded = brotli.compress(gzip.compress(BODY))
    assert decode_body(encoded, "gzip, br") == (BODY, None)
    assert decode_body(encoded, "gzip,identity,br") == (BODY, None)


def test_wrong_order_chain_is_an_error_and_returns_raw() -> None:
    encoded = brotli.compress(gzip.compress(BODY))
    decoded, error = decode_body(encoded, "br, gzip")
    assert decoded == encoded
    assert error is not None and error.startswith("gzip decoding failed")


def test_raw_deflate_stream_is_accepted() -> None:
    assert decode_body(_raw_deflate(BODY), "deflate") == (BODY, None)


def test_concatenated_members_and_frames() -> None:
    assert decode_body(gzip.compress(b"ab") + gzip.compress(b"cd"), "gzip") == (b"abcd", None)
    zstd = zstandard.ZstdCompressor()
    assert decode_body(zstd.compress(b"ab") + zstd.compress(b"cd"), "zstd") == (b"abcd", None)


def test_zstd_frame_without_content_size() -> None:
    encoded = zstandard.ZstdCompressor(write_content_size=False).compress(BODY)
    assert decode_body(encoded, "zstd") == (BODY, None)


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_truncated_body_is_an_error_and_returns_raw(coding: str) -> None:
    cut = ENCODERS[coding](BODY)[:-8]
    decoded, error = decode_body(cut, coding)
    assert decoded == cut
    assert (
        error
        == f"{coding} decoding failed: ValueError: stream ended before its end marker (truncated)"
    )


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_garbage_is_an_error_and_returns_raw(coding: str) -> None:
    decoded, error = decode_body(b"<html>502 Bad Gateway</html>", coding)
    assert decoded == b"<html>502 Bad Gateway</html>"
    assert error is not None and error.startswith(f"{coding} decoding failed: ")


def test_unknown_coding_is_an_error() -> None:
    assert decode_body(b"x", "compress") == (b"x", "unsupported content-encoding 'compress'")
    assert decode_body(b"x", "gzip, sdch") == (b"x", "unsupported content-encoding 'sdch'")


def test_empty_body_with_a_coding_stays_empty() -> None:
    assert decode_body(b"", "gzip") == (b"", None)


def test_one_encoding_covers_both_bodies():
    import base64

    from toolproxy.wire.body import body_text, one_encoding

    assert one_encoding(body_text(b"req"), body_text(b"resp")) == ("req", "resp", "utf-8")
    req, resp, enc = one_encoding(body_text(b'{"a": 1}'), body_text(b"\xff\xfe"))
    assert enc == "base64"
    assert base64.b64decode(req) == b'{"a": 1}' and base64.b64decode(resp) == b"\xff\xfe"
