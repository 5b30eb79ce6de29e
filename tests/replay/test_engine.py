"""The replay matrix: personalities × items × k repeats against one scripted upstream."""

from __future__ import annotations

import asyncio
from collections import Counter

from toolproxy.records import ToolCall
from toolproxy.replay.engine import MemorySink, done_in_plan, plan_cells, run_matrix
from toolproxy.replay.loop import Backoff
from toolproxy.replay.model import Candidate, ReplayConfig, ReplayItem, Step
from toolproxy.scripted import Reply, Script, ScriptedCall

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": SCHEMA}}
    for n in ("get_weather", "get_time")
]


def item(item_id: str) -> ReplayItem:
    step = Step(
        messages=[{"role": "user", "content": f"weather? ({item_id})"}],
        tools=TOOLS,
        recorded_calls=[
            ToolCall(
                call_id="r",
                name="get_weather",
                arguments_raw='{"city":"Paris"}',
                arguments={"city": "Paris"},
            )
        ],
    )
    return ReplayItem(item_id=item_id, kind="exchange", steps=[step])


def calls(name: str = "get_weather", **args) -> list[ScriptedCall]:
    return [ScriptedCall(name=name, arguments=args or {"city": "Paris"})]


RIGHT = Reply(tool_calls=calls())
BAD = Reply(tool_calls=calls(town="Paris"))
PERSONALITIES: dict[str, tuple[list[Reply], dict]] = {
    "good": ([RIGHT], {}),
    "wrong": ([Reply(tool_calls=calls("get_time"))], {}),
    "halluc": ([Reply(tool_calls=calls(city="Lyon"))], {}),
    "recovers": ([BAD, RIGHT], {}),
    "never": ([BAD], {}),
    "slow": ([Reply(tool_calls=calls(), delay_s=0.2)], {"concurrency": 3}),
    "limited": ([Reply(status=429, retry_after=1), RIGHT], {}),
    "err500": ([Reply(status=500)], {"retries": 2}),
    "garbage": ([Reply(raw_body="<html>nope</html>", content_type="text/html")], {}),
    "cut": ([Reply(tool_calls=calls(), cut_after_events=1)], {"retries": 1}),
    "hang": ([Reply(hang_s=5)], {"timeout_s": 0.3, "retries": 0, "concurrency": 3}),
}


class Waits:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def config(upstream, names, repeats=3, **fields) -> ReplayConfig:
    candidates = []
    for name in names:
        options = {"concurrency": 1, "timeout_s": 5.0, "retries": 2, **PERSONALITIES[name][1]}
        candidates.append(
            Candidate(name=name, base_url=upstream.url + "/v1", model=name, **options)
        )
    return ReplayConfig(candidates=candidates, repeats=repeats, **fields)


async def test_personalities_with_k3_each_fail_only_themselves(scripted_upstream):
    scripted_upstream.set_script(
        Script(replies={k: v[0] for k, v in PERSONALITIES.items()}, cycle=True)
    )
    cfg = config(scripted_upstream, list(PERSONALITIES), stream="always")
    sink, waits, seen = MemorySink(), Waits(), []
    results = await run_matrix(
        cfg,
        [item("a")],
        "run1",
        sink,
        set(),
        {},
        "recorded",
        None,
        None,
        progress=lambda c, done, total: seen.append((c, done, total)),
        backoff=Backoff(sleep=waits, rng=lambda: 0.0),
    )
    by = {name: [r for r in results if r.candidate == name] for name in PERSONALITIES}
    assert all(len(rs) == 3 for rs in by.values()) and sorted(sink.cells, key=id) == sorted(
        results, key=id
    )
    statuses = {n: {r.status for r in rs} for n, rs in by.items()}
    assert statuses == {
        "good": {"completed"},
        "wrong": {"diverged"},
        "halluc": {"diverged"},
        "recovers": {"completed"},
        "never": {"diverged"},
        "slow": {"completed"},
        "limited": {"completed"},
        "err500": {"failed"},
        "garbage": {"failed"},
        "cut": {"failed"},
        "hang": {"failed"},
    }
    assert {r.divergence for r in by["wrong"]} == {"called get_time instead of get_weather"}
    assert {r.divergence for r in by["halluc"]} == {"arguments differ: city 'Lyon' vs 'Paris'"}
    assert {(r.retry_count, r.recovered) for r in by["recovers"]} == {(1, True)}
    assert {(r.retry_count, r.recovered) for r in by["never"]} == {(2, False)}
    kinds = {n: {r.error_kind for r in by[n]} for n in ("err500", "garbage", "cut", "hang")}
    assert kinds == {
        "err500": {"server_error"},
        "garbage": {"bad_response"},
        "cut": {"cut_stream"},
        "hang": {"timeout"},
    }
    sent = Counter(r.body["model"] for r in scripted_upstream.requests)
    assert sent["good"] == 3 and sent["never"] == 9 and sent["recovers"] == 6
    assert sent["err500"] == 9 and sent["garbage"] == 3 and sent["cut"] == 6
    assert sent["limited"] == 6 and waits.waits.count(1.0) == 3  # Retry-After honoured
    assert all(r.body.get("stream") is True for r in scripted_upstream.requests)
    assert {r.repeat for r in by["good"]} == {0, 1, 2}
    assert [(c, d, t) for c, d, t in seen if c == "good"] == [("good", i, 3) for i in (1, 2, 3)]
    ids = [t[5].exchange_id for t in sink.turns]
    assert len(ids) == len(set(ids))


