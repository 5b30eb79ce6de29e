"""Grading throughput: the three-stage checker over recorded calls, side by side.

    scripts/bench-deps.sh    # once: BFCL's checker and data into .bench/bfcl
    .venv/bin/python bench/bench_grade.py [--bfcl-cases 1000] [--rounds 5] [--calls 100000]

Part 1, BFCL-shaped: 1,000 of BFCL's own cases (its functions and possible answers, from
the bfcl-eval wheel), each with a model output written here (`bfcl_shapes.py`), graded by
BFCL's `ast_checker` and by toolproxy's checker, interleaved over --rounds rounds: fresh
(nothing compiled or cached at the start; a schema met the first times is read as it
stands, `schema.glance`, else hashed and compiled), fresh with the schema hashes the
capture recorded (what one `toolproxy grade` run pays: it reads them with the schemas),
with a warm cache (every schema compiled before the pass), and with jsonschema alone (how
schemas were checked before the quick path). Each pass only grades, through the grader
`toolproxy grade` runs (`checker.make_grader`), as BFCL's only checks; the labels are
counted apart. Calls per second and the ratio to BFCL's: of
the medians, and the median of each round's own ratio (this
VM's vCPUs change speed between rounds; a round's arms run back to back). Then BFCL's
checker and the warm grader again, each case graded 10 times in a row: what a call costs
when its case, its schemas and the code that grades it are in the CPU's caches, against
what a pass over every case costs (the gap is what reaching memory costs each checker),
and the ratio the warm arm could reach were grading free: BFCL's pass over toolproxy's
wait on memory alone.
Then the working set: both over every 3rd and every 10th case (300 and 100 cases), pass
after pass, the warm grader's ratio to BFCL's per round beside the full pass's: the cases
still graded in turn, but what they read stays in the caches. Then the cache state: both
over every case again, warm, once with 64 MiB written just before each pass (the cases in
memory only) and once right after a pass of the same checker (what fits in the last-level
cache is still there), beside the warm arm, which meets what the arms before it in the
round left in the caches.

With the compiled core, a case is graded in C (`grade/nativegrade.c`), which reads a
schema met the first times as it stands (`schema/nativeglance.c`) and a compiled one from
the program compiling it made (its value checks and properties in one block, what is the
schema's alone answered once): the warm arm differs from the fresh one by those programs,
where glance hands a schema back (`pattern`, `$ref`, ...), and by what the warming pass
left in the CPU's caches.

When the compiled grading core is in use (`toolproxy/util/compiled.py`), every round also
times the fresh and warm arms in child processes: on the pure Python core (`TOOLPROXY_PURE=1`),
and on the compiled core with its C modules and without them (`TOOLPROXY_NO_NATIVE=1`), with
the per-round ratio of those two (what the C modules add); another process may run on the
other vCPU, so the children's ratios to BFCL carry the drift.

Part 2, 20 schemas: generates realistic recorded calls (as `tool_calls` rows hold them:
raw text plus the wire parser's reading) over 20 tool schemas, with a mix of right calls
and the usual failures (wrong values, missing and invented arguments, "10" for 10, cut
streams, bad escapes, enum and range violations, parallel calls), then grades them twice:

1. cached    validators compiled once per schema (`schemacheck.compile_schema`)
2. naive     a validator compiled (and its schema checked) for every call, on fewer calls

and prints calls per second for both and their ratio, with the label mix graded.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import jsonschema

from toolproxy.grade.checker import grade_case, make_grader, offered_tools
from toolproxy.grade.model import Case, ExpectedCall, Matcher, Observation
from toolproxy.records import ToolCall, schema_hash
from toolproxy.schema.compiling import (
    CompiledSchema,
    clear_caches,
    compile_schema,
    note_schema_key,
)
from toolproxy.util.compiled import NATIVE, NO_NATIVE_ENV, PURE_ENV, core, in_use
from toolproxy.util.gctools import paused_gc
from toolproxy.wire.common import parse_arguments

RESIDENT = 10  # the cache-resident arms grade each case this many times in a row
WORKING_SETS = (300, 100)  # cases in the working-set arms (every len // size-th case)

WORDS = ["paris", "crash", "deploy", "notes", "build", "london", "report", "invoice", "tokyo"]


def make_schemas(n: int) -> list[tuple[str, dict[str, Any]]]:
    """`n` tools with 2-6 typed properties each, some nested, all additionalProperties false."""
    rng = random.Random(1)
    kinds: list[dict[str, Any]] = [
        {"type": "string"},
        {"type": "integer", "minimum": 1, "maximum": 100},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "string", "enum": ["asc", "desc", "none"]},
        {"type": "string", "format": "date-time"},
        {"type": "array", "items": {"type": "string"}},
        {
            "type": "object",
            "properties": {"since": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["since"],
        },
    ]
    tools = []
    for t in range(n):
        props = {f"p{i}": dict(rng.choice(kinds)) for i in range(rng.randint(2, 6))}
        props["p0"] = {"type": "string"}  # every tool has a required string
        required = ["p0"] + [k for k in props if k != "p0" and rng.random() < 0.3]
        schema = {
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": False,
        }
        tools.append((f"tool_{t}", schema))
    return tools


def value_for(prop: dict[str, Any], rng: random.Random) -> Any:
    kind = prop.get("type")
    if "enum" in prop:
        return rng.choice(prop["enum"])
    if prop.get("format") == "date-time":
        return f"2025-03-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z"
    if kind == "integer":
        return rng.randint(1, 100)
    if kind == "number":
        return round(rng.uniform(-50, 50), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return rng.sample(WORDS, rng.randint(0, 3))
    if kind == "object":
        return {"since": "2025-01-01", "limit": rng.randint(1, 9)}
    return f"{rng.choice(WORDS)} {rng.randint(1, 999)}"


def break_call(args: dict[str, Any], schema: dict[str, Any], rng: random.Random) -> str:
    """The argument text of a call, right or broken in one of the usual ways."""
    roll = rng.random()
    args = dict(args)
    props = schema["properties"]
    if roll < 0.70:
        pass
    elif roll < 0.78:
        args["p0"] = "something else"  # confidently wrong value
    elif roll < 0.83:
        del args["p0"]  # missing
    elif roll < 0.87:
        ints = [k for k, p in props.items() if p.get("type") == "integer" and k in args]
        if ints:
            args[ints[0]] = str(args[ints[0]])  # "10" for 10
    elif roll < 0.90:
        args["verbose"] = True  # invented argument
    elif roll < 0.93:
        text = json.dumps(args)
        return text[: rng.randint(1, len(text) - 1)]  # cut stream
    elif roll < 0.95:
        return json.dumps(args)[:-1] + ', "path": "C:\\Users\\x"}'  # bad escape
    elif roll < 0.97:
        return json.dumps(json.dumps(args))  # double-encoded
    else:
        args["p0"] = ["a", "list"]  # wrong type, not a coercion
    return json.dumps(args)


def make_workload(
    calls: int, tools: list[tuple[str, dict[str, Any]]], seed: int, distinct: bool = False
):
    """(case, observation) pairs holding `calls` recorded calls in all (some in pairs).
    `distinct`: each call takes the next tool of `tools` (one schema per call) instead of
    a random one."""
    rng = random.Random(seed)
    work: list[tuple[Case, Observation]] = []
    made = 0
    while made < calls:
        width = 2 if rng.random() < 0.1 and calls - made >= 2 else 1
        expected, observed = [], []
        if distinct:
            chosen = [tools[(made + k) % len(tools)] for k in range(width)]
        else:
            chosen = [rng.choice(tools) for _ in range(width)]
        for i, (name, schema) in enumerate(chosen):
            args = {
                k: value_for(p, rng) for k, p in schema["properties"].items() if rng.random() < 0.8
            }
            args["p0"] = value_for(schema["properties"]["p0"], rng)
            matchers = {k: Matcher(value=v) for k, v in args.items() if k in schema["required"]}
            expected.append(ExpectedCall(tool=name, args=matchers))
            raw = break_call(args, schema, rng)
            value, error = parse_arguments(raw)  # what the wire parser recorded
            observed.append(
                ToolCall(
                    index=i,
                    name=name,
                    arguments_raw=raw,
                    arguments=value if error is None else None,
                    parse_error=error,
                )
            )
        offered = [{"name": n, "parameters": s} for n, s in chosen]
        case = Case(id=f"case{len(work)}", calls=expected, order="unordered")
        work.append((case, Observation(calls=observed, offered=offered)))
        made += width
    return work


def naive_compile(schema: Any) -> CompiledSchema:
    """What grading costs without the cache: check and compile the schema for each call."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return CompiledSchema("naive", cls(schema, format_checker=cls.FORMAT_CHECKER), None)


