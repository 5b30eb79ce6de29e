"""Session assignment: which earlier conversation does a request continue?

The rule (README "Sessions"), first match wins:
1. `header`            the request carries the session header (default `x-toolproxy-session`).
2. `previous_response` a Responses API request names a `previous_response_id` seen before.
3. `continued`         the request's turns start with an earlier exchange's turns plus that
                       exchange's reply (the agent appended the reply and went on).
4. `retry`             the request's turns and model equal an earlier request's exactly.
5. `new`               otherwise a fresh session id.

Turns are compared by a chained hash (h_i = sha256(h_{i-1} + turn_i)), so checking every
prefix of an n-turn conversation costs O(n). State is in memory, bounded (LRU), per proxy
process: the explicit header is the way to join sessions across proxy processes.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence

from toolproxy.records import Turn, canonical_json

Assignment = tuple[str, str, str | None]  # (session_id, source, conversation_key)


def chain_hashes(turns: Sequence[Turn], start: bytes = b"") -> list[bytes]:
    """Hash of every prefix of `turns`: element i covers turns[0..i]."""
    out: list[bytes] = []
    h = start
    for turn in turns:
        h = hashlib.sha256(h + canonical_json(turn.model_dump()).encode()).digest()
        out.append(h)
    return out


class _Lru(OrderedDict[bytes | str, str]):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: bytes | str, value: str) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


class SessionTracker:
    """Assigns session ids to exchanges in the order they complete."""

    def __init__(
        self,
        header: str = "x-toolproxy-session",
        limit: int = 200_000,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex[:16],
    ) -> None:
        self.header = header.lower()
        self._after_reply = _Lru(limit)  # hash(turns + reply) -> session
        self._request = _Lru(limit)  # hash(turns) -> session
        self._responses = _Lru(limit)  # provider response id -> session
        self._new_id = new_id

    def assign(
        self,
        headers: dict[str, str],
        turns: Sequence[Turn],
        reply: Turn | None,
        previous_response_id: str | None = None,
        response_id: str | None = None,
        model: str | None = None,
    ) -> Assignment:
        """Pick the session for one exchange and remember it for later requests."""
        hashes = chain_hashes(turns)
        # A re-send is the same turns to the same model; another model is another run.
        resend = hashlib.sha256(hashes[-1] + (model or "").encode()).digest() if hashes else None
        session, source = self._lookup(headers, hashes, resend, previous_response_id)
        key: str | None = None
        if resend is not None:
            self._request.put(resend, session)
        if reply is not None:
            after = chain_hashes([reply], start=hashes[-1] if hashes else b"")[0]
            self._after_reply.put(after, session)
            key = after.hex()[:32]
        if response_id:
            self._responses.put(response_id, session)
        return session, source, key

    def _lookup(
        self,
        headers: dict[str, str],
        hashes: list[bytes],
        resend: bytes | None,
        previous: str | None,
    ) -> tuple[str, str]:
        explicit = headers.get(self.header, "").strip()
        if explicit:
            return explicit, "header"
        if previous and previous in self._responses:
            return self._responses[previous], "previous_response"
        for h in reversed(hashes):
            if h in self._after_reply:
                return self._after_reply[h], "continued"
        if resend is not None and resend in self._request:
            return self._request[resend], "retry"
        return self._new_id(), "new"
