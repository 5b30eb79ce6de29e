"""One cell of a replay: a candidate plays one item, turn by turn, closed loop.

For each step the candidate gets the conversation so far: the first step's recorded
messages; later, what it was sent before, its own reply, the tool results, and what the
agent added after that turn (`Step.messages` of the later step, less the tool messages
that answered the recorded calls: the candidate's own call ids are answered instead).

Per step:
1. send, backing off on retryable errors (`reply.RETRYABLE`) up to `candidate.retries`;
   every request goes through the candidate's rate limit; each answered or failed attempt
   is a `TurnRecord` with a fresh exchange id, written through the sink at once;
2. closed loop: while some call fails `check` (strict JSON, then JSON Schema), tell the
   model what was wrong (`feedback.describe`, as the tool result of that call) and ask
   again, at most `feedback_retries` times; `retry_count` counts these, `recovered` says
   whether the corrections ended with valid calls (None: none were needed);
3. compare with the recorded calls (`divergence.pair_calls`: same tools, arguments equal
   by value, any order). Equal: answer each call with the recorded result of its
   counterpart and go on. Different: with `tools_mode="live"` run the candidate's calls
   on the live tools and go on (a cell that finishes "completed" this way keeps its first
   divergence as a note); otherwise, or when a call cannot run live, or at the last step,
   stop: "diverged", with `diverged_at` the step where it stopped and `divergence` saying
   how (`divergence.describe_divergence`).

A step whose recording made no calls and whose candidate made none goes on, and so does
every step of an expectation case (kind "case"): a case has no recorded reply to diverge
from, its grade says how the candidate did; divergence is for captured sessions. A request
that still fails after its retries stops the cell as "failed", keeping the steps done.

Statuses (`CellResult.status`): completed, diverged, failed.
"""

from __future__ import annotations

import asyncio
import inspect
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from toolproxy.records import ToolCall
from toolproxy.replay import client as candidate_client
from toolproxy.replay.divergence import describe_divergence, pair_calls
from toolproxy.replay.feedback import NOT_RUN, CallCheck, describe, make_check
from toolproxy.replay.model import (
    Candidate,
    CellResult,
    RecordedResult,
    ReplayItem,
    Step,
    TurnRecord,
)
from toolproxy.replay.reply import CandidateReply

if TYPE_CHECKING:
    from toolproxy.replay.engine import LiveTools, Sink

ToolsMode = Literal["recorded", "live"]
StreamMode = Literal["as_recorded", "always", "never"]
Sleep = Callable[[float], Awaitable[None]]


@dataclass
class Backoff:
    """Exponential backoff with jitter: `base`·2ⁿ capped at `cap`, then a random 50–100 %
    of it; a larger Retry-After wins (itself capped at `retry_after_cap`)."""

    base: float = 0.5
    cap: float = 30.0
    retry_after_cap: float = 120.0
    sleep: Sleep = asyncio.sleep
    rng: Callable[[], float] = random.random

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `attempt` + 1 (`attempt` counts from 0)."""
        ceiling = min(self.cap, self.base * 2**attempt)
        wait = ceiling * (0.5 + 0.5 * self.rng())
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.retry_after_cap))
        return wait


class TokenBucket:
    """At most `rate` requests per second, shared by one candidate's workers (no bursts
    beyond `burst`)."""

    def __init__(
        self,
        rate: float,
        burst: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._sleep = sleep
        self._tokens = burst
        self._last = clock()
        self._lock = asyncio.Lock()

    async def acquire(self) -> float:
        """Take one token, waiting for it if needed; returns the seconds waited."""
        async with self._lock:  # waiters queue here, so tokens go out in arrival order
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
            self._last = now
            if self._tokens >= 1:
                self._tokens -= 1
                return 0.0
            wait = (1 - self._tokens) / self.rate
            await self._sleep(wait)
            self._tokens = 0.0
            self._last = max(self._clock(), now + wait)
            return wait


@dataclass
class Pace:
    """How one candidate's requests go out: a shared SDK client, rate limit and backoff."""

    client: Any = None  # a `client.make_async_client` client; None: one per request
    bucket: TokenBucket | None = None
    backoff: Backoff = field(default_factory=Backoff)


async def send(
    candidate: Candidate,
    messages: Sequence[dict[str, Any]],
    step: Step,
    stream: bool,
    key: str | None,
    pace: Pace,
) -> CandidateReply:
    """One request with retries: retryable errors are sent again after `pace.backoff`;
    client errors and bad responses are not (the same request would fail the same way)."""
    tries = 0
    while True:
        if pace.bucket is not None:
            await pace.bucket.acquire()
        reply = await candidate_client.acall(
            candidate, messages, step.tools, step.params, stream, key, client=pace.client
        )
        if reply.ok or not reply.retryable or tries >= candidate.retries:
            return reply
        await pace.backoff.sleep(pace.backoff.delay(tries, reply.retry_after))
        tries += 1


def recorded_answers(step: Step, following: Step | None) -> list[RecordedResult]:
    """The recorded result for each recorded call of `step`, by call id, else by position;
    taken from `step.recorded_results`, else from the next step's tool messages."""
    results = list(step.recorded_results)
    if not results and following is not None:
        results = [
            RecordedResult(call_id=m.get("tool_call_id"), content=_text(m.get("content")))
            for m in following.messages
            if m.get("role") == "tool"
        ]
    by_id = {r.call_id: r for r in results if r.call_id}
    answers = []
    for i, call in enumerate(step.recorded_calls):
        hit = by_id.get(call.call_id) if call.call_id else None
        if hit is None:
            hit = results[i] if i < len(results) else RecordedResult(call_id=call.call_id)
        answers.append(hit)
    return answers


