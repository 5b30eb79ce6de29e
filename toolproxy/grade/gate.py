"""The CI gate: metric thresholds, regressions against a baseline run, JUnit XML. Pure.

* `--threshold 'metric>=x'` or `'metric<=x'`: `metric` is one of KNOWN (the per-run and
  vendor metrics), x a decimal number, for a rate also a percentage (`95%`). Anything
  else (another operator, an unknown metric, a trailing word) is a `GateError` (exit 2)
  that lists the known metrics; so is a bound no run could fail or none could pass (a
  rate's outside [0, 1], `selection_accuracy>=95` meant as a percentage; a negative one). A
  threshold applies to every reported run, the baseline included; a run without a value
  for the metric (0 denominator) fails it: a gate fails closed.
* `--baseline RUN --fail-on-regression`: every other run is compared with the baseline on
  the gated metrics (those named by thresholds, else DEFAULT_REGRESSION). A run regresses
  on a metric when it moved in the metric's bad direction by more than epsilon: rates in
  [0, 1] by more than RATE_EPS = 0.005 absolute (half a percentage point); other metrics
  by more than AMOUNT_EPS = 5 % of the baseline's absolute value. A metric either run
  lacks is skipped (reported, never failed).
* Per tool: `'tool:NAME.metric>=x'` gates the metric computed over the run's cases that
  expect NAME (a run with no such case fails it: fail closed); `'each_tool.metric>=x'`
  gates every expected tool of each run, one gate per tool (`tool:NAME.metric>=x`), so
  `each_tool.selection_accuracy>=0.95` holds every diagonal cell of the confusion matrix
  to 0.95. Per-tool gates take the per-run metrics (metrics.SPECS), not the vendor ones
  (those compare runs), and are not part of --fail-on-regression.
* Exit code 1 when any gate failed, else 0. JUnit XML: one <testsuite> per run, one
  <testcase> per gate, <failure message=...> on failure, <skipped> on skip.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from toolproxy.errors import UserError
from toolproxy.grade import cost, metrics, vendor
from toolproxy.grade.metrics import MetricSpec

KNOWN: dict[str, MetricSpec] = metrics.SPECS | vendor.SPECS | cost.SPECS
DEFAULT_REGRESSION = (
    "pass_rate",
    "selection_accuracy",
    "hallucination_rate",
    "omission_rate",
    "format_error_rate",
    "schema_accuracy",
)
RATE_EPS = 0.005
AMOUNT_EPS = 0.05
_THRESHOLD = re.compile(
    r"\s*(?:(each_tool)\.|tool:([A-Za-z0-9_\-]+)\.)?"
    r"([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=)\s*([-+]?(?:\d+\.?\d*|\.\d+))\s*(%?)\s*"
)

Values = Mapping[str, Mapping[str, float | None]]
ToolValues = Mapping[str, Mapping[str, Mapping[str, float | None]]]  # run -> tool -> metric


class GateError(UserError):
    """A gate that cannot be evaluated as written (reported as a usage error, exit 2)."""


class Threshold(BaseModel):
    """One parsed `--threshold`."""

    metric: str
    op: Literal[">=", "<="]
    value: float
    tool: str | None = Field(default=None, description="tool:NAME: over that tool's cases")
    each_tool: bool = Field(default=False, description="each_tool: one gate per tool")
    percent: bool = Field(default=False, description="written as a percentage (95%)")

    def __str__(self) -> str:
        scope = "each_tool." if self.each_tool else (f"tool:{self.tool}." if self.tool else "")
        number = f"{self.value * 100:g}%" if self.percent else f"{self.value:g}"
        return f"{scope}{self.metric}{self.op}{number}"

    def for_tool(self, tool: str) -> Threshold:
        """This threshold on one tool (what each_tool becomes per tool)."""
        return self.model_copy(update={"tool": tool, "each_tool": False})


class GateResult(BaseModel):
    """One gate on one run."""

    run: str
    name: str = Field(description="e.g. 'selection_accuracy>=0.95' or 'regression:pass_rate'")
    status: Literal["passed", "failed", "skipped"]
    message: str = Field(description="why, with the numbers")


def known_list() -> str:
    """The known metric names, comma separated."""
    return ", ".join(sorted(KNOWN))


def parse_threshold(text: str) -> Threshold:
    """`'metric>=x'` / `'metric<=x'`, strictly; GateError on anything else."""
    m = _THRESHOLD.fullmatch(text)
    if m is None:
        raise GateError(
            f"bad threshold {text!r}: expected METRIC>=NUMBER or METRIC<=NUMBER, optionally "
            f"per tool (tool:NAME.METRIC>=NUMBER, each_tool.METRIC>=NUMBER) "
            f"(known metrics: {known_list()})"
        )
    each, tool, metric, op, number, percent = m.groups()
    if metric not in KNOWN:
        raise GateError(f"unknown metric {metric!r} in {text!r}; known metrics: {known_list()}")
    if (each or tool) and metric not in metrics.SPECS:
        per_run = ", ".join(sorted(metrics.SPECS))
        raise GateError(f"{text!r}: per-tool gates take the per-run metrics: {per_run}")
    value = _bound(text, metric, float(number), bool(percent))
    return Threshold(
        metric=metric,
        op=op,  # type: ignore[arg-type]
        value=value,
        tool=tool,
        each_tool=bool(each),
        percent=bool(percent),
    )


def _bound(text: str, metric: str, number: float, percent: bool) -> float:
    """The threshold's value; GateError when no run could fail it or none could pass it
    (`selection_accuracy>=95` meant as a percentage can never pass, `hallucination_rate<=5`
    can never fail: a CI gate that decides nothing)."""
    spec = KNOWN[metric]
    if percent and not spec.rate:
        raise GateError(f"{text!r}: {metric} is not a rate; only rates take a percentage")
    value = number / 100 if percent else number
    if spec.rate and not 0 <= value <= 1:
        hint = (
            f" (for {number:g} %, write {number / 100:g} or {number:g}%)"
            if number > 1 and not percent
            else ""
        )
        raise GateError(f"{text!r}: {metric} is a rate from 0 to 1{hint}")
    if value < 0:
        raise GateError(f"{text!r}: {metric} is never negative")
    return value


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def check_threshold(run: str, value: float | None, t: Threshold) -> GateResult:
    """One threshold on one run's value (None fails)."""
    if value is None:
        return GateResult(
            run=run, name=str(t), status="failed", message=f"{t.metric} is n/a for this run"
        )
    ok = value >= t.value if t.op == ">=" else value <= t.value
    return GateResult(
        run=run,
        name=str(t),
        status="passed" if ok else "failed",
        message=f"{t.metric} = {_fmt(value)} (needs {t.op} {t.value:g})",
    )