_PLAIN: dict[str, CompiledSchema] = {}


def jsonschema_only(schema: Any) -> CompiledSchema:
    """The compile before the quick path (cached per schema like `compile_schema`):
    `check_schema`, then jsonschema validates and words every call."""
    key = schema_hash(schema)
    if key not in _PLAIN:
        _PLAIN[key] = naive_compile(schema)
    return _PLAIN[key]


def grader_of(compiler: Any) -> Callable[[Case, Observation], Any]:
    """The grader a pass calls: `toolproxy grade`'s own (`checker.make_grader`, which
    compiles with `compile_schema`) for the toolproxy arms, else `grade_case` with
    `compiler` (the arms that stand for earlier ways of checking schemas)."""
    if compiler is compile_schema:
        return make_grader()
    return functools.partial(grade_case, compiler=compiler)


def run(work: list[tuple[Case, Observation]], compiler: Any, times: int = 1) -> float:
    """Seconds a pass over `work` takes (each case graded `times` times in a row: the
    seconds over `times`). The loop only grades, as BFCL's (`bfcl_pass`) only checks: what
    a case was graded is counted apart (`outcomes`)."""
    grade = grader_of(compiler)
    t0 = time.perf_counter()
    if times == 1:
        for case, observation in work:
            grade(case, observation)
    else:
        for case, observation in work:
            for _ in range(times):
                grade(case, observation)
    return (time.perf_counter() - t0) / times


