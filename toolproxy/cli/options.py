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


def port(text: str) -> int:
    """A TCP port to listen on: 1 to 65535."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 1 to 65535, got {text!r}")
    return value


def count(text: str) -> int:
    """A positive whole number (a limit, repeats, threads)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, got {text!r}")
    return value


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
