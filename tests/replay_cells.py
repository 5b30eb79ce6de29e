"""Small replay items and candidates shared by the worker and share-dealing tests."""

from __future__ import annotations

from toolproxy.records import ToolCall
from toolproxy.replay.model import Candidate, ReplayItem, Step

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def item(item_id: str) -> ReplayItem:
    step = Step(
        messages=[{"role": "user", "content": f"weather? ({item_id})"}],
        tools=[TOOL],
        recorded_calls=[
            ToolCall(name="get_weather", arguments_raw='{"city":"Paris"}', arguments={})
        ],
    )
    return ReplayItem(item_id=item_id, kind="exchange", steps=[step])


def cand(
    name: str, concurrency: int, rate: float | None = None, url: str = "http://x/v1"
) -> Candidate:
    return Candidate(
        name=name,
        base_url=url,
        model=name,
        concurrency=concurrency,
        rate_limit=rate,
        retries=0,
        timeout_s=5,
    )
