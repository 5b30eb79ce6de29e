"""Server-sent events: split a recorded text/event-stream body into events.

Follows the WHATWG event-stream grammar (lines end in CRLF, LF or CR; ``:`` starts a
comment; a blank line dispatches; ``data`` lines join with ``\\n``), except that a trailing
event with no closing blank line is returned rather than dropped: a recorded stream that was
cut short still carries whatever arrived, and the caller decides what it is worth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Only these three end a line in an event stream; str.splitlines() would also split on
# U+2028 and friends, which JSON written with ensure_ascii=False may carry inside strings.
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its type (``message`` unless an ``event:`` line said), data, id."""

    event: str = "message"
    data: str = ""
    id: str | None = None


def iter_sse_events(data: bytes) -> tuple[list[SseEvent], bool]:
    """Split an event-stream body into events.

    Returns ``(events, ended_on_boundary)``. The flag is False when the body stopped in the
    middle of an event (no blank line after its last field, or mid-line); that trailing
    event is still included when it has data. Comments (``: ping``) and ``retry:`` lines are
    skipped; an event with no ``data:`` line is not dispatched, as the spec says.
    """
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = _LINE_END.split(text)
    # A body that ends with a line terminator splits into a final empty string, which is
    # not a blank line of the stream; a body that does not is cut mid-line.
    terminated = lines[-1] == ""
    if terminated:
        lines.pop()

    events: list[SseEvent] = []
    name: str | None = None
    parts: list[str] = []
    event_id: str | None = None
    pending = False
    for line in lines:
        if line == "":
            if parts:
                events.append(SseEvent(name or "message", "\n".join(parts), event_id))
            name, parts, event_id, pending = None, [], None, False
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        pending = True
        if field == "data":
            parts.append(value)
        elif field == "event":
            name = value
        elif field == "id" and "\0" not in value:
            event_id = value
    if parts:
        events.append(SseEvent(name or "message", "\n".join(parts), event_id))
    return events, terminated and not pending


_LINE = re.compile(rb"\r\n|\r|\n")


def event_ends(data: bytes) -> list[int]:
    """Where each event `iter_sse_events` returns ends in `data`: the byte offset just past
    its dispatching blank line (`len(data)` for a trailing event cut short). One offset per
    event, in order, so a recorded chunk's arrival time can be given to each event."""
    ends: list[int] = []
    has_data = False
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    for m in _LINE.finditer(data, start):
        line = data[start : m.start()]
        start = m.end()
        if not line:
            if has_data:
                ends.append(m.end())
            has_data = False
        elif not line.startswith(b":") and line.partition(b":")[0] == b"data":
            has_data = True
    if start < len(data) and data[start:].partition(b":")[0] == b"data":
        has_data = True  # a last line cut before its line end
    if has_data:
        ends.append(len(data))
    return ends
