"""The capture options' rules, written once: the addon enforces them when mitmdump loads it,
and `toolproxy record`'s parser checks them before mitmdump starts. Pure: each check returns
the value or raises ValueError with the rule in words (the caller names the option)."""

from __future__ import annotations

import os
from collections.abc import Mapping

CAPTURE_ENV = "TOOLPROXY_CAPTURE"  # the capture every command and the addon default to
DEFAULT_CAPTURE = "captures/default"  # without it
FLUSH_SECONDS = (0.01, 10.0)  # how often the recorder writes its buffered rows
RETRY_SECONDS = (0.0, 3600.0)  # 0: retries are never told apart from new requests


def default_capture(environ: Mapping[str, str] = os.environ) -> str:
    """The capture directory used where none is named: $TOOLPROXY_CAPTURE (not blank),
    else `captures/default` (relative to the working directory)."""
    return environ.get(CAPTURE_ENV, "").strip() or DEFAULT_CAPTURE


def seconds(value: str | float, bounds: tuple[float, float]) -> float:
    """`value` (text or a number) as seconds within `bounds`, both ends included."""
    low, high = bounds
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not low <= number <= high:  # also refuses nan
        raise ValueError(f"must be between {low:g} and {high:g} seconds, got {value!r}")
    return number


def flush_seconds(value: str | float) -> float:
    """toolproxy_flush_interval / --flush-interval."""
    return seconds(value, FLUSH_SECONDS)


def retry_seconds(value: str | float) -> float:
    """toolproxy_retry_window / --retry-window."""
    return seconds(value, RETRY_SECONDS)


def name(text: str) -> str:
    """A header or query parameter name: anything but blank."""
    if not text.strip():
        raise ValueError(f"expected a name, not blank: {text!r}")
    return text


def dotted_path(text: str) -> str:
    """A JSON path for redaction: keys joined by dots, none of them empty."""
    if not text.strip() or any(not key for key in text.split(".")):
        raise ValueError(
            f"expected a dotted JSON path such as messages.content or api_key, got {text!r}"
        )
    return text
