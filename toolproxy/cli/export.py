"""`toolproxy export`: a table or view as JSON lines, CSV or Parquet (the store's
`export_*`), or captured sessions as OpenTelemetry traces with `--otlp URL | --otlp-file
FILE` (the spans: `toolproxy.otel.spans`; the SDK: `toolproxy.otel.exporter`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from toolproxy.errors import UserError
from toolproxy.util.words import counted


def add_otlp_args(p: argparse.ArgumentParser) -> None:
    """The OTLP options of `export`, and the exchange filter they share with the others."""
    from toolproxy.cli.filters import add_filter_args

    g = p.add_argument_group("OpenTelemetry (instead of a table)")
    g.add_argument(
        "--otlp",
        metavar="URL",
        help="send sessions as traces to this OTLP/HTTP endpoint, e.g. http://localhost:4318 "
        "(/v1/traces is added to a bare host) or Phoenix's http://localhost:6006",
    )
    g.add_argument(
        "--otlp-file", metavar="FILE", type=Path, help="write the traces as OTLP/JSON lines"
    )
    g.add_argument(
        "--otlp-header",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="header for the endpoint (e.g. Authorization=Basic ...); repeatable; default: "
        "OTEL_EXPORTER_OTLP_HEADERS",
    )
    g.add_argument(
        "--project", default="toolproxy", help="Phoenix project (openinference.project.name)"
    )
    g.add_argument("--service-name", default="toolproxy", help="the resource's service.name")
    g.add_argument(
        "--run",
        action="append",
        help="grading runs whose grades attach to the spans (default: every run)",
    )
    g.add_argument(
        "--timeout", type=float, default=30.0, help="seconds per request to the endpoint"
    )
    add_filter_args(p, skip=("label", "label_run", "text"))


def headers_of(values: list[str]) -> dict[str, str]:
    headers = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--otlp-header wants KEY=VALUE, not {key.strip() or value!r}")
        headers[key.strip()] = text.strip()
    return headers


def export_otlp(args: argparse.Namespace) -> int:
    from toolproxy.cli.filters import filter_from_args
    from toolproxy.otel.exporter import (
        JsonLinesExporter,
        export_traces,
        http_exporter,
        resource_of,
        shown_url,
        traces_endpoint,
    )

    if args.otlp and args.otlp_file:
        raise UserError("give --otlp URL or --otlp-file FILE, not both")
    where = filter_from_args(args)
    resource = resource_of(args.project, args.service_name, Path(args.capture))
    if args.otlp:
        url = traces_endpoint(args.otlp)
        exporter = http_exporter(url, headers_of(args.otlp_header), args.timeout)
        target = shown_url(url)
        stats = export_traces(args.capture, exporter, resource, where, args.run)
    else:
        out: Path = args.otlp_file
        if not out.parent.is_dir():
            raise UserError(f"--otlp-file: no folder {out.parent}")
        with out.open("w", encoding="utf-8") as f:
            stats = export_traces(args.capture, JsonLinesExporter(f), resource, where, args.run)
        target = str(out)
    sessions = f"{stats.traces} session{'' if stats.traces == 1 else 's'}"
    print(
        f"exported {sessions} as traces ({stats.spans} spans: {stats.model_calls} "
        f"model calls, {stats.tool_executions} tool executions; {stats.grades} grades "
        f"attached) to {target}",
        file=sys.stderr,
    )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write a table or view as JSON lines, CSV or Parquet (secrets were removed at capture
    time)."""
    from toolproxy import store
    from toolproxy.errors import UserError

    if args.otlp or args.otlp_file:
        if args.table:
            raise UserError("--otlp exports sessions as traces: give no table with it")
        return export_otlp(args)
    if not args.table:
        raise UserError("export needs a table or view (e.g. exchanges), or --otlp URL")
    from toolproxy.cli.filters import filter_from_args

    where = filter_from_args(args)
    fmt = args.format or {".csv": "csv", ".parquet": "parquet"}.get(Path(args.out).suffix, "jsonl")
    if fmt != "jsonl":
        if args.out == "-":
            raise UserError(f"{fmt} goes to a file: give --out FILE.{fmt}")
        count = store.export_file(args.capture, args.table, Path(args.out), fmt, where)
        rows = counted(count, "row")
        print(f"exported {rows} of {args.table} to {args.out} ({fmt})", file=sys.stderr)
        return 0
    out = sys.stdout if args.out == "-" else Path(args.out)  # opened once the rows are known
    count = store.export_jsonl(args.capture, args.table, out, where)
    print(f"exported {counted(count, 'row')} of {args.table}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `export` command."""
    from toolproxy.cli.main import add_capture_arg, add_command

    p = add_command(sub, "export", cmd_export)
    p.add_argument("table", nargs="?", help="table or view to export, e.g. exchanges or tool_calls")
    add_capture_arg(p)
    p.add_argument("--out", "-o", default="-", help="output file (default stdout)")
    p.add_argument(
        "--format",
        choices=["jsonl", "csv", "parquet"],
        help="default: by --out's suffix (.csv, .parquet), else JSON lines",
    )
    add_otlp_args(p)
