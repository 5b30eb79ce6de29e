"""Command-line parsing: a bad option is refused by the parser, in one line, before anything
starts (types for ports, URLs, counts; a parser whose errors are one line)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import NoReturn
from urllib.parse import urlsplit

from toolproxy.capture import limits


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming where the usage is (not the usage
    itself, which buries the error under a screenful of options)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _checked[T](check: Callable[[str], T], text: str) -> T:
    try:
        return check(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def flush_seconds(text: str) -> float:
    """--flush-interval: the addon's range."""
    return _checked(limits.flush_seconds, text)


def retry_seconds(text: str) -> float:
    """--retry-window: the addon's range (0: retries are never told apart)."""
    return _checked(limits.retry_seconds, text)


def name(text: str) -> str:
    """A header or query parameter name: anything but blank."""
    return _checked(limits.name, text)


def dotted_path(text: str) -> str:
    """--redact-json: keys joined by dots (the addon's rule: none of them empty)."""
    return _checked(limits.dotted_path, text)


JUDGE_KEY_ENV = "TOOLPROXY_JUDGE_API_KEY"  # read for the judge's key when set


def judge_key_env(text: str) -> str:
    """--judge-key-env: the name of an environment variable holding a key, which must then
    hold one: a variable named and left unset would send every request without it (leave
    the option out for an endpoint that takes no key). Never quotes `text`: it may be the
    key itself."""
    from toolproxy.replay.config import key_env_problem  # pydantic: only when given

    if problem := key_env_problem(text, "--judge-key-env"):
        raise argparse.ArgumentTypeError(problem)
    value = os.environ.get(text)
    if not value:
        state = "empty" if value == "" else "not set"
        raise argparse.ArgumentTypeError(
            f"environment variable {text} is {state}; export it, or leave the option out "
            "for an endpoint that takes no key"
        )
    return text


def add_judge_key_env_arg(p: argparse.ArgumentParser) -> None:
    """--judge-key-env, for every command that calls the judge; read it with
    `judge_key_variable` (argparse would check a default, and the default may be unset)."""
    p.add_argument(
        "--judge-key-env",
        type=judge_key_env,
        default=None,
        help="environment variable holding the judge's API key (default: "
        f"{JUDGE_KEY_ENV}, read when set; a variable named here must be set)",
    )


def judge_key_variable(args: argparse.Namespace) -> str:
    """The variable the judge's key is read from: the one named, else JUDGE_KEY_ENV."""
    return args.judge_key_env or JUDGE_KEY_ENV


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


def add_redaction_args(p: argparse.ArgumentParser) -> None:
    """The redaction options `record` and `import` share, each value checked as the addon
    checks it (a blank name or a path with an empty key redacted nothing, silently)."""
    for flag, kind, says in (
        ("--redact-header", name, "extra secret header"),
        ("--redact-query", name, "extra secret query param"),
        ("--redact-json", dotted_path, "dotted JSON path to drop from bodies"),
    ):
        p.add_argument(flag, action="append", default=[], type=kind, help=says)