async def test_done_cells_are_skipped_and_a_finished_run_sends_nothing(scripted_upstream):
    scripted_upstream.set_script(Script.of(RIGHT))
    cfg = config(scripted_upstream, ["good"], repeats=2)
    items = [item("a"), item("b")]
    sink = MemorySink()
    done = {("good", "a", 1)}
    first = await run_matrix(cfg, items, "r", sink, done, {}, "recorded", None, None)
    assert sorted((r.item_id, r.repeat) for r in first) == [("a", 0), ("b", 0), ("b", 1)]
    again = await run_matrix(cfg, items, "r", sink, sink.done() | done, {}, "recorded", None, None)
    assert again == [] and len(scripted_upstream.requests) == 3


async def test_an_interrupted_run_resumes_without_duplicates(scripted_upstream):
    # The second cell hangs; the run is cancelled while it waits (as a kill would stop it).
    scripted_upstream.set_script(Script.of(RIGHT, Reply(hang_s=30), RIGHT, RIGHT))
    cfg = config(scripted_upstream, ["good"], repeats=1)
    items = [item("a"), item("b"), item("c")]
    sink = MemorySink()
    first_done = asyncio.Event()
    task = asyncio.create_task(
        run_matrix(
            cfg,
            items,
            "r",
            sink,
            set(),
            {},
            "recorded",
            None,
            None,
            progress=lambda *_: first_done.set(),
        )
    )
    await first_done.wait()
    while len(scripted_upstream.requests) < 2:  # the hanging request is in flight
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert [c.item_id for c in sink.cells] == ["a"]
    resumed = await run_matrix(cfg, items, "r", sink, sink.done(), {}, "recorded", None, None)
    assert sorted(r.item_id for r in resumed) == ["b", "c"]
    assert Counter(c.item_id for c in sink.cells) == {"a": 1, "b": 1, "c": 1}
    prompts = [r.body["messages"][0]["content"] for r in scripted_upstream.requests]
    assert prompts.count("weather? (a)") == 1 and prompts.count("weather? (b)") == 2


async def test_a_sink_that_breaks_fails_its_cells_without_stopping_the_others(scripted_upstream):
    scripted_upstream.set_script(Script.of(RIGHT))

    class Fragile(MemorySink):
        def write_cell(self, result):
            if result.item_id == "b":
                raise OSError("disk full")
            super().write_cell(result)

    cfg = config(scripted_upstream, ["good"], repeats=1)
    sink = Fragile()
    results = await run_matrix(
        cfg, [item("a"), item("b"), item("c")], "r", sink, set(), {}, "recorded", None, None
    )
    failed = [r for r in results if r.status == "failed"]
    assert [(r.item_id, r.error_kind) for r in failed] == [("b", "internal")]
    assert "disk full" in failed[0].error
    assert sorted(c.item_id for c in sink.cells) == ["a", "c"]  # b is played again next time


async def test_keys_and_rate_limit_reach_the_endpoint(scripted_upstream):
    scripted_upstream.set_script(Script.of(RIGHT))
    cfg = config(scripted_upstream, ["good"], repeats=2)
    cfg.candidates[0].rate_limit = 1000.0
    await run_matrix(
        cfg, [item("a")], "r", MemorySink(), set(), {"good": "sk-test"}, "recorded", None, None
    )
    auth = {r.headers["authorization"] for r in scripted_upstream.requests}
    assert auth == {"Bearer sk-test"} and len(scripted_upstream.requests) == 2


def test_plan_cells_lists_what_is_left_per_candidate(scripted_upstream):
    cfg = config(scripted_upstream, ["good", "wrong"], repeats=2)
    todo = plan_cells(cfg, [item("a")], {("good", "a", 0)})
    assert {k: [(i.item_id, r) for i, r in v] for k, v in todo.items()} == {
        "good": [("a", 1)],
        "wrong": [("a", 0), ("a", 1)],
    }


def test_the_done_cells_of_a_plan_and_how_many_others_the_run_holds(scripted_upstream):
    cfg = config(scripted_upstream, ["good"], repeats=2)
    done = {("good", "a", 0), ("good", "a", 2), ("good", "old", 0), ("gone", "a", 0)}
    held, others = done_in_plan(cfg, [item("a")], done)
    assert held == {("good", "a", 0)}  # repeat 2 is past k, "old" is not planned
    assert others == 2  # a candidate not in the config is not counted
