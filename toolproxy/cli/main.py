"""The `toolproxy` command line. Thin: parses arguments and calls the package."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolproxy.capture import limits
from toolproxy.cli import options
from toolproxy.cli.filters import add_filter_args
from toolproxy.cli.output import print_rows, render_status
from toolproxy.cli.version import VersionAction


class DefaultCapture(Path):
    """The capture a command uses because none was named (`capture_hint` says so)."""


def add_capture_arg(p: argparse.ArgumentParser) -> None:
    """The `--capture/-c` option every command that reads a capture takes."""
    p.add_argument(
        "--capture",
        "-c",
        type=Path,
        default=DefaultCapture(limits.default_capture()),
        help=f"capture directory (default: ${limits.CAPTURE_ENV}, else {limits.DEFAULT_CAPTURE})",
    )


def cmd_status(args: argparse.Namespace) -> int:
    """Print what a capture holds."""
    from toolproxy import store

    summary = store.summary(args.capture)
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        print(render_status(summary))
    return 0


def cmd_sessions(args: argparse.Namespace) -> int:
    """List sessions, newest first, counted over the exchanges the filter options select."""
    from toolproxy import store
    from toolproxy.cli.filters import filter_from_args
    from toolproxy.store.queries import exchanges
    from toolproxy.store.rows import SessionRow

    where = filter_from_args(args)
    with store.reading(args.capture) as r:
        page = exchanges.sessions(r, where, limit=args.limit)
    print_rows(list(SessionRow._fields), [tuple(s) for s in page.items], args.json)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """Show one session's exchanges and tool calls, or one exchange."""
    from toolproxy import store
    from toolproxy.cli.filters import one_id
    from toolproxy.errors import UserError
    from toolproxy.store.queries import exchanges

    with store.reading(args.capture) as r:  # an id, or a unique prefix of one (like git)
        found = [
            *exchanges.ids_starting(r, "session_id", args.id),
            *exchanges.ids_starting(r, "exchange_id", args.id),
        ]
        ident = args.id
        if found and args.id not in found:  # none found: said below
            ident = one_id(found, args.id, "", exchanges.MATCHES_SHOWN)
        columns, rows = exchanges.session_or_exchange(r, ident)
    if not rows:
        raise UserError(f"no session or exchange {args.id!r} in {args.capture}")
    print_rows(columns, rows, args.json)
    return 0


def cmd_tui(args: argparse.Namespace) -> int:
    """Browse a capture in the terminal: sessions, transcripts, exchanges (the tui extra)."""
    from toolproxy import store
    from toolproxy.errors import UserError

    try:
        from toolproxy.tui.app import run
    except ImportError as exc:
        raise UserError(
            f"the TUI needs the tui extra ({exc.name} is missing): pip install 'toolproxy[tui]'"
        ) from None
    capture = args.capture_arg or args.capture
    with store.reading(capture):  # a missing or broken capture is a clear error, here
        pass
    if not (sys.stdin.isatty() and sys.__stderr__ is not None and sys.__stderr__.isatty()):
        # Textual reads keys from stdin and draws on stderr: without a terminal it would wait
        raise UserError(
            "the TUI needs a terminal (stdin and stderr); without one, read the capture with "
            "`toolproxy sessions`, `show` or `sql`"
        )
    return run(capture, args.session, args.run, args.cases)


def cmd_sql(args: argparse.Namespace) -> int:
    """Run a read-only SQL query against the capture's views."""
    from toolproxy import store

    columns, rows = store.query(args.capture, args.query)
    print_rows(columns, rows, args.json)
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    """Compact segment files into Parquet files and cache them in the catalog; with --from,
    first move other captures' recorded files in (merging a fleet's captures into one)."""
    from toolproxy import store

    print(f"toolproxy: {store.compact(args.capture, sources=args.sources).summary()}")
    return 0


def cmd_repair(args: argparse.Namespace) -> int:
    """Rebuild a missing or damaged catalog from the capture's Parquet and segment files."""
    from toolproxy import store

    done = store.repair(args.capture, rebuild=args.rebuild)
    if done["set_aside"]:
        print(f"toolproxy: the damaged catalog is kept as {done['set_aside']}")
    rows = ", ".join(f"{t} {n}" for t, n in done["tables"].items() if n)
    print(f"toolproxy: catalog of {done['capture']} rebuilt from its files: {rows or 'no rows'}")
    return 0


