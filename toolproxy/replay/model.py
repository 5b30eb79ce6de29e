"""The replay contract: candidates, what is replayed, and what a replay produced. Pure.

A replay re-sends captured model turns (or expectation cases) to candidate models on
OpenAI-compatible endpoints and records what they did, so the same grader can compare
them with the production model. Vocabulary:

- `Candidate`  one model on one endpoint (config file under `replays/`).
- `ReplayItem` one unit of work: a captured exchange, a captured session (several turns),
  or an expectation case; it carries the requests as Chat Completions messages + tools.
- `Step`       one model turn of an item, with what the production model did there
  (recorded calls) and the tool results the agent sent back after it.
- a *cell*     (run, candidate, item, repeat): the unit of resumability. A cell is done
  when its `CellResult` row is in the store; a run started again skips done cells and
  re-sends everything else.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from toolproxy.records import ToolCall

# the recorded (production) model's name beside the candidates: its grading run is
# `<run>:recorded`, so no candidate may take the name
RECORDED = "recorded"
CHAT_PATH = "/chat/completions"  # what replay sends to, under a candidate's base URL


class Candidate(BaseModel):
    """One model on one OpenAI-compatible endpoint."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="short unique name; used in run names and reports")
    base_url: str = Field(description="OpenAI-compatible base URL, e.g. http://host:8000/v1")
    model: str = Field(description="the model name sent in requests")
    api_key_env: str | None = Field(
        default=None, description="NAME of the environment variable holding the key"
    )
    params: dict[str, Any] = Field(default_factory=dict, description="extra request params")
    concurrency: int = Field(default=4, ge=1, le=1024)
    rate_limit: float | None = Field(default=None, gt=0, description="requests per second")
    timeout_s: float = Field(default=60.0, gt=0)
    retries: int = Field(default=3, ge=0, le=20, description="on 429/5xx/transport errors")
    baseline: bool = False

    def target(self) -> Target:
        """Where its requests go and the model they name, as a replayed exchange records
        them."""
        url = urlsplit(self.base_url)
        port = url.port or (443 if url.scheme == "https" else 80)
        path = url.path.rstrip("/") + CHAT_PATH
        return Target(url.scheme or "http", url.hostname or "", port, path, self.model)


class Target(NamedTuple):
    """A candidate's endpoint and model, as the exchanges of its replayed turns hold them."""

    scheme: str
    host: str
    port: int
    path: str
    model: str

    def shown(self) -> str:
        """`model 'm' at http://host:port/v1` (the base URL the config would give)."""
        base = self.path.removesuffix(CHAT_PATH)
        return f"model {self.model!r} at {self.scheme}://{self.host}:{self.port}{base}"


class ReplayConfig(BaseModel):
    """A replay configuration file."""

    model_config = ConfigDict(extra="forbid")

    candidates: list[Candidate]
    repeats: int = Field(default=1, ge=1, le=100, description="k: repeats per item")
    feedback_retries: int = Field(
        default=2, ge=0, le=10, description="closed loop: corrections fed back per turn"
    )
    stream: Literal["as_recorded", "always", "never"] = "as_recorded"


class RecordedResult(BaseModel):
    """A tool result the agent sent back after a step, by the call id it answered."""

    call_id: str | None = None
    content: str = ""
    is_error: bool | None = None


class Step(BaseModel):
    """One model turn to replay."""

    exchange_id: str | None = Field(default=None, description="the recorded exchange, if any")
    messages: list[dict[str, Any]] = Field(
        description="Chat Completions messages of the recorded request (the first step's "
        "are sent as is; later steps append only what the agent added after the reply)"
    )
    tools: list[dict[str, Any]] = Field(default_factory=list, description="Chat tools block")
    params: dict[str, Any] = Field(
        default_factory=dict, description="recorded params: tool_choice, temperature, ..."
    )
    stream: bool = False
    recorded_calls: list[ToolCall] = Field(default_factory=list)
    recorded_text: str | None = None
    recorded_results: list[RecordedResult] = Field(default_factory=list)


class ReplayItem(BaseModel):
    """One unit of work: a captured exchange, a captured session, or a case."""

    item_id: str = Field(description="stable: exchange id, session id, or case id")
    kind: Literal["exchange", "session", "case"]
    session_id: str | None = None
    model: str | None = Field(default=None, description="the production model, if recorded")
    wire_format: str | None = Field(default=None, description="as recorded (converted to Chat)")
    steps: list[Step]
    case_id: str | None = Field(default=None, description="the expectation case, if any")


class TurnRecord(BaseModel):
    """What a candidate did at one step (one or more requests with feedback retries)."""

    step: int
    attempt: int = Field(default=0, description="0, then 1.. for closed-loop corrections")
    exchange_id: str = Field(description="id of the replayed exchange row written")
    calls: list[ToolCall] = Field(default_factory=list)
    text: str | None = None
    finish_reason: str | None = None
    error_kind: str | None = None
    error: str | None = None
    ttft_ms: float | None = None
    tps: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


class CellResult(BaseModel):
    """The outcome of one cell: a row of `replay_cells`. Its presence marks the cell done."""

    run: str
    candidate: str
    item_id: str
    repeat: int
    finished_at: str = Field(description="ISO-8601 UTC")
    status: Literal["completed", "diverged", "failed"]
    steps_done: int = 0
    steps_total: int = 0
    diverged_at: int | None = Field(default=None, description="step where it diverged")
    divergence: str | None = Field(default=None, description="how it diverged, one line")
    error_kind: str | None = Field(default=None, description="for failed: the last error")
    error: str | None = None
    retry_count: int = Field(default=0, description="closed-loop corrections sent")
    recovered: bool | None = Field(
        default=None, description="a correction led to a valid call (None: none needed)"
    )
    first_exchange_id: str | None = Field(default=None, description="grades attach here")
    exchange_ids: list[str] = Field(default_factory=list)
    turns: list[TurnRecord] = Field(default_factory=list)


class CallDiff(BaseModel):
    """Recorded vs replayed, per call: a row of `replay_diffs`."""

    run: str
    candidate: str
    item_id: str
    repeat: int
    step: int
    index: int
    recorded_tool: str | None = None
    replayed_tool: str | None = None
    recorded_arguments: Any = None
    replayed_arguments: Any = None
    same_tool: bool = False
    same_arguments: bool = False
    label: str | None = Field(default=None, description="grader label of the replayed call")
