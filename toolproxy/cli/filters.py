"""The store's filter (`ExchangeFilter`) as command-line options, one way for every command.

`add_filter_args(parser, skip=...)` adds the options; `filter_from_args(args)` builds the
filter from them (a bad time or `--label` without `--label-run` is a `UserError`).
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from toolproxy.errors import UserError

# records.WireFormat and records.ParseStatus (the parser is built without importing
# pydantic): closed sets, where a value outside one (a typo) would select nothing, silently
WIRE_FORMATS = (
    "openai_chat",
    "openai_responses",
    "anthropic_messages",
    "ollama_chat",
    "gemini",
    "bedrock_converse",
    "mcp",
    "unknown",
)
PARSE_STATUSES = ("ok", "partial", "error", "unparsed")

FIELDS = (
    "session",
    "exchange",
    "model",
    "tool",
    "wire_format",
    "since",
    "until",
    "status",
    "parse_status",
    "label",
    "label_run",
    "text",
    "origin",
)


def add_filter_args(
    p: argparse.ArgumentParser, skip: tuple[str, ...] = (), origin: str = "any"
) -> None:
    """The filter's options (all but `skip`); each list option can be repeated. `origin` is
    the command's default for --origin (`label` learns from captured traffic only)."""
    options: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
        "session": (("--session",), {"action": "append", "help": "only these sessions"}),
        "exchange": (("--exchange",), {"action": "append", "help": "only these exchanges"}),
        "model": (("--model",), {"action": "append", "help": "requested or returned model"}),
        "tool": (("--tool",), {"action": "append", "help": "turns that called these tools"}),
        "wire_format": (
            ("--wire-format",),
            {
                "action": "append",
                "choices": WIRE_FORMATS,
                "metavar": "FORMAT",
                "help": ", ".join(WIRE_FORMATS),
            },
        ),
        "since": (("--since",), {"help": "started at or after this ISO-8601 time"}),
        "until": (("--until",), {"help": "started before this ISO-8601 time"}),
        "status": (
            ("--status",),
            {"choices": ["ok", "failed"], "help": "failed: upstream error or status >= 400"},
        ),
        "parse_status": (
            ("--parse-status",),
            {
                "action": "append",
                "choices": PARSE_STATUSES,
                "metavar": "STATUS",
                "help": ", ".join(PARSE_STATUSES),
            },
        ),
        "label": (("--label",), {"action": "append", "help": "labels earned in --label-run"}),
        "label_run": (("--label-run",), {"help": "the grading run --label reads"}),
        "text": (("--text",), {"help": "text in the messages, the reply or the calls"}),
    }
    for name, (flags, kwargs) in options.items():
        if name not in skip:
            p.add_argument(*flags, dest=name, **kwargs)
    if "origin" not in skip:
        add_origin_arg(p, origin)


def add_origin_arg(p: argparse.ArgumentParser, default: str) -> None:
    """--origin: exchanges captured by a proxy, written by a replay, or any."""
    p.add_argument(
        "--origin",
        choices=["captured", "replayed", "any"],
        default=default,
        help=f"captured by a proxy or written by a replay (default: {default})",
    )


def parse_time(value: str | None, option: str) -> datetime | None:
    """An ISO-8601 time from the command line; a naive time is taken as UTC."""
    if value is None:
        return None
    from toolproxy.store.filters import as_utc

    try:
        return as_utc(value)
    except ValueError:
        raise UserError(f"{option}: not an ISO-8601 time: {value!r}") from None


def filter_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The filter's fields from the options `add_filter_args` added (absent ones left out)."""
    given = {name: getattr(args, name) for name in FIELDS if hasattr(args, name)}
    renames = {
        "session": "sessions",
        "exchange": "exchanges",
        "model": "models",
        "tool": "tools",
        "wire_format": "wire_formats",
        "parse_status": "parse_statuses",
        "label": "labels",
    }
    fields = {renames.get(k, k): v for k, v in given.items() if v is not None}
    for key in ("since", "until"):
        if key in fields:
            fields[key] = parse_time(fields[key], f"--{key}")
    if "since" in fields and "until" in fields and fields["until"] <= fields["since"]:
        raise UserError(
            f"--until {given['until']} is not after --since {given['since']}: "
            "the window holds no time"
        )
    return fields


def filter_from_args(args: argparse.Namespace) -> Any:
    """`ExchangeFilter` from the options (see `filter_fields`)."""
    from toolproxy.store.filters import ExchangeFilter

    fields = filter_fields(args)
    if getattr(args, "capture", None) is not None:  # ids may be prefixes of recorded ones
        fields = resolve_prefixes(args.capture, fields)
    try:
        return ExchangeFilter(**fields)
    except ValueError as exc:
        raise UserError(f"--label needs --label-run ({exc})") from None


def resolve_prefixes(capture: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """`fields` with each --session / --exchange value that is a unique prefix (like git's)
    of a recorded id replaced by that id; an unknown or ambiguous one is a `UserError` (the
    ambiguous one lists its matches)."""
    wanted = {k: fields[k] for k in ("sessions", "exchanges") if fields.get(k)}
    if not wanted:
        return fields
    from toolproxy import store
    from toolproxy.store.queries.exchanges import MATCHES_SHOWN, ids_starting

    resolved = dict(fields)
    with store.reading(capture) as r:
        for key, values in wanted.items():
            column, what = (
                ("session_id", "session") if key == "sessions" else ("exchange_id", "exchange")
            )
            resolved[key] = [
                one_id(ids_starting(r, column, v), v, what, MATCHES_SHOWN) for v in values
            ]
    return resolved


def one_id(found: list[str], prefix: str, what: str, shown: int) -> str:
    """The one id `found` for `prefix`, or why there is not exactly one (`what`: session,
    exchange, or "" for either)."""
    if len(found) == 1:
        return found[0]
    if not found:
        raise UserError(f"no {what} id is or starts with {prefix!r}")
    more = " …" if len(found) > shown else ""
    kind = f"{what} id" if what else "id"
    raise UserError(
        f"{prefix!r} starts more than one {kind}: {', '.join(found[:shown])}{more}; give more of it"
    )
