"""`export --otlp` vs the plain table export, side by side in one run.

* table: `export exchanges` as JSON lines (what any export of the capture pays to read it);
* OTLP/JSON file: every session as a trace through the SDK into `--otlp-file`;
* OTLP/HTTP: the same traces through the SDK's OTLP exporter to a local receiver that
  reads each request and answers 200 (the network and the backend left out).

The capture: chat turns in conversations of 4 that continue each other, one tool call and
its result per turn (built by `bench_import`'s flows and `toolproxy import`).

Run: .venv/bin/python bench/bench_otlp.py [--flows 4000]
Prints exchanges/s for each and the time relative to the table export (median of 3).
"""

from __future__ import annotations

import argparse
import io
import shutil
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench_import import make_flows, timed
from mitmproxy.io import FlowWriter

from toolproxy import store
from toolproxy.capture.importer import import_traffic
from toolproxy.otel.exporter import JsonLinesExporter, export_traces, http_exporter, resource_of


class Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", type=int, default=4_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-otlp-"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        flow_file, capture = work / "flows.mitm", work / "capture"
        with flow_file.open("wb") as f:
            writer = FlowWriter(f)
            for flow in make_flows(args.flows):
                writer.add(flow)
        done = import_traffic([flow_file], capture)
        assert done.exchanges == args.flows, done
        store.compact(capture)
        resource = resource_of("bench", "bench", capture)
        spans: list[int] = []

        def table() -> None:
            assert store.export_jsonl(capture, "exchanges", io.StringIO()) == args.flows

        def to_file() -> None:
            with (work / "traces.jsonl").open("w") as f:
                spans.append(export_traces(capture, JsonLinesExporter(f), resource).spans)

        def to_http() -> None:
            spans.append(export_traces(capture, http_exporter(url, None, 30.0), resource).spans)

        base = timed(table, args.rounds)
        results = {
            "export exchanges (JSON lines)": base,
            "export --otlp-file (OTLP/JSON)": timed(to_file, args.rounds),
            "export --otlp (OTLP/HTTP, local)": timed(to_http, args.rounds),
        }
        size = (work / "traces.jsonl").stat().st_size
        print(
            f"{args.flows:,} exchanges in {args.flows // 4:,} sessions, {spans[-1]:,} spans; "
            f"median of {args.rounds} rounds; OTLP/JSON file {size / 1e6:.1f} MB"
        )
        for name, seconds in results.items():
            rate = args.flows / seconds
            print(f"  {name:34} {seconds:7.2f} s  {rate:9,.0f} exchanges/s  {seconds / base:6.2f}x")
    finally:
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
