"""Body taps: observe a streamed body chunk by chunk without changing a byte.

mitmproxy calls a tap for every chunk it forwards (and once with b"" at the end). The tap
keeps a copy, capped at `limit` bytes, and the arrival times the metrics need: the first
and last byte's, and each kept chunk's (its offset in the copy, its time: an event stream's
events get their times from these, off the hot path). It is the only code on the hot path,
so it does nothing but append and read the clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class BodyTap:
    """Callable stream hook: returns every chunk unchanged, keeps a capped copy."""

    limit: int
    clock: Callable[[], float] = time.time
    chunks: list[bytes] = field(default_factory=list)
    arrivals: list[tuple[int, float]] = field(default_factory=list)  # (offset, time) per chunk
    size: int = 0
    kept: int = 0
    first_at: float | None = None
    last_at: float | None = None
    ended_at: float | None = None

    def __call__(self, chunk: bytes) -> bytes:
        if chunk:
            now = self.clock()
            if self.first_at is None:
                self.first_at = now
            self.last_at = now
            self.size += len(chunk)
            room = self.limit - self.kept
            if room > 0:
                piece = chunk if len(chunk) <= room else chunk[:room]
                self.chunks.append(piece)
                self.arrivals.append((self.kept, now))
                self.kept += len(piece)
        else:
            self.ended_at = self.clock()
        return chunk

    @property
    def truncated(self) -> bool:
        return self.size > self.kept

    @property
    def ended(self) -> bool:
        return self.ended_at is not None

    def body(self) -> bytes:
        return b"".join(self.chunks)


@dataclass
class RawExchange:
    """Everything observed about one HTTP exchange, before parsing. No secrets removed yet."""

    exchange_id: str
    started_at: float
    method: str
    scheme: str
    host: str
    port: int
    path: str
    request_headers: list[tuple[str, str]]
    request_body: bytes
    request_size: int = 0
    request_end: float | None = None
    status_code: int | None = None
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    response_started: float | None = None
    response_body: bytes = b""
    response_size: int = 0
    first_byte: float | None = None
    last_byte: float | None = None
    arrivals: list[tuple[int, float]] = field(default_factory=list)  # BodyTap.arrivals
    ended_at: float | None = None
    response_complete: bool = True
    truncated: bool = False
    error: str | None = None
    client_connection: str | None = None  # the client connection's id (sessions only)
    client_peer: str | None = None  # the client's address, host only (sessions only)
