"""Newline-delimited JSON bodies (``application/x-ndjson``: Ollama's streams). Pure."""

from __future__ import annotations

from toolproxy.wire.common import DecodedStream, load_json

KINDS = ("ndjson", "jsonl", "json-seq")  # content types that say it


def is_ndjson(content_type: str | None, body: bytes, expected: bool = False) -> bool:
    """Whether a response body is NDJSON: by its content type; or, where the API streams
    it (`expected`), by its shape: more than one line, each line an object."""
    if content_type and any(kind in content_type.lower() for kind in KINDS):
        return True
    if not expected:
        return False
    lines = [line.strip() for line in body.split(b"\n") if line.strip()]
    return len(lines) > 1 and all(line.startswith(b"{") for line in lines)


def ndjson_stream(body: bytes, ended: bool) -> DecodedStream:
    """Each line of `body` JSON-decoded; bad lines noted and skipped. A last line that
    does not parse where the body was cut (`ended` False, or no newline after it) is the
    cut, not a bad line."""
    lines = body.split(b"\n")
    stream = DecodedStream(ended=ended and body.endswith(b"\n"), events=0)
    bad: list[str] = []
    for position, line in enumerate(lines):
        if not line.strip():
            continue
        stream.events += 1
        value, error = load_json(line)
        if error is None and not isinstance(value, dict):
            error = f"expected a JSON object, got {type(value).__name__}"
        if error is not None:
            if position == len(lines) - 1 and not stream.ended:
                stream.notes.append("stream cut in the middle of a line")
            else:
                bad.append(f"line {position + 1}: {error}")
            continue
        stream.objects.append(value)
    if bad:
        stream.notes.append(f"{len(bad)} line(s) not JSON ({bad[0]})")
    return stream
