"""The local model's server: llama.cpp's OpenAI-compatible server through `xllamacpp` (the
only module that imports it). Run as a process of its own by `LocalModel`:

    python -m toolproxy.localmodel.server --port 8089

It prints `toolproxy-model ready at http://HOST:PORT` once the model is loaded, then serves
until it is terminated. Decoding is greedy (temperature 0, fixed seed), so a run can be
repeated.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from toolproxy.capture import lifeline
from toolproxy.localmodel.template import tool_template
from toolproxy.localmodel.weights import MODEL_NAME, READY, ModelMissing, find_weights, missing

CONTEXT = 4096
MAX_TOKENS = 256


def serve(host: str, port: int, threads: int) -> None:
    """Load the model and serve it until SIGTERM / SIGINT (or, started by `LocalModel`,
    until its parent exits: `lifeline`)."""
    import xllamacpp

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    lifeline.die_with_parent()
    if stop.is_set():
        return

    params = xllamacpp.CommonParams()
    params.model.path = str(find_weights())
    params.model_alias = MODEL_NAME
    params.n_ctx = CONTEXT
    params.n_predict = MAX_TOKENS
    params.n_parallel = 1
    params.hostnames = [host]
    params.port = port
    params.use_jinja = True
    params.chat_template = tool_template()
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.sampling.temp = 0.0
    params.sampling.seed = 42
    server = xllamacpp.Server(params)
    print(f"{READY}{server.listening_address}", flush=True)
    stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolproxy.localmodel.server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    why = missing()
    if why:
        print(f"toolproxy model: {why}", file=sys.stderr)
        return 2
    try:
        serve(args.host, args.port, args.threads)
    except ModelMissing as exc:
        print(f"toolproxy model: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # xllamacpp: the server could not start (port, model)
        print(f"toolproxy model: the server did not start: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
