"""`toolproxy judge calibrate`: how far the LLM judge agrees with people on the same fields."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolproxy.cli import options
from toolproxy.errors import UserError

if TYPE_CHECKING:
    from toolproxy.grade.calibrate import Calibration


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Score a human-labeled calibration set with the judge: agreement, Cohen's kappa and
    every disagreement; exit 1 below --min-kappa.

    The judge is asked exactly as grading asks it (same prompt, same cache when -c names a
    capture), so the numbers hold for the verdicts in your grading runs.
    """
    import sys

    from toolproxy.grade.calibrate import Judged, calibrate, load_set
    from toolproxy.grade.judge import alias_warning, make_judge
    from toolproxy.util.textfile import Unreadable, read_text

    try:
        text = read_text(args.set)
    except Unreadable as e:
        raise UserError(f"cannot read calibration set {args.set}: {e}") from None
    items = load_set(text, args.set.name)
    if warning := alias_warning(args.judge_model):
        print(f"toolproxy: warning: {warning}", file=sys.stderr)
    judge = make_judge(
        args.judge_url, args.judge_model, options.judge_key_variable(args), args.capture
    )
    judged = []
    for item in items:
        try:
            score, reason = judge(item.criterion, item.value)
            judged.append(Judged(item=item, score=score, reason=reason))
        except Exception as exc:  # noqa: BLE001 - one failed item is listed, not fatal
            judged.append(Judged(item=item, error=f"{type(exc).__name__}: {exc}"))
    result = calibrate(judged, args.pass_at)
    if args.json:
        print(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        print(render(result, args.judge_model))
    if not result.scored:
        return 1
    if args.min_kappa is not None and (result.kappa is None or result.kappa < args.min_kappa):
        print(
            f"toolproxy judge calibrate: kappa {_num(result.kappa)} is below --min-kappa "
            f"{args.min_kappa:g}",
            file=sys.stderr,
        )
        return 1
    return 0


def _num(value: float | None, pct: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:.1%}" if pct else f"{value:.3f}"


def render(c: Calibration, model: str) -> str:
    """The calibration as text: the numbers, the confusion, the disagreements."""
    from toolproxy.util.table import format_table

    head = (
        f"judge {model} vs human labels: {c.scored} of {c.items} items scored "
        f"(pass at {c.pass_at:g})\n"
        f"pass/fail agreement {_num(c.agreement, True)}, Cohen's kappa {_num(c.kappa)}\n"
        f"same score {_num(c.score_agreement, True)}, weighted kappa {_num(c.score_kappa)}"
    )
    cols = ["human \\ judge", "0", "0.5", "1"]
    rows: list[list[Any]] = [
        [h, *(row.get(s, 0) for s in cols[1:])] for h, row in c.confusion.items()
    ]
    parts = [head, format_table(cols, rows)]
    if c.disagreements:
        dis = [
            [d.id, d.human, d.judge, d.criterion, json.dumps(d.value, ensure_ascii=False), d.reason]
            for d in c.disagreements
        ]
        parts.append(
            f"disagreements ({len(dis)}):\n"
            + format_table(["id", "human", "judge", "criterion", "value", "judge's reason"], dis)
        )
    if c.failed:
        rows = [[k, v] for k, v in c.failed.items()]
        parts.append(f"not scored ({len(rows)}):\n" + format_table(["id", "why"], rows, width=100))
    return "\n\n".join(parts)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `judge calibrate` to the top-level parser."""
    from toolproxy.cli.main import add_command, add_group

    judge_sub = add_group(sub, "judge", "The LLM judge: measure how far to trust it.")
    p = add_command(judge_sub, "calibrate", cmd_calibrate)
    p.add_argument("set", type=Path, help="calibration set: YAML (items:) or .jsonl")
    p.add_argument(
        "--judge-url",
        required=True,
        type=options.base_url,
        help="OpenAI-compatible base URL of the judge",
    )
    p.add_argument("--judge-model", required=True, help="the judge's pinned model name")
    options.add_judge_key_env_arg(p)
    p.add_argument(
        "--capture",
        "-c",
        type=Path,
        help="capture whose judge cache to use and fill (default: none, in memory)",
    )
    p.add_argument(
        "--pass-at",
        type=float,
        choices=[0.5, 1.0],
        default=1.0,
        help="the least score that passes, as the matchers' pass_at (default 1)",
    )
    p.add_argument(
        "--min-kappa", type=options.kappa, help="exit 1 when Cohen's kappa is below this"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
