"""What pricing adds to `toolproxy report`: the per-run metrics (what a report computes
anyway) vs the cost of the same cases priced three ways, side by side in one run.

* metrics: `compute_run` over the cases (the reference);
* price file: every case priced by a per-token rule;
* genai-prices, repeated usage: cases at api.openai.com whose usage repeats (20 shapes);
* genai-prices, distinct usage: every case's usage is different (the worst case);
* genai-prices, unpriced: a local endpoint's model, which the database cannot price (what
  a report of a vLLM or Ollama run meets), every case's usage different.

Run: .venv/bin/python bench/bench_cost.py [--cases 100000]
Prints cases/s for each and its time relative to the metrics (median of 3 rounds).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime

from toolproxy.grade.cost import run_cost
from toolproxy.grade.grades import CaseGrade
from toolproxy.grade.metrics import CaseRecord, compute_run
from toolproxy.grade.prices import Call, Pricer, PriceRule

AT = datetime(2025, 6, 1, tzinfo=UTC)
LIVE = ("gpt-4o-mini", "api.openai.com", 443)


def cases(n: int, distinct: bool, local: bool = False) -> list[CaseRecord]:
    out = []
    model, host, port = ("qwen2.5-7b", "127.0.0.1", 8000) if local else LIVE
    for i in range(n):
        tin, tout = (1000 + i, 50 + i % 7) if distinct else (1000 + i % 20, 50)
        grade = CaseGrade(
            case_id=f"c{i}", passed=i % 3 > 0, exchange_id=f"x{i}", model="gpt-4o-mini",
            label=None if i % 3 else "wrong_tool", expected_tools=["t"],
            called_tools=["t", "t"] if i % 10 == 0 else ["t"],
        )  # fmt: skip
        call = Call(
            model=model, host=host, port=port, path="/v1/chat/completions",
            input_tokens=tin, output_tokens=tout, at=AT,
        )  # fmt: skip
        out.append(CaseRecord(grade=grade, input_tokens=tin, output_tokens=tout, call=call))
    return out


def median_time(fn: Callable[[], object], rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cases", type=int, default=100_000)
    n = ap.parse_args().cases
    repeated, distinct, local = cases(n, False), cases(n, True), cases(n, True, local=True)
    rule = Pricer([PriceRule(model="*", input_per_mtok=0.15, output_per_mtok=0.6)])
    Pricer().price(repeated[0].call)  # type: ignore[arg-type]  # load the database once
    arms = {
        "metrics (compute_run)": lambda: compute_run("r", repeated),
        "price file rule": lambda: run_cost("r", repeated, rule),
        "genai-prices, repeated usage": lambda: run_cost("r", repeated, Pricer()),
        "genai-prices, distinct usage": lambda: run_cost("r", distinct, Pricer()),
        "genai-prices, unpriced": lambda: run_cost("r", local, Pricer()),
    }
    results = {name: median_time(fn) for name, fn in arms.items()}
    ref = results["metrics (compute_run)"]
    print(f"{n:,} cases, median of 3 rounds")
    print(f"{'arm':32} {'seconds':>8} {'cases/s':>10} {'x metrics':>10}")
    for name, secs in results.items():
        print(f"{name:32} {secs:8.3f} {n / secs:10,.0f} {secs / ref:10.2f}")


if __name__ == "__main__":
    main()
