"""`toolproxy label | grade | report`: expectations, grading runs, reports and CI gates."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from toolproxy.cli import options
from toolproxy.cli.output import tui_command
from toolproxy.errors import UserError
from toolproxy.util.words import counted

if TYPE_CHECKING:
    from toolproxy.grade.prices import Pricer


def cmd_label(args: argparse.Namespace) -> int:
    """Turn recorded calls into expectation cases (accept as they are, then edit)."""
    from toolproxy.util.gctools import paused_gc

    with paused_gc():  # as `grade`: many objects, no cycles (90,818 cases: 8.4 -> 7.0 s)
        return _label(args)


def _label(args: argparse.Namespace) -> int:
    import sys

    from toolproxy.cli.filters import filter_fields, resolve_prefixes
    from toolproxy.errors import UserError
    from toolproxy.grade.casefile import file_format
    from toolproxy.grade.expectations import load_cases
    from toolproxy.grade.labeling import (
        LabelFilters,
        cases_from_capture,
        reviewer,
        stamped_all,
        write_cases,
    )

    out: Path = args.out
    file_format(out)  # a bad suffix fails before any work
    if args.adjudicate:
        return adjudicate_files(args.adjudicate, args.resolved, out)
    if args.resolved:
        raise UserError("--resolved goes with --adjudicate A B")
    for option, given in (("--stratify", args.stratify), ("--seed", args.seed is not None)):
        if given and args.sample is None:
            raise UserError(f"{option} goes with --sample N")
    if args.import_file is not None and args.sample is not None:
        raise UserError("--sample draws from the capture; --import writes every case it holds")
    seed = 0 if args.seed is None else args.seed
    if args.import_file is not None:
        by = reviewer(args.by)
        cases = stamped_all(load_cases([args.import_file]), by, "label --import")
        source = f"imported from {args.import_file}"
        nothing = f"{args.import_file} holds no cases"
    else:
        try:
            fields = resolve_prefixes(args.capture, filter_fields(args))
            filters = LabelFilters(
                **fields,
                no_calls=args.no_calls,
                sample=args.sample,
                stratify=args.stratify,
                seed=seed,
            )
        except ValueError as exc:
            raise UserError(f"--label needs --label-run ({exc})") from None
        cases = cases_from_capture(args.capture, filters, reviewer(args.by))
        source = f"labeled from capture {args.capture}"
        if args.sample is not None and 0 < len(cases) < args.sample:  # sampled after filtering
            short = f"all {len(cases)} matching turns (fewer than --sample {args.sample})"
            print(f"toolproxy label: {short}", file=sys.stderr)
            source += f"; {short}"
        elif args.sample is not None:
            by = f", stratified by {args.stratify}" if args.stratify else ""
            source += f"; a sample of {args.sample} turns{by}, seed {seed}"
        nothing = "no recorded model turn matched the filters"
    if not cases:
        print(f"toolproxy label: {nothing}: nothing written", file=sys.stderr)
        return 1
    header = (
        f"toolproxy label: {source}.\n"
        "Each case accepts the recorded calls exactly as made: edit the matchers.\n"
        "Format: docs/grading.md 'Expectations' (toolproxy/grade/expectations.py)."
    )
    written, skipped = write_cases(cases, out, args.append, header)
    also = f" ({skipped} skipped: id already in the file)" if skipped else ""
    print(f"wrote {counted(written, 'case')} to {out}{also}")
    if written:
        print(
            f"next: review and edit them (plain values match exactly; see docs/grading.md "
            f"'Expectations'), then: toolproxy grade {out} --run NAME"
        )
    return 0


def adjudicate_files(files: list[Path], resolved: Path | None, out: Path) -> int:
    """`label --adjudicate A B [--resolved R]`: list what two reviewers disagree on; write
    the merged cases to `out` once nothing is left open (exit 0), else write nothing
    (exit 1)."""
    import json

    from toolproxy.grade.adjudicate import adjudicate
    from toolproxy.grade.expectations import dump_cases, load_cases
    from toolproxy.grade.labeling import now_iso
    from toolproxy.util.table import format_table

    a, b = (load_cases([f]) for f in files)
    done = adjudicate(a, b, load_cases([resolved]) if resolved else [], at=now_iso())
    if done.open:
        show = lambda v: json.dumps(v, ensure_ascii=False)  # noqa: E731
        rows = [[d.case_id, d.where, show(d.a), show(d.b)] for d in done.open]
        cases = len({d.case_id for d in done.open})
        print(format_table(["case", "field", str(files[0]), str(files[1])], rows, width=60))
        print(
            f"\n{len(rows)} disagreement(s) in {cases} case(s); nothing written. Next: fix "
            "either file, or write each case as it should be into a resolutions file and "
            "run again with --resolved FILE"
        )
        return 1
    header = (
        f"toolproxy label --adjudicate {files[0]} {files[1]}"
        + (f" --resolved {resolved}" if resolved else "")
        + f": {done.agreed} agreed, {done.resolved} resolved."
    )
    dump_cases(done.merged, out, header)
    print(
        f"wrote {len(done.merged)} cases to {out} ({done.agreed} agreed, {done.resolved} resolved)"
    )
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    """Grade recorded (or replayed) calls against expectation cases, store the run, print a summary.

    The cyclic garbage collector is paused throughout (`gctools.paused_gc`): a run makes
    hundreds of thousands of objects and no cycles, and on 100,000 calls the collections
    that allocation triggers cost more than the grading."""
    import json
    import sys

    from toolproxy.grade.expectations import load_cases
    from toolproxy.grade.fanout import grade_in_parts, outcome_of, workers
    from toolproxy.grade.judge import alias_warning
    from toolproxy.grade.literalhint import hint_warning
    from toolproxy.grade.runner import build_judge, grade_run
    from toolproxy.util.gctools import paused_gc
    from toolproxy.util.table import format_table

    with paused_gc():
        outcome = None
        if not (args.judge_url or args.judge_model):
            jobs = workers(args.jobs)
            small = {"min_chars": 0} if args.jobs else {}  # -j N: even for small files
            outcome = grade_in_parts(args.capture, args.cases, args.run, jobs, args.json, **small)
        if outcome is None:
            cases = load_cases(args.cases)
            judge = build_judge(
                args.judge_url,
                args.judge_model,
                options.judge_key_variable(args),
                args.capture,
            )
            if judge is not None and (alias := alias_warning(args.judge_model)):
                print(f"toolproxy grade: warning: {alias}", file=sys.stderr)
            outcome = outcome_of(grade_run(args.capture, cases, args.run, judge), args.json)
    summary = outcome.summary
    if not summary["cases"]:  # a CI gate must not pass on an empty or mistyped file
        files = ", ".join(str(f) for f in args.cases)
        raise UserError(f"no cases in {files}: nothing graded, run {args.run} not stored")
    if outcome.rows is not None:
        out = {
            "run": args.run,
            "summary": summary,
            "grades": [r.model_dump() for r in outcome.rows],
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    by = f" by {outcome.processes} processes" if outcome.processes > 1 else ""
    n = summary["cases"]
    print(f"run {args.run}: {counted(n, 'case')} graded into {args.capture}{by}\n")
    table = [
        ["passed", "", summary["passed"]],
        ["failed", "(all)", summary["failed"]],
        *[["failed", label, n] for label, n in summary["by_label"].items()],
        ["not graded", "", summary["not_graded"]],
    ]
    print(format_table(["outcome", "label", "cases"], table))
    ungraded = [list(u) for u in outcome.ungraded]
    if ungraded:
        print("\nnot graded:")
        print(format_table(["case", "reason"], ungraded, width=100))
    if hints := summary["matcher_hints"]:
        tui = tui_command(args.capture, args.run)
        print(f"toolproxy grade: {hint_warning(hints, tui)}", file=sys.stderr)
    return 0


def pricer_of(path: Path | None) -> Pricer:
    """The pricer of `report --prices FILE` (genai-prices' database alone without one)."""
    from toolproxy.grade.prices import Pricer, load_price_file
    from toolproxy.util.textfile import Unreadable, read_text

    if path is None:
        return Pricer()
    try:
        text = read_text(path)
    except Unreadable as e:
        raise UserError(f"cannot read price file {path}: {e}") from None
    return Pricer(load_price_file(text, str(path)), source=path.name)


def cmd_report(args: argparse.Namespace) -> int:
    """Compare graded runs: metrics, labels, vendor tables, files, gates (exit 1 when one fails)."""
    from toolproxy.util.gctools import paused_gc

    with paused_gc():  # as `grade`: a record or more per case, no cycles (90,969 cases:
        return _report(args)  # reading them 11.4 -> 7.0 s)


def _report(args: argparse.Namespace) -> int:
    from toolproxy.grade import gate
    from toolproxy.grade.rendering import render_terminal, write_outputs
    from toolproxy.grade.report import (
        build_report,
        build_tables,
        load_cases,
        load_gallery,
        load_result_sizes,
        load_sessions,
        select_runs,
    )
    from toolproxy.util.jsonfast import pretty_dumps

    thresholds = [gate.parse_threshold(t) for t in args.threshold]
    if args.fail_on_regression and not args.baseline:
        raise gate.GateError("--fail-on-regression needs --baseline RUN")
    pricer = pricer_of(args.prices)
    runs = select_runs(args.capture, args.run, args.baseline)
    cases = load_cases(args.capture, runs)
    sids = sorted({c.grade.session_id for rs in cases.values() for c in rs if c.grade.session_id})
    report = build_report(
        cases, load_sessions(args.capture, sids), args.baseline, thresholds,
        args.fail_on_regression, pricer,
        load_result_sizes(args.capture, cases),
    )  # fmt: skip
    if args.out or args.json or args.html:
        report.gallery = load_gallery(args.capture, cases)
    tables = build_tables(report)
    if args.json:
        print(pretty_dumps(report.model_dump(mode="json")))
    else:
        print(render_terminal(tables, report))
    if args.out:
        write_outputs(args.out, report, tables)
    if args.html:
        from toolproxy.htmlreport.charts import build_charts, plotly_js
        from toolproxy.htmlreport.page import render_page

        page = render_page(report, tables, build_charts(report, cases), plotly_js())
        try:
            args.html.parent.mkdir(parents=True, exist_ok=True)
            args.html.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"--html: cannot write {args.html}: {exc.strerror}") from None
        size = len(page.encode()) / 1e6
        print(f"wrote {args.html} ({size:.1f} MB, opens offline)", file=sys.stderr)
    if args.junit:
        args.junit.parent.mkdir(parents=True, exist_ok=True)
        args.junit.write_text(gate.junit_xml(report.runs, report.gates) + "\n", encoding="utf-8")
    return gate.exit_code(report.gates)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `label`, `grade` and `report` to the top-level parser."""
    from toolproxy.cli.filters import add_filter_args
    from toolproxy.cli.main import add_capture_arg, add_command

    p = add_command(sub, "label", cmd_label)
    add_capture_arg(p)
    # model turns only; replayed turns are a candidate's, not production's: not by default
    add_filter_args(p, skip=("status", "parse_status"), origin="captured")
    p.add_argument(
        "--no-calls", action="store_true", help="also turn text-only turns into no_call cases"
    )
    p.add_argument(
        "--sample", type=options.count, help="draw this many of the matching turns at random"
    )
    p.add_argument(
        "--stratify",
        choices=["tool", "model", "session"],
        help="with --sample: each first-called tool, model or session in proportion (each "
        "at least once while N allows)",
    )
    p.add_argument(
        "--seed", type=int, help="with --sample: the same seed, the same draw (default 0)"
    )
    p.add_argument(
        "--import",
        dest="import_file",
        type=Path,
        help="bulk import a JSONL dataset of cases (validated) instead",
    )
    p.add_argument(
        "--out",
        "-o",
        type=Path,
        default=Path("expectations/cases.yaml"),
        help="cases file to write (.yaml/.yml or .jsonl; default expectations/cases.yaml)",
    )
    p.add_argument("--append", action="store_true", help="add to --out instead of replacing")
    p.add_argument(
        "--by",
        help="the reviewer, kept in each case's provenance (default: $TOOLPROXY_REVIEWER, "
        "else your user name)",
    )
    p.add_argument(
        "--adjudicate",
        nargs=2,
        type=Path,
        metavar=("A", "B"),
        help="instead: compare two reviewers' cases files, list every disagreement, and "
        "write the merged cases to --out once none is left",
    )
    p.add_argument(
        "--resolved",
        type=Path,
        help="with --adjudicate: cases written as they should be, settling disagreements",
    )

    p = add_command(sub, "grade", cmd_grade)
    p.add_argument("cases", type=Path, nargs="+", help="expectation files (.yaml/.yml/.jsonl)")
    add_capture_arg(p)
    p.add_argument("--run", "-r", required=True, help="name of this grading run")
    p.add_argument("--judge-url", help="OpenAI-compatible base URL of the LLM judge")
    p.add_argument("--judge-model", help="the judge's pinned model name")
    options.add_judge_key_env_arg(p)
    p.add_argument("--json", action="store_true", help="print the run's grades as JSON")
    p.add_argument(
        "--jobs",
        "-j",
        type=options.count,
        help="processes that grade JSONL files (default: one per core from 2 MB of cases "
        "on; a judge or a YAML file grades in one)",
    )

    p = add_command(sub, "report", cmd_report)
    add_capture_arg(p)
    p.add_argument(
        "--run",
        "-r",
        action="append",
        default=[],
        help="runs to report (default: all); each is a column in comparisons",
    )
    p.add_argument("--baseline", help="run to compare against (vendor metrics, regressions)")
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a run is worse than --baseline on any gated metric",
    )
    p.add_argument(
        "--threshold",
        action="append",
        default=[],
        help="CI gate, e.g. 'selection_accuracy>=0.95' or "
        "'hallucination_rate<=5%%' (rates run from 0 to 1); repeatable; exit 1 on failure",
    )
    p.add_argument("--out", "-o", type=Path, help="folder for report.csv, report.json, report.md")
    p.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="write one self-contained page: tables, charts (plotly.js embedded), gallery",
    )
    p.add_argument("--junit", type=Path, help="write the gate as JUnit XML here")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.add_argument(
        "--prices",
        type=Path,
        help="price file (YAML) tried before genai-prices' database: per-token, per-hour "
        "or as-provider rules for self-hosted endpoints and gateways",
    )
