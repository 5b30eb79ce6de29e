"""`toolproxy label | grade | report`: expectations, grading runs, reports and CI gates."""

from __future__ import annotations

import argparse
from pathlib import Path


def cmd_label(args: argparse.Namespace) -> int:
    """Turn recorded calls into expectation cases (accept as they are, then edit)."""
    from toolproxy.grade.labeling import cmd_label as run

    return run(args)


def cmd_grade(args: argparse.Namespace) -> int:
    """Grade recorded exchanges against expectation cases, as a named run in the store."""
    from toolproxy.grade.runner import cmd_grade as run

    return run(args)


def cmd_report(args: argparse.Namespace) -> int:
    """Metrics of graded runs: terminal tables, CSV/JSON/Markdown, CI gate, JUnit XML."""
    from toolproxy.grade.report import cmd_report as run

    return run(args)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `label`, `grade` and `report` to the top-level parser."""
    from toolproxy.cli.main import add_capture_arg, add_command

    p = add_command(sub, "label", cmd_label)
    add_capture_arg(p)
    p.add_argument("--session", action="append", default=[], help="only these sessions")
    p.add_argument("--tool", action="append", default=[], help="only calls to these tools")
    p.add_argument("--model", action="append", default=[], help="only these models")
    p.add_argument("--since", help="only exchanges started at/after this ISO-8601 time")
    p.add_argument("--until", help="only exchanges started before this ISO-8601 time")
    p.add_argument(
        "--no-calls", action="store_true", help="also turn text-only turns into no_call cases"
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

    p = add_command(sub, "grade", cmd_grade)
    p.add_argument("cases", type=Path, nargs="+", help="expectation files (.yaml/.yml/.jsonl)")
    add_capture_arg(p)
    p.add_argument("--run", "-r", required=True, help="name of this grading run")
    p.add_argument("--judge-url", help="OpenAI-compatible base URL of the LLM judge")
    p.add_argument("--judge-model", help="the judge's pinned model name")
    p.add_argument(
        "--judge-key-env",
        default="TOOLPROXY_JUDGE_API_KEY",
        help="environment variable holding the judge's API key",
    )
    p.add_argument("--json", action="store_true", help="print the run's grades as JSON")

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
        "'hallucination_rate<=0.05'; repeatable; exit 1 on failure",
    )
    p.add_argument("--out", "-o", type=Path, help="folder for report.csv, report.json, report.md")
    p.add_argument("--junit", type=Path, help="write the gate as JUnit XML here")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
