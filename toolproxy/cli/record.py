"""`toolproxy record`: the recording proxy (mitmdump + the addon) in the foreground."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from toolproxy.capture.proxy import ProxySpec, RunningProxy, check_confdir, check_port
from toolproxy.cli import options


def cmd_record(args: argparse.Namespace) -> int:
    """Run the recording proxy in the foreground until Ctrl-C."""
    from toolproxy import store

    check_port(args.host, args.port)
    check_confdir(args.confdir)
    spec = ProxySpec(
        capture=args.capture,
        upstream=args.upstream,
        host=args.host,
        port=args.port,
        flush_interval=args.flush_interval,
        session_header=args.session_header,
        retry_window=args.retry_window,
        redact_headers=args.redact_header,
        redact_query=args.redact_query,
        redact_json=args.redact_json,
        confdir=args.confdir,
        # mitmdump logs ~6 lines a request (connects, "Streaming request to …"): warnings and
        # errors only, unless -v; anything after -- comes later and wins
        extra=([] if args.verbose else ["--set", "termlog_verbosity=warn"]) + args.mitmdump_args,
    )
    store.init_capture(args.capture)
    base = f"http://{args.host}:{args.port}"
    if args.upstream:
        print(f"toolproxy: reverse proxy {base} -> {args.upstream}, recording into {args.capture}")
        print(f"  point the agent at it:  OPENAI_BASE_URL={base}/v1   ANTHROPIC_BASE_URL={base}")
    else:
        confdir = args.confdir or "~/.mitmproxy"
        print(f"toolproxy: explicit proxy on {base}, recording into {args.capture}")
        print(f"  HTTPS_PROXY={base}  and trust {confdir}/mitmproxy-ca-cert.pem (see README)")
    print("  Ctrl-C stops and compacts the capture.", flush=True)
    proxy = RunningProxy(spec, capture_output=False, own_session=True)

    def forward(signum: int, frame: object) -> None:
        # Ctrl-C / SIGTERM: ask mitmdump to stop, then wait for it to flush.
        if proxy.proc is not None and proxy.proc.poll() is None:
            proxy.proc.send_signal(signal.SIGINT)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        proxy.start()
        assert proxy.proc is not None
        code = proxy.proc.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if not args.no_compact:
        _compact_quietly(args.capture)
    if code in (0, -signal.SIGINT, -signal.SIGTERM, 130):
        return 0
    print(f"toolproxy: mitmdump exited with code {code} (its message is above)", file=sys.stderr)
    return 2


def _compact_quietly(capture: Path) -> None:
    from toolproxy import store

    try:
        stats = store.compact(capture)
    except Exception as exc:  # noqa: BLE001 - the capture stays readable uncompacted
        print(f"toolproxy: capture left uncompacted ({exc}); run `toolproxy compact` later")
        return
    if stats.files:
        print(f"toolproxy: {stats.summary()}")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `record` to the top-level parser."""
    from toolproxy.cli.main import add_capture_arg, add_command

    p = add_command(sub, "record", cmd_record)
    p.add_argument(
        "--upstream",
        "-u",
        type=options.base_url,
        help="reverse-proxy to this base URL (else explicit proxy)",
    )
    add_capture_arg(p)
    p.add_argument("--host", default="127.0.0.1", help="listen address (default loopback only)")
    p.add_argument(
        "--port", "-p", type=options.port, default=8080, help="listen port (default 8080)"
    )
    p.add_argument(
        "--flush-interval",
        type=options.flush_seconds,
        default=0.5,
        help="seconds between flushes; a crash loses at most this window (default 0.5)",
    )
    p.add_argument(
        "--session-header",
        type=options.name,
        help="header naming the session (x-toolproxy-session)",
    )
    p.add_argument(
        "--retry-window",
        type=options.retry_seconds,
        default=None,
        help="seconds within which an answered request sent again, not continued, is its "
        "retry (default 5; 0: never)",
    )
    options.add_redaction_args(p)
    p.add_argument("--confdir", help="mitmproxy confdir (CA certificate location)")
    p.add_argument("--no-compact", action="store_true", help="do not compact on exit")
    p.add_argument(
        "--verbose", "-v", action="store_true", help="show mitmdump's log of every connection"
    )
    p.add_argument(
        "mitmdump_args", nargs=argparse.REMAINDER, help="after --: passed to mitmdump as is"
    )
