"""`toolproxy --version`: what a bug report needs to say which toolproxy ran, on what.

toolproxy's own version, the grading core this process runs (compiled or pure Python: the
same verdicts, not the same speed), the capture store's schema it writes, the Python, and
the versions of the packages whose behaviour shows in a capture or a grade (an optional
one says so when it is absent). Read from the installed metadata only when asked, so the
other commands do not pay for it at start.
"""

from __future__ import annotations

import argparse
import platform
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

# what the proxy, the store, the grader, replay and the TUI stand on, and the extras
PACKAGES = (
    "mitmproxy",
    "duckdb",
    "mcp",
    "openai",
    "jsonschema",
    "jsonschema-rs",
    "pydantic",
    "textual",
    "xllamacpp",
)


def installed(name: str) -> str:
    """`name`'s installed version, or "not installed"."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def version_lines(lookup: Callable[[str], str] = installed) -> list[str]:
    """The lines `toolproxy --version` prints (each package's version from `lookup`)."""
    from toolproxy import __version__
    from toolproxy.store.catalog import SCHEMA_VERSION
    from toolproxy.util.compiled import core

    packages = ", ".join(f"{name} {lookup(name)}" for name in PACKAGES)
    return [
        f"toolproxy {__version__}",
        f"grading core: {core()}; capture store schema {SCHEMA_VERSION}",
        f"Python {platform.python_version()} ({sys.executable})",
        packages,
    ]


class VersionAction(argparse.Action):
    """`--version`: print `version_lines` and exit 0 (argparse's own version action
    wants its text when the parser is built, which every command would pay for)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", "print the versions of toolproxy and what it runs on, and exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print("\n".join(version_lines()))  # on stdout, as argparse's own version action
        parser.exit(0)
