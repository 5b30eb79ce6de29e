"""Command-line parsing: a bad option is refused by the parser, in one line, before anything
starts (types for ports, URLs, counts; a parser whose errors are one line)."""

from __future__ import annotations

import argparse
from typing import NoReturn
from urllib.parse import urlsplit


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming where the usage is (not the usage
    itself, which buries the error under a screenful of options)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def flush_seconds(text: str) -> float:
    """--flush-interval: the addon's range."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.01 <= value <= 10:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be between 0.01 and 10 seconds, got {text!r}")
    return value


def retry_seconds(text: str) -> float:
    """--retry-window: the addon's range (0: retries are never told apart)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= 3600:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be between 0 and 3600 seconds, got {text!r}")
    return value


def name(text: str) -> str:
    """A header or query parameter name: anything but blank."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a name, not blank: {text!r}")
    return text


def dotted_path(text: str) -> str:
    """--redact-json: keys joined by dots (the addon's rule: none of them empty)."""
    if not text.strip() or any(not key for key in text.split(".")):
        raise argparse.ArgumentTypeError(
            f"expected a dotted JSON path such as messages.content or api_key, got {text!r}"
        )
    return text


def _whole(text: str, low: int, high: int | None, says: str) -> int:
    """`text` as a whole number within [low, high] (no upper bound: None), else `says`."""
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"{says}, got {text!r}")
    return value


def port(text: str) -> int:
    """A TCP port to listen on: 1 to 65535."""
    return _whole(text, 1, 65535, "a port is a number from 1 to 65535")


def count(text: str) -> int:
    """A positive whole number (a limit, repeats, threads)."""
    return _whole(text, 1, None, "expected a whole number of 1 or more")


def base_url(text: str) -> str:
    """An upstream base URL: http(s)://host[:port][/path]."""
    parts = urlsplit(text)
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        parts = parts._replace(netloc="")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"expected a base URL such as https://api.openai.com, got {text!r}"
        )
    return text


def kappa(text: str) -> float:
    """A kappa bound: a number from -1 to 1."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not -1 <= value <= 1:  # also refuses nan
        raise argparse.ArgumentTypeError(f"a kappa is a number from -1 to 1, got {text!r}")
    return value
