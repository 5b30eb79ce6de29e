"""`toolproxy import`: traffic recorded elsewhere into a capture, chat datasets into cases."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from toolproxy.cli import options
from toolproxy.errors import UserError
from toolproxy.util.words import counted

DEFAULT_CASES = Path("expectations/cases.yaml")


def _is_dataset(path: Path) -> bool:
    """A chat dataset: JSON lines whose first record has a messages list."""
    from toolproxy.grade.chatset import is_chat_dataset

    with path.open("rb") as f:
        for line in f:
            if line.strip():
                return is_chat_dataset(line.decode("utf-8", "replace"))
    return False


def cmd_import(args: argparse.Namespace) -> int:
    """Import traffic recorded elsewhere (mitmproxy flow files, HAR) into a capture, and
    OpenAI-format chat datasets (JSON lines) as expectation cases.

    Flows go through live capture's own parsers, redaction and session stitching; a bad
    flow, entry or line is named and skipped, the rest imported (exit 1 when any was bad).
    """
    from toolproxy.grade.casefile import file_format

    file_format(args.cases)  # a bad suffix fails before any work
    missing = [str(p) for p in args.files if not p.is_file()]
    if missing:
        raise UserError(f"no such file: {', '.join(missing)}")
    datasets = [p for p in args.files if _is_dataset(p)]
    traffic = [p for p in args.files if p not in datasets]
    problems: list[str] = []
    if traffic:
        problems += _import_traffic(args, traffic)
    if datasets:
        problems += _import_datasets(args, datasets)
    for problem in problems:
        print(f"toolproxy import: {problem}", file=sys.stderr)
    return 1 if problems else 0


def _import_traffic(args: argparse.Namespace, paths: list[Path]) -> list[str]:
    from toolproxy.capture.importer import import_traffic

    done = import_traffic(
        paths,
        args.capture,
        session_header=args.session_header,
        redact_headers=args.redact_header,
        redact_query=args.redact_query,
        redact_json=args.redact_json,
    )
    notes = [f"{done.already} already in the capture"] if done.already else []
    if done.skipped:
        notes.append(f"{done.skipped} not HTTP")
    if done.parse_failures:
        notes.append(f"{done.parse_failures} kept raw: their bodies did not parse")
    also = f" ({'; '.join(notes)})" if notes else ""
    files = counted(len(paths), "file")
    count = counted(done.exchanges, "exchange")
    print(f"imported {count} from {files} into {args.capture}{also}")
    return done.problems


def _import_datasets(args: argparse.Namespace, paths: list[Path]) -> list[str]:
    from toolproxy.grade.chatset import cases_from_lines
    from toolproxy.grade.labeling import now_iso, reviewer, write_cases

    by, at = reviewer(args.by), now_iso()
    cases, problems = [], []
    for path in paths:
        with path.open(encoding="utf-8", errors="replace") as f:
            found, bad = cases_from_lines(f, path, by, at)
        cases += found
        problems += bad
    if not cases:
        return [*problems, "no case in the datasets: nothing written"]
    header = (
        f"toolproxy import: from {', '.join(str(p) for p in paths)}.\n"
        "Each case expects what the dataset's assistant did, arguments exactly: edit the "
        "matchers.\nThe cases bring their own messages: replay them, then grade "
        "(docs/replay.md)."
    )
    args.cases.parent.mkdir(parents=True, exist_ok=True)
    written, skipped = write_cases(cases, args.cases, args.append, header)
    also = f" ({skipped} skipped: id already in the file)" if skipped else ""
    print(f"wrote {counted(written, 'case')} to {args.cases}{also}")
    return problems


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `import` command."""
    from toolproxy.cli.main import add_capture_arg, add_command

    p = add_command(sub, "import", cmd_import)
    p.add_argument(
        "files",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="mitmdump -w flow files, HAR files, chat datasets (.jsonl); told apart by content",
    )
    add_capture_arg(p)
    p.add_argument(
        "--cases",
        type=Path,
        default=DEFAULT_CASES,
        help=f"where a chat dataset's cases go (.yaml/.yml/.jsonl; default {DEFAULT_CASES})",
    )
    p.add_argument("--append", action="store_true", help="add to --cases instead of replacing")
    p.add_argument("--by", help="who the cases are labeled by (default $TOOLPROXY_REVIEWER)")
    p.add_argument(
        "--session-header",
        type=options.name,
        default="x-toolproxy-session",
        help="header naming the session (default x-toolproxy-session)",
    )
    options.add_redaction_args(p)