def added_messages(step: Step, previous: Step | None) -> list[dict[str, Any]]:
    """What the agent added at `step`, less its tool messages: those answer the previous
    recorded reply (the only assistant message before them), and the candidate's own
    calls are answered in their place."""
    if previous is None:
        return list(step.messages)
    return [m for m in step.messages if m.get("role") != "tool"]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _tool_message(call_id: str | None, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


async def _settle(result: object) -> None:
    # A sink may write synchronously (the store) or asynchronously.
    if inspect.isawaitable(result):
        await result


def wants_stream(step: Step, mode: StreamMode) -> bool:
    """Whether `step` is sent streamed under the config's stream mode."""
    return step.stream if mode == "as_recorded" else mode == "always"


@dataclass
class _Cell:
    """What a cell has done so far."""

    turns: list[TurnRecord] = field(default_factory=list)
    retry_count: int = 0
    recoveries: list[bool] = field(default_factory=list)
    steps_done: int = 0
    diverged_at: int | None = None
    divergence: str | None = None


async def run_cell(
    candidate: Candidate,
    item: ReplayItem,
    repeat: int,
    key: str | None,
    grader_check: CallCheck | None,
    tools_mode: ToolsMode,
    live_tools: LiveTools | None,
    feedback_retries: int,
    sink: Sink,
    *,
    run: str,
    stream: StreamMode = "as_recorded",
    pace: Pace | None = None,
) -> CellResult:
    """Play `item` to `candidate` (repeat number `repeat`), write each turn and the cell's
    result through `sink`, and return the result. Candidate failures are values."""
    check = grader_check or make_check()
    pace = pace or Pace()
    cell = _Cell()
    conversation: list[dict[str, Any]] = []
    steps = item.steps

    def finish(status: str, reply: CandidateReply | None = None) -> CellResult:
        failed = reply is not None and not reply.ok
        return CellResult(
            run=run,
            candidate=candidate.name,
            item_id=item.item_id,
            repeat=repeat,
            finished_at=datetime.now(UTC).isoformat(),
            status=status,  # type: ignore[arg-type]  # one of the three literals
            steps_done=cell.steps_done,
            steps_total=len(steps),
            diverged_at=cell.diverged_at,
            divergence=cell.divergence,
            error_kind=reply.error_kind if failed and reply else None,
            error=reply.error if failed and reply else None,
            retry_count=cell.retry_count,
            recovered=all(cell.recoveries) if cell.recoveries else None,
            first_exchange_id=cell.turns[0].exchange_id if cell.turns else None,
            exchange_ids=[t.exchange_id for t in cell.turns],
            turns=cell.turns,
        )

    async def done(result: CellResult) -> CellResult:
        await _settle(sink.write_cell(result))
        return result

    for index, step in enumerate(steps):
        previous = steps[index - 1] if index else None
        request = conversation + added_messages(step, previous)
        attempt = 0
        while True:
            reply = await send(candidate, request, step, wants_stream(step, stream), key, pace)
            turn = reply.turn(index, attempt, uuid.uuid4().hex)
            cell.turns.append(turn)
            await _settle(
                sink.write_turn(
                    run, candidate, item, repeat, index, step, turn, request, reply=reply
                )
            )
            if not reply.ok:
                return await done(finish("failed", reply))
            checks = [check(call, step.tools) for call in reply.calls]
            if all(c.valid for c in checks):
                if attempt:
                    cell.recoveries.append(True)
                break
            if attempt >= feedback_retries:
                if attempt:
                    cell.recoveries.append(False)
                break
            answers = [
                _tool_message(call.call_id, NOT_RUN if c.valid else describe(c, call.name))
                for call, c in zip(reply.calls, checks, strict=True)
            ]
            request = [*request, reply.assistant_message(), *answers]
            attempt += 1
            cell.retry_count += 1
        cell.steps_done = index + 1
        said = [*request, reply.assistant_message()]
        last = index == len(steps) - 1
        if item.kind == "case" or (not reply.calls and not step.recorded_calls):
            # a case has no recorded reply to diverge from: its grade says how it did
            conversation = said
            continue
        pairs = pair_calls(step.recorded_calls, reply.calls)
        if pairs is not None:
            answers_rec = recorded_answers(step, None if last else steps[index + 1])
            conversation = said + [
                _tool_message(call.call_id, answers_rec[pairs[i]].content)
                for i, call in enumerate(reply.calls)
            ]
            continue
        how = describe_divergence(step.recorded_calls, reply.calls, reply.text)
        live: list[dict[str, Any]] | str = "not run live"
        if not last and tools_mode == "live" and live_tools is not None and reply.calls:
            live = await _run_live(reply.calls, live_tools)
            how = f"{how}; {live}" if isinstance(live, str) else how
        if isinstance(live, str):  # the replay stops here; this is where it diverged
            cell.diverged_at, cell.divergence = index, how
            return await done(finish("diverged"))
        if cell.diverged_at is None:  # went on: keep the first divergence as a note
            cell.diverged_at, cell.divergence = index, f"{how} (went on with live tools)"
        conversation = said + live
    return await done(finish("completed"))


async def _run_live(calls: Sequence[ToolCall], live_tools: LiveTools) -> list[dict[str, Any]] | str:
    """Tool messages from running `calls` live, or why one of them could not run."""
    messages = []
    for call in calls:
        if call.name is None or not isinstance(call.arguments, dict):
            return f"{call.name} not run live: its arguments are not a JSON object"
        result = await live_tools.call(call.name, call.arguments)
        if result is None:
            return f"{call.name} not run live: unknown tool, or not read-only/idempotent"
        messages.append(_tool_message(call.call_id, result.content))
    return messages