def cmd_upstream(args: argparse.Namespace) -> int:
    """Serve the scripted model upstream (for trying toolproxy without a real provider)."""
    from toolproxy.errors import UserError
    from toolproxy.scripted import serve_forever

    script = None
    if args.personas:
        if args.script:
            raise UserError("--personas plays its own script: give --script or --personas")
        from toolproxy.grade.expectations import load_cases
        from toolproxy.scripted.personas import persona_script
        from toolproxy.suites import suite_path

        script = persona_script(load_cases([suite_path(args.personas)]))
    serve_forever(args.script, args.host, args.port, script)
    return 0


def cmd_addon_path(args: argparse.Namespace) -> int:
    """Print the path of the mitmproxy addon script: mitmdump -s "$(toolproxy addon-path)"."""
    from toolproxy.capture.proxy import addon_script

    print(addon_script())
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """The whole loop on embedded defaults: MCP server, local model, agent, grades."""
    if args.formats:
        from toolproxy.cli.demo import run_demo as run_formats

        return run_formats(args.capture)
    from toolproxy.cli.demoloop import run_demo

    return run_demo(args.capture, scripted=args.scripted)


def add_command(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    func: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    """A sub-command whose help is the first paragraph of its function's docstring (the rest
    is for whoever reads the code)."""
    doc = (func.__doc__ or "").strip().split("\n\n")[0]
    p = sub.add_parser(name, help=doc, description=doc)
    p.set_defaults(func=func)
    return p


def add_group(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    about: str,
) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    """A command with sub-commands of its own (`mcp pull`, `model serve`); its sub-parsers."""
    group = sub.add_parser(name, help=about, description=about)
    dest = f"{name}_command"
    return group.add_subparsers(dest=dest, required=True, metavar=dest.upper())


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, one sub-command per capability."""
    parser = options.Parser(
        prog="toolproxy",
        description="Measure agent tool calling on your own live traffic.",
    )
    parser.add_argument("--version", "-V", action=VersionAction)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        return add_command(sub, name, func)

    from toolproxy.cli import export as cli_export
    from toolproxy.cli import record as cli_record

    cli_record.register(sub)

    p = add("status", cmd_status)
    add_capture_arg(p)
    p.add_argument("--json", action="store_true", help="print JSON")

    p = add("sessions", cmd_sessions)
    add_capture_arg(p)
    p.add_argument("--limit", "-n", type=options.count, default=50, help="how many (default 50)")
    add_filter_args(p, origin="captured")  # a replay's sessions: --origin replayed / any
    p.add_argument("--json", action="store_true", help="print JSON lines")

    p = add("show", cmd_show)
    p.add_argument("id", help="session id or exchange id")
    add_capture_arg(p)
    p.add_argument("--json", action="store_true", help="print JSON lines")

    p = add("tui", cmd_tui)
    p.add_argument("capture_arg", nargs="?", type=Path, metavar="CAPTURE", help="capture to open")
    add_capture_arg(p)
    p.add_argument("--session", help="open straight at this session's transcript")
    p.add_argument("--run", help="open straight at this grading run (metrics, labels, matrix)")
    p.add_argument(
        "--cases",
        type=Path,
        help="expectations file that labeling writes and re-grading reads "
        "(.yaml/.yml/.jsonl; default expectations/cases.yaml, as `label`)",
    )

    p = add("sql", cmd_sql)
    p.add_argument("query", help="SQL over the views (exchanges, tool_calls, sessions, ...)")
    add_capture_arg(p)
    p.add_argument("--json", action="store_true", help="print JSON lines")

    p = add("compact", cmd_compact)
    add_capture_arg(p)
    p.add_argument(
        "--from",
        dest="sources",
        action="append",
        type=Path,
        default=[],
        metavar="CAPTURE",
        help="another capture (another host's) whose recorded files are moved into this one "
        "first; repeatable; the target may then be a new directory",
    )

    p = add("repair", cmd_repair)
    add_capture_arg(p)
    p.add_argument(
        "--rebuild", action="store_true", help="set the catalog aside and rebuild even if healthy"
    )

    cli_export.register(sub)

    p = add("upstream", cmd_upstream)
    p.add_argument("--script", help="script file (JSON or YAML); default: echo replies")
    p.add_argument(
        "--personas",
        metavar="SUITE",
        help="instead: models perfect, leaky, sloppy and silent answering a suite's tasks "
        "(conformance, or a suite file); see docs/replay.md",
    )
    p.add_argument("--host", default="127.0.0.1", help="listen address")
    p.add_argument(
        "--port", "-p", type=options.port, default=8765, help="listen port (default 8765)"
    )

    add("addon-path", cmd_addon_path)

    from toolproxy.cli import grade as cli_grade
    from toolproxy.cli import imports as cli_imports
    from toolproxy.cli import judge as cli_judge
    from toolproxy.cli import mcp as cli_mcp
    from toolproxy.cli import model as cli_model
    from toolproxy.cli import replay as cli_replay

    cli_imports.register(sub)
    cli_mcp.register(sub)
    cli_grade.register(sub)
    cli_judge.register(sub)
    cli_replay.register(sub)
    cli_model.register(sub)

    p = add("demo", cmd_demo)
    p.add_argument(
        "--capture", "-c", type=Path, default=Path("captures/demo"), help="capture directory"
    )
    p.add_argument(
        "--scripted",
        action="store_true",
        help="let the scripted upstream play the model (default: the local model if installed)",
    )
    p.add_argument(
        "--formats",
        action="store_true",
        help="instead: a scripted tour of the hosted APIs' wire formats (Chat Completions, "
        "Responses, Anthropic Messages; streamed and not; a malformed call)",
    )
    return parser


def headline(message: str) -> str:
    """An error as one line, its detail (if any) on indented lines under it, no blank ones."""
    first, *rest = [line for line in message.splitlines() if line.strip()] or [""]
    if not all(line[0].isspace() for line in rest):  # indent all of it: carets stay aligned
        rest = [f"  {line}" for line in rest]
    return "\n".join([first, *rest])


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `toolproxy` script."""
    args = build_parser().parse_args(argv)
    if getattr(args, "mitmdump_args", None) and args.mitmdump_args[0] == "--":
        args.mitmdump_args = args.mitmdump_args[1:]
    # a kill (SIGTERM) stops like Ctrl-C: what the command started is stopped on the way out
    previous = signal.signal(signal.SIGTERM, _terminated)
    _TERMINATED.clear()
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 128 + signal.SIGTERM if _TERMINATED else 130
    except BrokenPipeError:  # `toolproxy status | head`: the reader has what it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's own flush at exit is quiet
        return 0
    except Exception as exc:  # noqa: BLE001 - a clear one-line error, not a traceback
        from toolproxy.errors import Failure, UserError

        if isinstance(exc, UserError | Failure):
            print(f"toolproxy: {headline(str(exc))}", file=sys.stderr)
            if (hint := capture_hint(args)) is not None:
                print(hint, file=sys.stderr)
            return 2 if isinstance(exc, UserError) else 1
        if isinstance(exc, OSError) and exc.strerror:  # a file the user named: one line
            why = "not a directory" if isinstance(exc, FileExistsError) else exc.strerror
            where = f"{exc.filename}: " if exc.filename else ""
            print(f"toolproxy: {where}{why}", file=sys.stderr)
            return 2
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


def capture_hint(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> str | None:
    """Below an error, where the command's capture came from, when none was named and the
    one it took is not there (a newcomer in another directory): None otherwise."""
    capture = getattr(args, "capture", None)
    if not isinstance(capture, DefaultCapture) or getattr(args, "capture_arg", None):
        return None
    if (capture / "capture.duckdb").exists():
        return None
    env = f"${limits.CAPTURE_ENV}"
    if environ.get(limits.CAPTURE_ENV, "").strip():
        where, fix = f"{env} names {capture}", f"change {env}"
    else:
        where, fix = f"the default is {capture}", f"set {env}"
    return f"  no --capture given, and {where}: name one with -c DIR or {fix}"


_TERMINATED: list[int] = []  # a SIGTERM arrived (so the exit code is 143, not 130)


def _terminated(signum: int, frame: Any) -> None:
    """SIGTERM as Ctrl-C: SIGINT's own handler runs, so that `with` blocks and `finally`
    clauses stop what the command started. Inside `asyncio.run` that handler cancels the
    main task (raising here would end whichever task happened to run, unretrieved); where
    SIGINT is ignored (a shell's background job), KeyboardInterrupt is raised here."""
    _TERMINATED.append(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
