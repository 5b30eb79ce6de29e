"""Model turns: the recorded exchanges labeling and replay planning start from."""

from __future__ import annotations

from typing import Any

from toolproxy.store.filters import USABLE_TURN, ExchangeFilter, origin_sql, where_sql
from toolproxy.store.reader import Reader
from toolproxy.store.rows import ModelTurn

_TURNS = """
WITH base AS (
  SELECT e.exchange_id, e.session_id, e.started_at, e.wire_format, e.parse_status,
         e.error_kind, e.status_code, e.streamed, e.messages, e.system, e.request_params,
         e.assistant_text, e.response_id,
         coalesce(e.model_returned, e.model_requested) AS model,
         ({usable}) AS usable, ({matched}) AS matched
  FROM exchanges e WHERE {origin}
)
SELECT * FROM base WHERE {selected}
ORDER BY started_at, exchange_id
"""


def model_turns(r: Reader, where: ExchangeFilter, whole_sessions: bool = False) -> list[ModelTurn]:
    """The exchanges `where` matches (only usable model turns when `where.model_turns`), in
    time order, each marked `usable` (a model API, parsed, answered without an error) and
    `matched`. With `whole_sessions`, also every other exchange of a session that has a
    matched usable turn (a session is replayed whole). `where.origin` bounds both."""
    params: dict[str, Any] = {}
    origin = origin_sql(where.origin)
    matched = where_sql(where.model_copy(update={"origin": "any"}), params)
    selected = "matched"
    if whole_sessions:
        selected += " OR session_id IN (SELECT session_id FROM base WHERE matched AND usable)"
    sql = _TURNS.format(usable=USABLE_TURN, matched=matched, origin=origin, selected=selected)
    return r.typed(ModelTurn, sql, params)