def outcomes(work: list[tuple[Case, Observation]], compiler: Any) -> Counter[str]:
    """The label each case of `work` is graded (untimed)."""
    grade = grader_of(compiler)
    return Counter(grade(case, observation).label or "passed" for case, observation in work)


def warmed(work: list[tuple[Case, Observation]]) -> list[tuple[Case, Observation]]:
    """`work`, with every schema its calls are checked against compiled (not timed): the
    warm arm's cache. (Grading alone compiles a schema object only from its seventh
    sighting; before that it is read as it stands, `schema.glance`.)"""
    for case, observation in work:
        for schema in offered_tools(observation.offered or case.tools).values():
            compile_schema(schema)
    return work


def bfcl_part(cases: int, rounds: int, seed: int) -> None:
    """BFCL's ast_checker and toolproxy's grader on the same BFCL-shaped cases."""
    from bfcl_arm import CATEGORIES, bfcl_cases, language, load_checker
    from bfcl_shapes import distinct_schemas, workload

    checker, lang = load_checker(), language()
    work = workload([c for cat in CATEGORIES for c in bfcl_cases(cat)], cases, seed)
    calls = sum(w.calls for w in work)
    pairs = [(w.case, w.observation) for w in work]

    def bfcl(times: int = 1) -> float:
        return bfcl_pass(work, checker, lang, times)

    def fresh() -> float:
        clear_caches()
        return run(pairs, compile_schema)

    def plain() -> float:
        _PLAIN.clear()
        return run(pairs, jsonschema_only)

    # `toolproxy grade` reads each offered schema with the schema_hash the capture recorded
    # (grade.observe notes it): no hashing in the run, as in this arm
    recorded = {
        id(tool["parameters"]): (tool["parameters"], schema_hash(tool["parameters"]))
        for _, observation in pairs
        for tool in observation.offered
        if tool.get("parameters") is not None
    }

    def fresh_recorded() -> float:
        clear_caches()
        t0 = time.perf_counter()
        for schema, key in recorded.values():
            note_schema_key(schema, key)
        return time.perf_counter() - t0 + run(pairs, compile_schema)

    arms = {
        "BFCL ast_checker": bfcl,
        "toolproxy, schemas compiled fresh": fresh,
        "toolproxy, fresh, hashes from the capture": fresh_recorded,
        "toolproxy, warm schema cache": lambda: run(warmed(pairs), compile_schema),
        "toolproxy, jsonschema only (before), fresh": plain,
    }
    times: dict[str, list[float]] = {name: [] for name in arms}
    resident = {  # each case graded RESIDENT times back to back
        "BFCL": lambda: bfcl(RESIDENT),
        "toolproxy, warm": lambda: run(warmed(pairs), compile_schema, RESIDENT),
    }
    kept: dict[str, list[float]] = {name: [] for name in resident}
    # the same arms in child processes: on the pure Python core, and on the compiled core
    # with its C modules (`compiled.NATIVE`) and without them, to measure what they add
    children = CHILDREN if in_use() else {}
    for name in children:
        times[f"{name}, fresh"], times[f"{name}, warm"] = [], []
    for _ in range(rounds):  # interleaved, so drift on a shared machine hits every arm
        for name, arm in arms.items():
            times[name].append(arm())
        for name, arm in resident.items():
            kept[name].append(arm())
        for name, env in children.items():
            child = child_times(cases, seed, env)
            times[f"{name}, fresh"].append(child["fresh"])
            times[f"{name}, warm"].append(child["warm"])
    base = calls / statistics.median(times["BFCL ast_checker"])
    print(
        f"BFCL-shaped: {len(work):,} cases of BFCL's own data ({calls:,} calls, "
        f"{distinct_schemas(work):,} distinct schemas), median of {rounds} interleaved rounds; "
        f"toolproxy's grading core: {core()}"
    )
    for name, ts in times.items():
        rate = calls / statistics.median(ts)
        spread = f"{calls / max(ts):,.0f}-{calls / min(ts):,.0f}"
        print(
            f"  {name:44} {rate:>9,.0f} calls/s  ({spread})  {rate / base:5.2f}x BFCL"
            f"  ({per_round(times['BFCL ast_checker'], ts):.2f}x per round)"
        )
    if children:
        gains = [
            per_round(times[f"{C_OFF}, {a}"], times[f"{C_ON}, {a}"]) for a in ("fresh", "warm")
        ]
        print(
            f"  C modules ({', '.join(NATIVE)}): {gains[0]:.3f}x fresh, {gains[1]:.3f}x warm,"
            " per round (children on against off)"
        )
    bfcl_kept, warm_kept = (calls / statistics.median(kept[n]) for n in resident)
    streamed = statistics.median(times["toolproxy, warm schema cache"])
    print(
        f"  cache-resident (each case graded {RESIDENT}x back to back): BFCL {bfcl_kept:,.0f}, "
        f"toolproxy warm {warm_kept:,.0f} calls/s ({warm_kept / bfcl_kept:.2f}x); a pass over "
        f"every case costs BFCL {bfcl_kept / base:.2f}x and toolproxy "
        f"{warm_kept * streamed / calls:.2f}x the time of the same calls in cache"
    )
    stall = streamed / calls - 1 / warm_kept  # a call's wait on memory, beyond its grading
    theirs = 1 / base - 1 / bfcl_kept  # BFCL's, beyond its checking
    print(
        f"  reaching memory: a warm pass waits {stall * 1e6:.2f} µs a call beyond the same calls "
        f"in cache (BFCL's pass {theirs * 1e6:.2f} µs), and BFCL's whole pass takes "
        f"{1e6 / base:.2f} µs a call: were grading itself free, the warm ratio could reach "
        f"{1 / base / stall:.2f}x"
        if stall > 0
        else "  reaching memory: a warm pass took no longer than the same calls in cache"
    )
    paired = per_round(times["BFCL ast_checker"], times["toolproxy, warm schema cache"])
    sets = [
        f"; {size:,} cases {working_set(work, size, rounds, checker, lang):.2f}x"
        for size in WORKING_SETS
        if size < len(work)
    ]
    print(
        f"  working set (streamed passes, warm): {len(work):,} cases {paired:.2f}x per round"
        + "".join(sets)
    )
    states = cache_states(work, checker, lang, rounds)
    print(
        "  cache state before a warm pass over every case, per round: "
        + ", ".join(f"{name} {ratio:.2f}x" for name, ratio in states.items())
    )
    mix = Counter(w.kind for w in work)
    print("  outputs: " + ", ".join(f"{k} {v}" for k, v in mix.most_common()))


