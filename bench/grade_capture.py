"""A capture holding N recorded tool calls and the expectation file that grades them.

The calls are `bench_grade.make_workload`'s (right ones and the usual failures), written as
a proxy writes them (`exchanges`, `tools_offered`, `tool_calls` segment rows, through
`SegmentWriter`) and then compacted, as a capture of that size would be. Two shapes:

- `schemas=20`   every case calls one of 20 tools (the same 20 schemas throughout)
- `schemas=None` every case has its own tool and schema (a capture with many schema
                 versions, BFCL's worst case)

The cases file is JSONL, one case per exchange, written by `expectations.render_cases`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_grade import make_schemas, make_workload  # type: ignore[import-not-found]
from bench_store import exchange_row  # type: ignore[import-not-found]

from toolproxy import store
from toolproxy.grade.expectations import render_cases
from toolproxy.records import ToolCall, ToolOffered, schema_hash
from toolproxy.store.segments import SegmentWriter

BATCH = 5_000


def build(folder: Path, calls: int, schemas: int | None, seed: int = 7) -> tuple[Path, Path, int]:
    """Write the capture and its cases file under `folder`: (capture, cases, cases count)."""
    tools = make_schemas(schemas or calls)
    work = make_workload(calls, tools, seed, distinct=schemas is None)
    capture = folder / "capture"
    store.init_capture(capture)
    writer = SegmentWriter(capture, "bench")
    started = datetime(2026, 1, 1, tzinfo=UTC)
    batch: dict[str, list[dict[str, Any]]] = {
        "exchanges": [],
        "tools_offered": [],
        "tool_calls": [],
    }
    cases = []
    for i, (case, observation) in enumerate(work):
        case = case.model_copy(update={"exchange_id": f"ex-{i}"})
        cases.append(case)
        ex = exchange_row(i) | {
            "exchange_id": case.exchange_id,
            "session_id": f"s-{i // 3}",
            "started_at": started.isoformat(),
            "finish_reason": "tool_calls",
        }
        batch["exchanges"].append(ex)
        link = {k: ex[k] for k in ("exchange_id", "session_id", "started_at")}
        for pos, tool in enumerate(observation.offered):
            offered = ToolOffered(
                position=pos,
                name=tool["name"],
                parameters=tool["parameters"],
                schema_hash=schema_hash(tool["parameters"]),
            )
            batch["tools_offered"].append(link | offered.model_dump(mode="json"))
        for call in observation.calls:
            row = ToolCall(
                index=call.index,
                call_id=f"call-{i}-{call.index}",
                name=call.name,
                arguments_raw=call.arguments_raw,
                arguments=call.arguments,
                parse_error=call.parse_error,
            )
            batch["tool_calls"].append(link | row.model_dump(mode="json"))
        if len(batch["exchanges"]) >= BATCH:
            writer.write(batch)
            batch = {k: [] for k in batch}
    writer.write(batch)
    store.compact(capture)
    cases_file = folder / "cases.jsonl"
    cases_file.write_text(render_cases(cases, "jsonl"), encoding="utf-8")
    return capture, cases_file, len(cases)
