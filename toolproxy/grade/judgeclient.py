"""Calling an OpenAI-compatible Chat Completions endpoint, synchronously: the `openai` SDK
adapter the LLM judge uses (replay's async calls are `toolproxy.replay.client`).

`make_client(base_url, model, key_env)` returns an `LlmClient` pinned to one model;
`client.complete(messages, **params)` returns a `Completion` holding the reply's text or,
when the endpoint fails, a stable `error_kind` and a message saying what happened. Endpoint
failures are values, not exceptions: callers decide what a failure means for them.

The API key is read from the environment variable named by `key_env` when the client is
made, handed to the SDK, and never put in a result or a message. An unset variable sends a
placeholder, so keyless local endpoints (vLLM, llama.cpp, Ollama) work without one.

Stable strings (`Completion.error_kind`):
    timeout       no complete reply within `timeout_s` (after the retries)
    connection    the endpoint could not be reached, or dropped the connection
    http_status   the endpoint answered with an HTTP error status (4xx, 5xx)
    bad_response  the endpoint answered 200 with something that is not a chat completion
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import openai
from pydantic import BaseModel, Field

from toolproxy.capture.redact import without
from toolproxy.wire.common import exception_text, one_line

ErrorKind = Literal["timeout", "connection", "http_status", "bad_response"]
NO_KEY = "no-key"  # what an unset key variable sends: keyless endpoints ignore it
MAX_MESSAGE = 500


class Completion(BaseModel):
    """One call's outcome: the reply's text, or why there is none."""

    text: str | None = Field(default=None, description="the first choice's text (None: error)")
    model: str | None = Field(default=None, description="the model the endpoint says answered")
    finish_reason: str | None = None
    error_kind: ErrorKind | None = Field(default=None, description="None exactly when it worked")
    error: str | None = Field(default=None, description="what went wrong, one line")

    @property
    def ok(self) -> bool:
        """Whether the endpoint gave a reply."""
        return self.error_kind is None


@dataclass
class LlmClient:
    """A client pinned to one endpoint and one model."""

    sdk: openai.OpenAI
    model: str
    key_env: str

    def complete(self, messages: Sequence[dict[str, Any]], **params: Any) -> Completion:
        """Send `messages` to the pinned model (extra `params` go into the request body).
        A failure's message never holds the key: providers quote the key they refuse, and
        the message becomes the judged field's stored detail."""
        got = self._complete(messages, **params)
        if got.error is None:
            return got
        # the key out before the cut, which could leave part of it
        error = one_line(without(got.error, self.sdk.api_key), MAX_MESSAGE)
        return got.model_copy(update={"error": error})

    def _complete(self, messages: Sequence[dict[str, Any]], **params: Any) -> Completion:
        try:
            response = self.sdk.chat.completions.create(
                model=self.model,
                messages=list(messages),  # type: ignore[arg-type]  # plain dicts are the wire form
                **params,
            )
        except openai.APITimeoutError:
            return _failed("timeout", f"no reply within {self.sdk.timeout} s")
        except openai.APIConnectionError as exc:
            return _failed("connection", f"cannot reach {self.sdk.base_url}: {exception_text(exc)}")
        except openai.APIStatusError as exc:
            hint = f" (is ${self.key_env} set?)" if exc.status_code in (401, 403) else ""
            return _failed("http_status", f"HTTP {exc.status_code}{hint}: {exc.message}")
        except openai.APIResponseValidationError as exc:
            return _failed("bad_response", f"not a chat completion: {exc.message}")
        return _read(response)


def make_client(
    base_url: str,
    model: str,
    key_env: str,
    *,
    timeout_s: float = 60.0,
    retries: int = 2,
) -> LlmClient:
    """A client for the endpoint at `base_url` (e.g. `https://api.openai.com/v1`), pinned to
    `model`, with the API key from `$key_env`. `retries` re-sends on timeouts, connection
    errors, 408/409/429 and 5xx (the SDK's rule, with its backoff)."""
    sdk = openai.OpenAI(
        base_url=base_url,
        api_key=os.environ.get(key_env) or NO_KEY,
        timeout=timeout_s,
        max_retries=retries,
    )
    return LlmClient(sdk=sdk, model=model, key_env=key_env)


def _read(response: Any) -> Completion:
    """The text of a completion; anything else that parsed (a bare string, an object
    without choices) is a bad response, since the SDK only validates loosely."""
    choices = getattr(response, "choices", None)
    if not choices:
        return _failed("bad_response", f"not a chat completion: {repr(response)}")
    choice = choices[0]
    message = getattr(choice, "message", None)
    text = getattr(message, "content", None)
    if not isinstance(text, str):
        return _failed("bad_response", "the reply has no text content")
    return Completion(
        text=text,
        model=getattr(response, "model", None),
        finish_reason=getattr(choice, "finish_reason", None),
    )


def _failed(kind: ErrorKind, message: str) -> Completion:
    return Completion(error_kind=kind, error=message)  # `complete` scrubs and cuts it
