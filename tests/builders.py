"""Capture rows for tests: an exchange with the fields every seeded capture repeats.

`chat_exchange` makes a Chat Completions exchange to a local endpoint (`http://h:80`,
proxy `p`); `**HOSTED` makes it one to a hosted API instead. Its child rows (tools
offered, calls, results) come from `toolproxy.store.segments.child_rows`, as the recorder's do.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from toolproxy.records import Exchange

LOCAL: dict[str, Any] = {
    "proxy_id": "p",
    "session_source": "new",
    "method": "POST",
    "scheme": "http",
    "host": "h",
    "port": 80,
    "path": "/v1/chat/completions",
    "wire_format": "openai_chat",
    "parse_status": "ok",
}
HOSTED: dict[str, Any] = {
    "proxy_id": "p1",
    "scheme": "https",
    "host": "api.example.com",
    "port": 443,
    "status_code": 200,
}


def chat_exchange(
    exchange_id: str, session_id: str, started_at: datetime, **fields: Any
) -> Exchange:
    """An exchange with `LOCAL`'s fields, then `fields` over them."""
    ids = {"exchange_id": exchange_id, "session_id": session_id, "started_at": started_at}
    return Exchange(**(LOCAL | ids | fields))