def per_round(bfcl: list[float], arm: list[float]) -> float:
    """The median of each round's ratio (the machine's speed drifts between rounds; each
    round's arms run back to back)."""
    return statistics.median(b / t for b, t in zip(bfcl, arm, strict=True))


def bfcl_pass(work: list[Any], checker: Any, lang: Any, times: int = 1) -> float:
    """Seconds BFCL's checker takes over `work` (each case `times` times in a row: the
    seconds over `times`)."""
    from bfcl_arm import MODEL

    t0 = time.perf_counter()
    for w in work:
        functions, output, truth, category = w.bfcl
        for _ in range(times):
            checker(functions, output, truth, lang, category, MODEL)
    return (time.perf_counter() - t0) / times


def working_set(work: list[Any], size: int, rounds: int, checker: Any, lang: Any) -> float:
    """BFCL's checker and the warm grader over every (len(work) // size)th case, pass after
    pass (as many calls as a pass over all): what a pass costs when every case it reads
    stays in the CPU's caches, the cases graded in turn as in a full pass. The median of
    each round's ratio (`size` below the cases')."""
    subset = work[:: len(work) // size][:size]
    pairs = warmed([(w.case, w.observation) for w in subset])
    passes = range(len(work) // size)
    ratios = []
    for _ in range(rounds):
        theirs = sum(bfcl_pass(subset, checker, lang) for _ in passes)
        ours = sum(run(pairs, compile_schema) for _ in passes)
        ratios.append(theirs / ours)
    return statistics.median(ratios)


FLUSH = 64 << 20  # bytes written to push every case out of the CPU's caches (4x this VM's L3)


def cache_states(work: list[Any], checker: Any, lang: Any, rounds: int) -> dict[str, float]:
    """BFCL's checker and the warm grader, each over every case from a known cache state:
    `flushed`, FLUSH bytes written just before the pass (the cases in memory only); `again`,
    right after a pass of the same checker over the same cases (what still fits in the
    last-level cache is there). The median of each round's ratio (`per_round`), per state."""
    pairs = warmed([(w.case, w.observation) for w in work])
    junk = bytearray(FLUSH)

    def theirs() -> float:
        return bfcl_pass(work, checker, lang)

    def ours() -> float:
        return run(pairs, compile_schema)

    def flushed(arm: Callable[[], float]) -> float:
        junk[::64] = b"\1" * (FLUSH // 64)
        return arm()

    def again(arm: Callable[[], float]) -> float:
        arm()
        return arm()

    found = {}
    for name, state in (("flushed", flushed), ("again", again)):
        times = [(state(theirs), state(ours)) for _ in range(max(rounds, 3))]
        found[name] = per_round([b for b, _ in times], [t for _, t in times])
    return found


C_ON, C_OFF = (f"compiled core in a child, C modules {w}" for w in ("on", "off"))
CHILDREN = {  # child process arms: what each adds to the environment
    "pure Python core": {PURE_ENV: "1"},
    C_ON: {},
    C_OFF: {NO_NATIVE_ENV: "1"},
}


def child_times(cases: int, seed: int, env: dict[str, str]) -> dict[str, float]:
    """One round of the fresh and warm arms in a child process, `env` added to its
    environment."""
    argv = [sys.executable, __file__, "--child-round", "--bfcl-cases", str(cases)]
    done = subprocess.run(
        [*argv, "--seed", str(seed)],
        env=os.environ | env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def child_round(cases: int, seed: int) -> None:
    """`--child-round`: time the fresh and the warm arm once, print them as JSON."""
    from bfcl_arm import CATEGORIES, bfcl_cases
    from bfcl_shapes import workload

    work = workload([c for cat in CATEGORIES for c in bfcl_cases(cat)], cases, seed)
    pairs = [(w.case, w.observation) for w in work]
    clear_caches()
    fresh = run(pairs, compile_schema)
    warm = run(warmed(pairs), compile_schema)
    print(json.dumps({"fresh": fresh, "warm": warm, "core": core()}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--naive-calls", type=int, default=5_000)
    parser.add_argument("--schemas", type=int, default=20)
    parser.add_argument("--bfcl-cases", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip-bfcl", action="store_true", help="only the 20-schema workload")
    parser.add_argument("--child-round", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    with paused_gc():  # as `toolproxy grade` runs
        if args.child_round:
            return child_round(args.bfcl_cases, args.seed)
        if not args.skip_bfcl:
            bfcl_part(args.bfcl_cases, args.rounds, args.seed)
            print()
        tools = make_schemas(args.schemas)
        work = make_workload(args.calls, tools, args.seed)
        naive_work = make_workload(args.naive_calls, tools, args.seed + 1)
        count = sum(len(o.calls) for _, o in work)
        naive_count = sum(len(o.calls) for _, o in naive_work)

        run(work[:200], compile_schema)  # warm up: imports, regexes, the compile cache
        cached_s = run(work, compile_schema)
        naive_s = run(naive_work, naive_compile)
        labels = outcomes(work, compile_schema)
    cached_rate, naive_rate = count / cached_s, naive_count / naive_s

    print(
        f"grading {count:,} recorded calls ({len(work):,} cases) over {len(tools)} schemas"
        f" ({core()} core)"
    )
    print(f"  cached validators  {cached_rate:>10,.0f} calls/s  ({cached_s:.2f} s)")
    naive = f"({naive_s:.2f} s, {naive_count:,} calls)"
    print(f"  naive (per call)   {naive_rate:>10,.0f} calls/s  {naive}")
    print(f"  ratio              {cached_rate / naive_rate:>10.1f}x")
    mix = ", ".join(f"{k} {v / len(work):.1%}" for k, v in labels.most_common())
    print(f"  case outcomes: {mix}")


if __name__ == "__main__":
    main()
