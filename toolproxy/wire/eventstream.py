"""AWS event streams (``application/vnd.amazon.eventstream``): the binary framing of
Bedrock's ConverseStream and InvokeModelWithResponseStream. Pure.

A message is a 12-byte prelude (total length, headers length, the prelude's CRC32, all
big-endian), its headers (name length, name, a type byte, the value), the payload and the
message's CRC32. Each message becomes one JSON object of `DecodedStream.objects`:

- an event (`:message-type` event): its JSON payload, with its `:event-type` as `type`
  where the payload has none (as an SSE event's name fills one in); a `chunk` event whose
  payload is ``{"bytes": <base64>}`` (InvokeModel's) is the JSON those bytes hold, so an
  Anthropic stream sent through Bedrock reads as the one its SSE would;
- an exception or error (`:message-type` exception / error: throttling, validation, a
  model stream error) is ``{"type": "error", "error": {"type": ..., "message": ...}}``,
  the error shape every codec reads (`wire.common.error_message`).

Nothing is trusted: a prelude or message whose checksum fails, lengths that do not add
up, a header of an unknown type, a payload that is not a JSON object are noted and the
stream read on where the lengths still say where the next message starts; a body that
ends inside a message is a cut, not a bad message.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
import zlib
from collections.abc import Iterator
from typing import Any, NamedTuple

from toolproxy.wire.common import DecodedStream, JsonObject, load_json

CONTENT_TYPE = "application/vnd.amazon.eventstream"
PRELUDE = 12  # total length, headers length, prelude CRC
OVERHEAD = PRELUDE + 4  # and the message CRC
MAX_MESSAGE = 16 * 1024 * 1024  # the framing's own limit
# header value types: their fixed sizes (None: a 2-byte length, then that many bytes)
_SIZES: dict[int, int | None] = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 6: None, 7: None, 8: 8, 9: 16}


def is_eventstream(content_type: str | None, body: bytes, expected: bool = False) -> bool:
    """Whether a response body is an AWS event stream: by its content type, else by a
    first prelude whose checksum holds (a JSON or SSE body never has one); where the API
    streams so (`expected`), any body that does not start as JSON does (so a broken first
    prelude is reported as such, not as a body that is not JSON)."""
    if content_type and CONTENT_TYPE in content_type.lower():
        return True
    if expected and body and body.lstrip()[:1] not in (b"{", b"["):
        return True
    if len(body) < PRELUDE:
        return False
    total, length, crc = struct.unpack_from(">III", body)
    return zlib.crc32(body[:8]) == crc and OVERHEAD + length <= total <= MAX_MESSAGE


class Message(NamedTuple):
    """One message read off a body: where it ends, its headers and payload; or, headers
    None, the `problem` that kept it from being read (`fatal`: the lengths can no longer
    be trusted, so nothing after it can be read either)."""

    end: int
    headers: dict[str, Any] | None
    payload: bytes = b""
    problem: str | None = None
    fatal: bool = False


def messages(body: bytes) -> Iterator[Message]:
    """Each whole message of `body` in turn; it stops at a fatal problem or where the body
    ends inside a message (the caller tells that from the last message's end)."""
    at = 0
    while len(body) - at >= PRELUDE:
        total, length, crc = struct.unpack_from(">III", body, at)
        if zlib.crc32(body[at : at + 8]) != crc:
            yield Message(at, None, problem="prelude checksum mismatch", fatal=True)
            return
        if not OVERHEAD + length <= total <= MAX_MESSAGE:
            problem = f"lengths do not add up (message {total}, headers {length})"
            yield Message(at, None, problem=problem, fatal=True)
            return
        end = at + total
        if end > len(body):
            return
        (expected,) = struct.unpack_from(">I", body, end - 4)
        if zlib.crc32(body[at : end - 4]) != expected:
            yield Message(end, None, problem="message checksum mismatch")
        else:
            try:
                headers = _headers(body[at + PRELUDE : at + PRELUDE + length])
            except ValueError as exc:
                yield Message(end, None, problem=str(exc))
            else:
                yield Message(end, headers, body[at + PRELUDE + length : end - 4])
        at = end


def message_ends(body: bytes) -> list[int]:
    """The offset each whole message ends at (for its arrival time)."""
    return [message.end for message in messages(body) if message.headers is not None]


def _headers(data: bytes) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    at = 0
    while at < len(data):
        size = data[at]
        name = data[at + 1 : at + 1 + size].decode("utf-8", "replace")
        at += 1 + size
        if at >= len(data):
            raise ValueError(f"header {name!r} has no value")
        kind = data[at]
        at += 1
        if kind not in _SIZES:
            raise ValueError(f"header {name!r} has an unknown value type {kind}")
        width = _SIZES[kind]
        if width is None:
            if at + 2 > len(data):
                raise ValueError(f"header {name!r} cut short")
            (width,) = struct.unpack_from(">H", data, at)
            at += 2
        value = data[at : at + width]
        if len(value) != width:
            raise ValueError(f"header {name!r} cut short")
        at += width
        headers[name] = (
            kind == 0
            if kind in (0, 1)
            else value.decode("utf-8", "replace")
            if kind == 7
            else value
        )
    return headers


def aws_stream(body: bytes, ended: bool) -> DecodedStream:
    """`body`'s messages as JSON objects (see the module doc); `ended`: the connection
    delivered the whole body, so a body that stops on a message boundary has ended."""
    stream = DecodedStream(ended=False, events=0)
    bad: list[str] = []
    last, fatal = 0, None
    for message in messages(body):
        if message.fatal:
            fatal = f"stream unreadable from message {stream.events}: {message.problem}"
            break
        stream.events += 1
        last = message.end
        value, problem = (None, message.problem)
        if message.headers is not None:
            value, problem = _object(message.headers, message.payload)
        if value is None:
            bad.append(f"message {stream.events - 1}: {problem}")
        else:
            stream.objects.append(value)
    if fatal is not None:
        stream.notes.append(fatal)
    elif last < len(body):
        stream.notes.append("stream cut in the middle of a message")
    else:
        stream.ended = ended
    if bad:
        stream.notes.append(f"{len(bad)} unreadable event-stream message(s), first {bad[0]}")
    return stream


def _object(headers: dict[str, Any], payload: bytes) -> tuple[JsonObject | None, str | None]:
    kind = headers.get(":message-type", "event")
    if kind in ("exception", "error"):
        return _error(headers, payload), None
    value, problem = load_json(payload) if payload.strip() else ({}, None)
    if problem is None and not isinstance(value, dict):
        problem = f"expected a JSON object, got {type(value).__name__}"
    if problem is not None:
        return None, problem
    event = headers.get(":event-type")
    inner = value.get("bytes") if event == "chunk" else None
    if isinstance(inner, str):  # InvokeModelWithResponseStream: the model's own event
        try:
            value, problem = load_json(base64.b64decode(inner, validate=True))
        except binascii.Error as exc:
            return None, f"chunk bytes are not base64 ({exc})"
        if problem is None and not isinstance(value, dict):
            problem = f"chunk holds {type(value).__name__}, not a JSON object"
        return (value, None) if problem is None else (None, f"chunk bytes: {problem}")
    if isinstance(event, str):
        value.setdefault("type", event)
    return value, None


def _error(headers: dict[str, Any], payload: bytes) -> JsonObject:
    """An exception or error message as the error shape codecs read."""
    name = headers.get(":exception-type") or headers.get(":error-code") or "error"
    message = headers.get(":error-message")
    if message is None:
        value, problem = load_json(payload) if payload.strip() else (None, "no payload")
        found = value.get("message") or value.get("Message") if isinstance(value, dict) else None
        if isinstance(found, str):
            message = found
        elif problem is None:
            message = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        else:
            message = payload.decode("utf-8", "replace").strip() or "(no message)"
    return {"type": "error", "error": {"type": str(name), "message": str(message)}}


def encode(headers: dict[str, str], payload: bytes) -> bytes:
    """One message with string headers (what Bedrock sends; the scripted upstream's and
    the tests' encoder)."""
    packed = b"".join(
        bytes([len(name.encode())])
        + name.encode()
        + b"\x07"
        + struct.pack(">H", len(value.encode()))
        + value.encode()
        for name, value in headers.items()
    )
    total = OVERHEAD + len(packed) + len(payload)
    prelude = struct.pack(">II", total, len(packed))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + packed + payload
    return message + struct.pack(">I", zlib.crc32(message))
