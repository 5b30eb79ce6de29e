"""What the scripted upstream plays: replies per key, as pydantic models.

A script is data (buildable in Python, loadable from JSON or YAML); `Playback` is the only
mutable part, counting requests per key so replies play in order and ids stay stable.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolproxy.errors import UserError
from toolproxy.util.textfile import Unreadable, read_text

DEFAULT_KEY = "default"
KEY_HEADER = "x-scripted-key"


class ScriptedCall(BaseModel):
    """One tool call the scripted model emits."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="tool name")
    arguments: dict[str, Any] | str = Field(
        default_factory=dict,
        description="a dict (serialised compactly) or a raw string emitted verbatim",
    )
    id: str | None = Field(default=None, description="call id; generated when missing")


class ScriptedUsage(BaseModel):
    """Token counts to report instead of the length-based estimate."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int | None = Field(default=None, description="None: estimate from request")
    output_tokens: int | None = Field(default=None, description="None: estimate from reply")
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0


class Reply(BaseModel):
    """One scripted reply, well-formed or deliberately broken."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(default=None, description="assistant text")
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    finish_reason: str | None = Field(
        default=None, description="override; chat/anthropic verbatim, responses -> status"
    )
    usage: ScriptedUsage | None = None
    model: str | None = Field(default=None, description="model to report; default echoes")
    status: int = Field(default=200, description="HTTP status; >= 400 sends an error body")
    error_body: dict[str, Any] | str | None = Field(
        default=None, description="error body (str sent verbatim); default per format"
    )
    retry_after: float | None = Field(default=None, description="Retry-After header value")
    raw_body: str | None = Field(default=None, description="sent verbatim instead of a reply")
    raw_body_b64: str | None = Field(
        default=None,
        description="bytes sent verbatim instead of a reply, base64-encoded: a binary body"
        " (an AWS event stream, bytes that are not UTF-8)",
    )
    content_type: str | None = Field(default=None, description="for raw_body/error_body")
    stream: bool | None = Field(default=None, description="None follows the request")
    delay_s: float = Field(default=0.0, description="sleep before the status line")
    first_byte_delay_s: float = Field(default=0.0, description="after headers, before body")
    chunk_delay_s: float = Field(default=0.0, description="between SSE events")
    end_delay_s: float = Field(
        default=0.0, description="stream: after the last event, before the body's end"
    )
    cut_after_events: int | None = Field(
        default=None, description="stream: send this many events, then close, no terminator"
    )
    cut_after_bytes: int | None = Field(
        default=None, description="non-stream: send this many body bytes, then close"
    )
    reset_before_response: bool = Field(
        default=False, description="read the request, then reset the connection"
    )
    hang_s: float = Field(default=0.0, description="sleep this long, then close unanswered")
    text_chunk_size: int = Field(default=16, ge=1, description="text chars per delta event")
    args_chunk_size: int = Field(default=16, ge=1, description="argument chars per delta")
    headers: dict[str, str] = Field(default_factory=dict, description="extra headers")
    content_encoding: Literal["gzip"] | None = None


ECHO_REPLY = Reply(text="ok")


class ScriptError(UserError):
    """A script file that cannot be used."""


class Script(BaseModel):
    """Replies per key; a request's key is its x-scripted-key header, else its model."""

    model_config = ConfigDict(extra="forbid")

    replies: dict[str, list[Reply]] = Field(
        default_factory=dict, description="key -> replies played in order"
    )
    cycle: bool = Field(default=False, description="loop a key's replies instead of repeating")
    deterministic: bool = Field(default=False, description="fixed timestamps and counter-based ids")
    by_prompt: bool = Field(
        default=False,
        description="a request's key is first `<key> | <its last user message>`: one reply "
        "per task of a suite, whatever order the tasks come in",
    )

    @field_validator("replies", mode="before")
    @classmethod
    def _wrap_single(cls, value: Any) -> Any:
        # A file may give one reply per key without a list around it.
        if isinstance(value, dict):
            return {k: [v] if isinstance(v, dict | Reply) else v for k, v in value.items()}
        return value

    @classmethod
    def of(cls, *replies: Reply, key: str = DEFAULT_KEY, **options: Any) -> Script:
        """A script that plays `replies` for one key (the fallback key by default)."""
        return cls(replies={key: list(replies)}, **options)

    @classmethod
    def load(cls, path: str | Path) -> Script:
        """Read a script from a .json, .yaml or .yml file; `ScriptError` says what is wrong
        with one that cannot be read (one line per problem, with the field's path)."""
        try:
            text = read_text(path)
            data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
            return cls.model_validate(data or {})
        except Unreadable as exc:
            raise ScriptError(f"cannot read the script {path}: {exc}") from None
        except (ValueError, yaml.YAMLError) as exc:  # JSON, YAML or the script's own fields
            if isinstance(exc, ValidationError):
                problems = "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in exc.errors()
                )
            else:
                problems = " ".join(str(exc).split())
            raise ScriptError(f"the script {path} is not valid: {problems}") from None


def select_key(headers: dict[str, str], body: Any) -> str:
    """The key a request asks for: header, else the body's model, else the default."""
    key = headers.get(KEY_HEADER)
    if key:
        return key
    if isinstance(body, dict) and isinstance(body.get("model"), str) and body["model"]:
        return str(body["model"])
    return DEFAULT_KEY


def last_user_text(body: Any) -> str | None:
    """The text of a request's last user message (Chat Completions and Anthropic
    `messages`, Responses `input`), text parts joined; None when it has none."""
    if not isinstance(body, dict):
        return None
    turns = body.get("messages") if "messages" in body else body.get("input")
    if isinstance(turns, str):
        return turns
    for turn in reversed(turns if isinstance(turns, list) else []):
        if isinstance(turn, dict) and turn.get("role") == "user":
            content = turn.get("content")
            if isinstance(content, str):
                return content
            parts = content if isinstance(content, list) else []
            return "".join(
                str(p.get("text", "")) for p in parts if isinstance(p, dict) and "text" in p
            )
    return None


def prompt_key(key: str, body: Any) -> str | None:
    """`<key> | <last user message>`, the key a `by_prompt` script tries first."""
    text = last_user_text(body)
    return None if text is None else f"{key} | {text}"


class Playback:
    """Thread-safe position in a script: which reply a key plays next, and its play number."""

    def __init__(self, script: Script) -> None:
        self._lock = threading.Lock()
        self._script = script
        self._played: dict[str, int] = {}

    @property
    def script(self) -> Script:
        """The script being played."""
        return self._script

    def replace(self, script: Script) -> None:
        """Play another script from its start."""
        with self._lock:
            self._script = script
            self._played.clear()

    def reset(self) -> None:
        """Start every key over (positions and id counters)."""
        with self._lock:
            self._played.clear()

    def next_reply(self, key: str) -> tuple[str, int, Reply]:
        """Pick the reply for a request with `key`: (resolved key, 1-based play number, reply).

        An unknown key falls back to the default key; with no default it gets ECHO_REPLY.
        """
        with self._lock:
            script = self._script
            if key not in script.replies and DEFAULT_KEY in script.replies:
                key = DEFAULT_KEY
            played = self._played.get(key, 0)
            self._played[key] = played + 1
        replies = script.replies.get(key) or [ECHO_REPLY]
        index = played % len(replies) if script.cycle else min(played, len(replies) - 1)
        return key, played + 1, replies[index]