def check_regression(
    run: str, metric: str, value: float | None, base: float | None, baseline: str
) -> GateResult:
    """Did `run` get worse than `baseline` on `metric` by more than its epsilon?"""
    name = f"regression:{metric}"
    if value is None or base is None:
        msg = f"{metric} is n/a ({_fmt(value)} vs baseline {baseline} {_fmt(base)})"
        return GateResult(run=run, name=name, status="skipped", message=msg)
    spec = KNOWN[metric]
    eps = RATE_EPS if spec.rate else AMOUNT_EPS * abs(base)
    worse = value - base if spec.direction == "lower" else base - value
    status: Literal["passed", "failed"] = "failed" if worse > eps else "passed"
    msg = (
        f"{metric} = {_fmt(value)} vs baseline {baseline} {_fmt(base)} "
        f"({spec.direction} is better, tolerance {eps:.4g})"
    )
    return GateResult(run=run, name=name, status=status, message=msg)


def _on_tools(
    run: str, t: Threshold, tools: Mapping[str, Mapping[str, float | None]]
) -> list[GateResult]:
    """A per-tool threshold on one run (`tools`: that run's tool -> metric -> value)."""
    if t.each_tool:
        return [check_threshold(run, tools[n].get(t.metric), t.for_tool(n)) for n in sorted(tools)]
    assert t.tool is not None
    if t.tool not in tools:
        msg = f"no case of this run expects {t.tool!r}"
        return [GateResult(run=run, name=str(t), status="failed", message=msg)]
    return [check_threshold(run, tools[t.tool].get(t.metric), t)]


def evaluate(
    values: Values,
    thresholds: Sequence[Threshold] = (),
    baseline: str | None = None,
    fail_on_regression: bool = False,
    tool_values: ToolValues | None = None,
) -> list[GateResult]:
    """Every gate on every run of `values` (run -> metric -> value), runs in order;
    per-tool thresholds read `tool_values` (run -> tool -> metric -> value)."""
    if fail_on_regression and (baseline is None or baseline not in values):
        raise GateError("--fail-on-regression needs --baseline RUN naming a reported run")
    whole = [t for t in thresholds if not (t.tool or t.each_tool)]
    gated = list(dict.fromkeys(t.metric for t in whole)) or list(DEFAULT_REGRESSION)
    results: list[GateResult] = []
    for run, vals in values.items():
        for t in thresholds:
            if t.tool or t.each_tool:
                results += _on_tools(run, t, (tool_values or {}).get(run, {}))
            else:
                results.append(check_threshold(run, vals.get(t.metric), t))
        if fail_on_regression and baseline is not None and run != baseline:
            base = values[baseline]
            results += [check_regression(run, m, vals.get(m), base.get(m), baseline) for m in gated]
    return results


def exit_code(results: Sequence[GateResult]) -> int:
    """1 when any gate failed, else 0."""
    return 1 if any(r.status == "failed" for r in results) else 0


def junit_xml(runs: Sequence[str], results: Sequence[GateResult]) -> str:
    """JUnit XML: a testsuite per run (even with no gates), a testcase per gate."""
    root = ET.Element("testsuites", name="toolproxy report")
    for run in runs:
        mine = [r for r in results if r.run == run]
        suite = ET.SubElement(
            root,
            "testsuite",
            name=run,
            tests=str(len(mine)),
            failures=str(sum(r.status == "failed" for r in mine)),
            errors="0",
            skipped=str(sum(r.status == "skipped" for r in mine)),
        )
        for r in mine:
            case = ET.SubElement(suite, "testcase", classname=f"toolproxy.gate.{run}", name=r.name)
            if r.status == "failed":
                ET.SubElement(case, "failure", message=r.message, type="gate").text = r.message
            elif r.status == "skipped":
                ET.SubElement(case, "skipped", message=r.message)
            else:
                ET.SubElement(case, "system-out").text = r.message
    root.set("tests", str(len(results)))
    root.set("failures", str(sum(r.status == "failed" for r in results)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
