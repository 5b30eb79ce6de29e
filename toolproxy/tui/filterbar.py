"""The filter bar (`/`): `key:value` words into the store's `ExchangeFilter` (pure).

    model:gpt-4o tool:get_weather since:2026-11-01 status:failed run:g1 label:wrong_tool
    origin:replayed session:s-1 format:openai_chat parse:partial  paris weather

Keys may repeat (`tool:a tool:b`: either); words without a key are the text search; a
value may be quoted (`model:"my model"`). An unknown key or a bad value is a
`FilterError` naming it, so the bar can say what to fix.
"""

from __future__ import annotations

import shlex
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from toolproxy.store.filters import ExchangeFilter, as_utc

LISTS = {
    "session": "sessions",
    "exchange": "exchanges",
    "model": "models",
    "tool": "tools",
    "format": "wire_formats",
    "parse": "parse_statuses",
    "label": "labels",
}
SINGLE = {
    "since": "since",
    "until": "until",
    "status": "status",
    "run": "label_run",
    "origin": "origin",
}
KEYS = sorted([*LISTS, *SINGLE])


class FilterError(ValueError):
    """The bar's text is not a filter; the message says which word and why."""


def _time(value: str, key: str) -> datetime:
    try:
        return as_utc(value)
    except ValueError:
        raise FilterError(f"{key}: not an ISO-8601 time: {value!r}") from None


def parse_filter(text: str, base: ExchangeFilter | None = None) -> ExchangeFilter:
    """The filter the bar's `text` says (over `base`'s fields, e.g. origin)."""
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise FilterError(f"unbalanced quotes: {e}") from None
    fields: dict[str, Any] = {}
    free: list[str] = []
    for word in words:
        key, sep, value = word.partition(":")
        if not sep or key not in LISTS and key not in SINGLE:
            if sep and key.isidentifier() and not value.startswith("/"):  # not a URL
                raise FilterError(f"unknown key {key!r}; keys: {', '.join(KEYS)}")
            free.append(word)
            continue
        if not value:
            raise FilterError(f"{key}: needs a value ({key}:VALUE)")
        if key in LISTS:
            fields.setdefault(LISTS[key], []).append(value)
        elif key in ("since", "until"):
            fields[key] = _time(value, key)
        else:
            fields[SINGLE[key]] = value
    if free:
        fields["text"] = " ".join(free)
    start = (base or ExchangeFilter()).model_dump()
    try:
        return ExchangeFilter(**(start | fields))
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "filter"
        raise FilterError(f"{where}: {first['msg']}") from None


def describe(f: ExchangeFilter) -> str:
    """The filter back as bar text (empty for no filter)."""
    words: list[str] = []
    for key, name in LISTS.items():
        words += [f"{key}:{_quote(v)}" for v in getattr(f, name)]
    for key, name in SINGLE.items():
        value = getattr(f, name)
        if value is not None and not (name == "origin" and value == "any"):
            words.append(f"{key}:{value.isoformat() if isinstance(value, datetime) else value}")
    if f.text:
        words.append(f.text)
    return " ".join(words)


def _quote(value: str) -> str:
    return shlex.quote(value) if any(c.isspace() or c in "'\"" for c in value) else value
