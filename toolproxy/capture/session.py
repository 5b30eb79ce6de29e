"""Session assignment: which earlier conversation does a request continue?

The rule (docs/capture.md "Sessions"), first match wins:
1. `header`            the request carries the session header (default `x-toolproxy-session`).
2. `previous_response` a Responses API request names a `previous_response_id` seen before.
   `conversation`      a Responses API request names a stored `conversation` seen before
                       (the API holds its turns: the request sends only the new ones).
3. `retry`             the same turns to the same model as an earlier request that failed
                       (error, timeout, cut stream, 4xx/5xx: no complete reply), sent after
                       that one ended and within `failed_window` seconds of it.
4. `continued`         the request's turns start with an earlier exchange's turns plus that
                       exchange's reply (the agent appended the reply and went on).
5. `retry`             the same turns to the same model as an earlier request that got a
                       complete reply nobody has continued, sent after it ended, on the same
                       client connection (when known), within `retry_window` seconds
                       (default 5 s; 0 turns this case off).
6. `new`               otherwise a fresh session id.

So independent conversations that open the same way (the same system prompt and "Hi", a
fixed task run by several agents or trials) are separate sessions: concurrent openings
overlap in time, and later ones come after the first was continued or after the window.
A retry from another client address never joins.

When several earlier exchanges match (identical conversations with identical replies), a
request is attributed to the one nobody has continued yet, then on the same client
connection, then from the same client address, then the most recent. Each exchange is
continued at most once before a second continuation may land on it, so N identical agents
give N sessions with their own turn counts, even when the traffic cannot say which agent
is which (contents are identical then, so only the counts are observable). Limits: agents
that share one connection pool and run identical conversations in lockstep may swap
sessions between turns; sequential identical single-turn trials closer than `retry_window`
look like retries (send the session header, or set the window to 0).

Tool results are linked to the exchange whose response made the call they answer: the
nearest preceding assistant turn in the request that made a call with that id, and the
exchange that produced that turn (in this session when several did). A Responses request
chained by `previous_response_id` links to the response it names; one going on with a
stored `conversation`, to the latest exchange of that conversation that made the call.
`result_links` is one entry per tool turn of the request, None when the producing exchange
was not seen here.

Turns are compared by a chained hash (h_i = sha256(h_{i-1} + turn_i)), so checking every
prefix of an n-turn conversation costs O(n). State is in memory, bounded (LRU), per proxy
process: the explicit header is the way to join sessions across proxy processes.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from toolproxy.records import Turn, canonical_json

RETRY_WINDOW_S = 5.0
FAILED_WINDOW_S = 600.0
_PER_KEY = 64  # exchanges remembered per conversation state (identical conversations)

ResultLink = tuple[str, int]  # (exchange id that made the call, the call's index in it)
_Chain = tuple[str | None, str | None]  # a request's previous_response_id, its conversation


class Assignment(NamedTuple):
    session_id: str
    source: str
    conversation_key: str | None
    result_links: list[ResultLink | None]  # one per tool turn of the request


@dataclass(frozen=True)
class Attempt:
    """What the tracker needs to know about one exchange besides its turns."""

    exchange_id: str = ""
    started: float = 0.0  # request start (epoch seconds)
    ended: float = 0.0  # response end, or when it failed
    ok: bool | None = None  # a complete reply; None: infer from the reply being present
    connection: str | None = None  # the client connection's id
    peer: str | None = None  # the client's address (host only)


@dataclass(eq=False)
class _Seen:
    attempt: Attempt
    session: str
    ok: bool
    calls: tuple[str | None, ...] = ()
    conversation: str | None = None  # the stored conversation it went on with
    continued: bool = False  # a later request continued it or retried it
    order: int = 0  # completion order: the most recent wins ties


def chain_hashes(turns: Sequence[Turn], start: bytes = b"") -> list[bytes]:
    """Hash of every prefix of `turns`: element i covers turns[0..i]."""
    out: list[bytes] = []
    h = start
    for turn in turns:
        h = hashlib.sha256(
            h + canonical_json(turn.model_dump()).encode("utf-8", "surrogatepass")
        ).digest()
        out.append(h)
    return out


class _Lru(OrderedDict[bytes | str, list[_Seen]]):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def add(self, key: bytes | str, seen: _Seen) -> None:
        entries = self.get(key) or []
        entries.append(seen)
        del entries[:-_PER_KEY]
        self[key] = entries
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
        retry_window: float = RETRY_WINDOW_S,
        failed_window: float = FAILED_WINDOW_S,
    ) -> None:
        self.header = header.lower()
        self.retry_window = retry_window
        self.failed_window = failed_window
        self._after_reply = _Lru(limit)  # hash(turns + reply) -> exchanges
        self._request = _Lru(limit)  # hash(turns, model) -> exchanges
        self._responses = _Lru(limit)  # provider response id -> exchange
        self._conversations = _Lru(limit)  # a stored conversation's id -> its exchanges
        self._new_id = new_id
        self._order = 0

    def assign(
        self,
        headers: dict[str, str],
        turns: Sequence[Turn],
        reply: Turn | None,
        previous_response_id: str | None = None,
        response_id: str | None = None,
        model: str | None = None,
        attempt: Attempt | None = None,
        conversation: str | None = None,
    ) -> Assignment:
        """Pick the session for one exchange and remember it for later requests."""
        attempt = attempt or Attempt()
        hashes = chain_hashes(turns)
        # A re-send is the same turns to the same model; another model is another run.
        resend = (
            hashlib.sha256(hashes[-1] + (model or "").encode("utf-8", "surrogatepass")).digest()
            if hashes
            else None
        )
        chain = (previous_response_id, conversation)
        session, source = self._lookup(headers, hashes, resend, chain, attempt)
        links = self._links(turns, hashes, session, chain)
        self._order += 1
        ok = attempt.ok if attempt.ok is not None else reply is not None
        calls = tuple(c[0] for c in reply.calls) if reply is not None else ()
        seen = _Seen(attempt, session, ok, calls, conversation, order=self._order)
        key: str | None = None
        if resend is not None:
            self._request.add(resend, seen)
        if reply is not None:
            after = chain_hashes([reply], start=hashes[-1] if hashes else b"")[0]
            self._after_reply.add(after, seen)
            key = after.hex()[:32]
        if response_id:
            self._responses.add(response_id, seen)
        if conversation:
            self._conversations.add(conversation, seen)
        return Assignment(session, source, key, links)

    def _lookup(
        self,
        headers: dict[str, str],
        hashes: list[bytes],
        resend: bytes | None,
        chain: _Chain,
        attempt: Attempt,
    ) -> tuple[str, str]:
        explicit = headers.get(self.header, "").strip()
        if explicit:
            return explicit, "header"
        previous, conversation = chain
        if previous and previous in self._responses:
            return self._responses[previous][-1].session, "previous_response"
        if conversation and conversation in self._conversations:
            return self._conversations[conversation][-1].session, "conversation"
        earlier = self._request.get(resend, []) if resend is not None else []
        if conversation:  # a new stored conversation retries or continues no other
            earlier = [seen for seen in earlier if seen.conversation == conversation]
        failed = self._retry_of(earlier, attempt, ok=False)
        if failed is not None:
            return failed.session, "retry"
        for h in reversed(hashes):
            found = self._after_reply.get(h, [])
            if conversation:
                found = [seen for seen in found if seen.conversation == conversation]
            if found:
                chosen = _best(found, attempt)
                chosen.continued = True
                return chosen.session, "continued"
        answered = self._retry_of(earlier, attempt, ok=True)
        if answered is not None:
            return answered.session, "retry"
        return self._new_id(), "new"

    def _retry_of(self, earlier: list[_Seen], attempt: Attempt, ok: bool) -> _Seen | None:
        window = self.retry_window if ok else self.failed_window
        eligible = [
            seen
            for seen in earlier
            if seen.ok is ok
            and not seen.continued
            and attempt.started >= seen.attempt.ended
            and attempt.started - seen.attempt.ended <= window
            and not (attempt.peer and seen.attempt.peer and attempt.peer != seen.attempt.peer)
            and not (ok and _other_connection(attempt, seen.attempt))
        ]
        if not eligible:
            return None
        chosen = _best(eligible, attempt)
        chosen.continued = True  # superseded: a further re-send is compared with this one
        return chosen

    def _links(
        self, turns: Sequence[Turn], hashes: list[bytes], session: str, chain: _Chain
    ) -> list[ResultLink | None]:
        links: list[ResultLink | None] = []
        for j, turn in enumerate(turns):
            if turn.role != "tool":
                continue
            links.append(self._link(turns, hashes, j, session, chain))
        return links

    def _link(
        self,
        turns: Sequence[Turn],
        hashes: list[bytes],
        j: int,
        session: str,
        chain: _Chain,
    ) -> ResultLink | None:
        call_id = turns[j].call_id
        for i in range(j - 1, -1, -1):
            ids = [c[0] for c in turns[i].calls] if turns[i].role == "assistant" else []
            if call_id is None and turns[i].role == "assistant":
                # naming no call (the legacy functions API), the k-th such result after the
                # nearest assistant turn answers its k-th call without an id, or nothing
                k = sum(t.role == "tool" and t.call_id is None for t in turns[i + 1 : j])
                unnamed = [n for n, known in enumerate(ids) if known is None]
                return self._made(hashes[i], session, unnamed[k]) if k < len(unnamed) else None
            if call_id in ids:
                return self._made(hashes[i], session, ids.index(call_id))
        if call_id is None:
            return None
        previous, conversation = chain
        chained = self._responses.get(previous, [])[-1:] if previous else []
        if not chained and conversation:  # the latest of its exchanges that made the call
            chained = self._conversations.get(conversation, [])[::-1]
        for seen in chained:
            if call_id in seen.calls:
                return seen.attempt.exchange_id, seen.calls.index(call_id)
        return None

    def _made(self, reply: bytes, session: str, index: int) -> ResultLink | None:
        """The call `index` of the exchange that answered with the turn hashed `reply`
        (this session's, else any session's latest), or None when none is known."""
        producers = self._after_reply.get(reply, [])
        mine = [p for p in producers if p.session == session] or producers
        return (mine[-1].attempt.exchange_id, index) if mine else None


def _other_connection(a: Attempt, b: Attempt) -> bool:
    """Known to come over different client connections. An agent re-sends an answered
    request over its own kept-alive connection; another agent has connections of its own."""
    return bool(a.connection and b.connection and a.connection != b.connection)


def _best(candidates: list[_Seen], attempt: Attempt) -> _Seen:
    """Not yet continued, then same connection, then same address, then most recent."""

    def rank(seen: _Seen) -> tuple[bool, bool, bool, int]:
        a = seen.attempt
        return (
            not seen.continued,
            bool(attempt.connection) and a.connection == attempt.connection,
            bool(attempt.peer) and a.peer == attempt.peer,
            seen.order,
        )

    return max(candidates, key=rank)
