"""Undo HTTP Content-Encoding so the parsers see the bytes the API wrote."""

from __future__ import annotations

import zlib
from collections.abc import Callable

import brotli
import zstandard


def decode_body(raw: bytes, content_encoding: str | None) -> tuple[bytes, str | None]:
    """Undo a Content-Encoding header: gzip, deflate, br, zstd, identity, or a chain.

    A chain such as ``gzip, br`` lists codings in the order they were applied, so they are
    undone from the right. Returns ``(decoded, None)``, or ``(raw, message)`` when a coding
    is unknown or the data does not decode (truncated streams included). Never raises.
    An empty body stays empty whatever the header says (HEAD-like or cut-before-first-byte).
    """
    codings = [c.strip().lower() for c in (content_encoding or "").split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings or not raw:
        return raw, None
    data = raw
    for coding in reversed(codings):
        decoder = _DECODERS.get(coding)
        if decoder is None:
            return raw, f"unsupported content-encoding {coding!r}"
        try:
            data = decoder(data)
        except Exception as exc:  # each library raises its own error types
            return raw, f"{coding} decoding failed: {type(exc).__name__}: {exc}"
    return data, None


def _inflate(data: bytes, wbits: int) -> bytes:
    """zlib-family decode that accepts concatenated members and rejects truncation."""
    out = bytearray()
    while data:
        engine = zlib.decompressobj(wbits)
        out += engine.decompress(data)
        out += engine.flush()
        if not engine.eof:
            raise ValueError("stream ended before its end marker (truncated)")
        data = engine.unused_data
    return bytes(out)


def _gunzip(data: bytes) -> bytes:
    return _inflate(data, 16 + zlib.MAX_WBITS)


def _deflate(data: bytes) -> bytes:
    # RFC 9110 says zlib-wrapped, but some servers send a raw deflate stream.
    try:
        return _inflate(data, zlib.MAX_WBITS)
    except zlib.error:
        return _inflate(data, -zlib.MAX_WBITS)


def _unbrotli(data: bytes) -> bytes:
    engine = brotli.Decompressor()
    out = engine.process(data)
    if not engine.is_finished():
        raise ValueError("stream ended before its end marker (truncated)")
    return bytes(out)


def _unzstd(data: bytes) -> bytes:
    out = bytearray()
    context = zstandard.ZstdDecompressor()
    while data:
        engine = context.decompressobj()
        out += engine.decompress(data)
        if not engine.eof:
            raise ValueError("stream ended before its end marker (truncated)")
        data = engine.unused_data
    return bytes(out)


_DECODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": _gunzip,
    "x-gzip": _gunzip,
    "deflate": _deflate,
    "br": _unbrotli,
    "zstd": _unzstd,
}
