"""Undo HTTP Content-Encoding so the parsers see the bytes the API wrote."""

from __future__ import annotations

import base64
import zlib
from collections.abc import Callable

import brotli
import zstandard


def body_text(body: bytes) -> tuple[str, bool]:
    """(text, is_base64): how the store keeps a body. Bodies that are not UTF-8 are kept as
    base64, never dropped."""
    try:
        return body.decode("utf-8"), False
    except UnicodeDecodeError:
        return base64.b64encode(body).decode("ascii"), True


def one_encoding(request: tuple[str, bool], response: tuple[str, bool]) -> tuple[str, str, str]:
    """(request text, response text, body_encoding) from two `body_text` results: one
    `body_encoding` covers both bodies, so when either is base64 both are."""
    if request[1] == response[1]:
        return request[0], response[0], "base64" if request[1] else "utf-8"
    texts = [
        t if b64 else base64.b64encode(t.encode("utf-8", "surrogatepass")).decode("ascii")
        for t, b64 in (request, response)
    ]
    return texts[0], texts[1], "base64"


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
