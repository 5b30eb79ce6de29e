"""AWS event streams: messages read off their binary framing, whatever breaks in it."""

from __future__ import annotations

import base64
import json
import struct
import zlib

from toolproxy.wire.eventstream import (
    aws_stream,
    encode,
    is_eventstream,
    message_ends,
    messages,
)

EVENT = {
    ":event-type": "contentBlockDelta",
    ":content-type": "application/json",
    ":message-type": "event",
}


def _event(kind: str, payload: object) -> bytes:
    return encode({**EVENT, ":event-type": kind}, json.dumps(payload).encode())


def _known_message() -> bytes:
    """A message framed by hand from the specification (not by `encode`): one string
    header `:event-type` = `ping`, payload `{}`."""
    header = b"\x0b:event-type" + b"\x07" + struct.pack(">H", 4) + b"ping"
    payload = b"{}"
    total = 16 + len(header) + len(payload)
    prelude = struct.pack(">II", total, len(header))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + header + payload
    return body + struct.pack(">I", zlib.crc32(body))


def test_a_message_framed_by_the_specification_is_read_and_encode_writes_it_alike():
    known = _known_message()
    assert encode({":event-type": "ping"}, b"{}") == known
    (message,) = messages(known)
    assert message.headers == {":event-type": "ping"} and message.payload == b"{}"
    stream = aws_stream(known, True)
    assert stream.objects == [{"type": "ping"}] and stream.ended and not stream.notes


def test_every_header_type_is_read():
    header = (
        b"\x01a\x00"  # true
        + b"\x01b\x01"  # false
        + b"\x01c\x02\x07"  # byte
        + b"\x01d\x03\x00\x02"  # short
        + b"\x01e\x04\x00\x00\x00\x03"  # integer
        + b"\x01f\x05"
        + bytes(8)  # long
        + b"\x01g\x06\x00\x02\xff\x00"  # bytes
        + b"\x01h\x07\x00\x02hi"  # string
        + b"\x01i\x08"
        + bytes(8)  # timestamp
        + b"\x01j\x09"
        + bytes(16)  # uuid
    )
    total = 16 + len(header)
    prelude = struct.pack(">II", total, len(header))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + header
    body += struct.pack(">I", zlib.crc32(body))
    (message,) = messages(body)
    assert message.headers is not None
    assert message.headers["a"] is True and message.headers["b"] is False
    assert message.headers["h"] == "hi" and message.headers["g"] == b"\xff\x00"


def test_sniffed_by_content_type_or_by_a_prelude_that_holds():
    body = _event("messageStart", {"role": "assistant"})
    assert is_eventstream("application/vnd.amazon.eventstream", b"")
    assert is_eventstream(None, body)
    assert not is_eventstream("application/json", b'{"output": {}}')
    assert not is_eventstream(None, b"data: {}\n\n")
    assert not is_eventstream(None, b"\x00\x00\x00\x10" + bytes(8))  # the prelude CRC fails
    # where the API streams so, a body that is not JSON is read as one (and reported)
    assert is_eventstream(None, b"\x00garbage", expected=True)
    assert not is_eventstream(None, b' {"message": "no"}', expected=True)


def test_a_stream_cut_inside_a_message_keeps_the_messages_before_it():
    first, second = _event("a", {"n": 1}), _event("b", {"n": 2})
    stream = aws_stream(first + second[:-5], False)
    assert stream.objects == [{"n": 1, "type": "a"}]
    assert stream.notes == ["stream cut in the middle of a message"] and not stream.ended
    # cut inside the prelude
    stream = aws_stream(first + second[:7], True)
    assert stream.notes == ["stream cut in the middle of a message"] and not stream.ended
    # on a boundary, the body whole: ended
    assert aws_stream(first + second, True).ended
    assert not aws_stream(first + second, False).ended


def test_a_message_whose_checksum_fails_is_noted_and_the_next_read():
    first, second = _event("a", {"n": 1}), _event("b", {"n": 2})
    spoiled = bytearray(first)
    spoiled[-6] ^= 0xFF  # a payload byte: the message CRC no longer holds
    stream = aws_stream(bytes(spoiled) + second, True)
    assert stream.objects == [{"n": 2, "type": "b"}] and stream.events == 2
    assert stream.notes == [
        "1 unreadable event-stream message(s), first message 0: message checksum mismatch"
    ]


def test_a_broken_prelude_stops_the_reading_with_a_reason():
    first, second = _event("a", {"n": 1}), _event("b", {"n": 2})
    spoiled = bytearray(second)
    spoiled[2] ^= 0x01  # its length: the prelude CRC no longer holds
    stream = aws_stream(first + bytes(spoiled), True)
    assert stream.objects == [{"n": 1, "type": "a"}] and not stream.ended
    assert stream.notes == ["stream unreadable from message 1: prelude checksum mismatch"]
    nonsense = struct.pack(">II", 10, 50)
    stream = aws_stream(nonsense + struct.pack(">I", zlib.crc32(nonsense)), True)
    assert stream.notes == [
        "stream unreadable from message 0: lengths do not add up (message 10, headers 50)"
    ]


def test_payloads_that_are_not_json_objects_are_noted():
    stream = aws_stream(
        encode(EVENT, b"[1]") + encode(EVENT, b"{not json") + _event("ok", {}), True
    )
    assert stream.objects == [{"type": "ok"}]
    assert stream.notes[0].startswith("2 unreadable event-stream message(s), first message 0:")


def test_an_exception_or_error_message_is_the_error_shape():
    exception = {":message-type": "exception", ":exception-type": "throttlingException"}
    error = {
        ":message-type": "error",
        ":error-code": "InternalFailure",
        ":error-message": "try again",
    }
    stream = aws_stream(
        encode(exception, b'{"message":"Too many requests"}')
        + encode(error, b"")
        + encode({":message-type": "exception", ":exception-type": "x"}, b"plain words"),
        True,
    )
    assert stream.objects == [
        {"type": "error", "error": {"type": "throttlingException", "message": "Too many requests"}},
        {"type": "error", "error": {"type": "InternalFailure", "message": "try again"}},
        {"type": "error", "error": {"type": "x", "message": "plain words"}},
    ]


def test_invoke_models_chunks_are_the_events_their_bytes_hold():
    inner = {"type": "message_start", "message": {"id": "msg_1"}}
    chunk = {":event-type": "chunk", ":message-type": "event"}
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(inner).encode()).decode()})
    bad = json.dumps({"bytes": "@@not base64@@"})
    listed = json.dumps({"bytes": base64.b64encode(b"[1, 2]").decode()})
    stream = aws_stream(
        encode(chunk, payload.encode())
        + encode(chunk, bad.encode())
        + encode(chunk, listed.encode()),
        True,
    )
    assert stream.objects == [inner]
    assert "message 1: chunk bytes are not base64" in stream.notes[0]
    assert stream.notes[0].startswith("2 unreadable")


def test_message_ends_are_each_whole_messages_last_byte():
    first, second = _event("a", {}), _event("b", {})
    assert message_ends(first + second + second[:3]) == [len(first), len(first) + len(second)]
