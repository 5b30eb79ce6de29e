"""The grading core compiled by mypyc, used only when it was built from these very sources.

`scripts/compile_core.py` (run by `scripts/setup.sh`) compiles `MODULES` with mypyc, and
the C modules `NATIVE` (a hot piece of the core written again in C, held to its Python by
tests), into `<venv>/toolproxy-compiled/` and writes `manifest.json` beside them: the
digest of every source file of the package (`.py`, `.pyi`, `.c`, `.h`), the Python that built
them, and each module's compiled file.
`activate` (run when `toolproxy` is imported) puts a finder first on `sys.meta_path` that
loads those modules from their compiled files, and does nothing unless the manifest's
digest is the package's digest now: a source edited since the build (any file, since
compiled code reads other modules' classes) leaves every module pure Python until the
next build, never stale. `TOOLPROXY_PURE=1` keeps them pure regardless;
`TOOLPROXY_NO_NATIVE=1` loads the compiled modules without the C ones (what they replace
then runs compiled Python: to rule them out, and to measure them).

Hashing the sources took 18-64 ms of every command's start. The manifest also holds the
sources' stamp at build time (`source_stamp`: each file's path, size, times and inode, as
`os.stat` gives them, 2 ms): when the stamp now is that one, the files are the ones hashed
and the digest is not recomputed. A write changes a file's change time (which no tool
sets back), a replacement its inode; a file written within two seconds of the build gets
no stamp (`settled_stamp`: two writes inside one tick of the file system's clock look
alike), so such a build is checked by its digest, as without a stamp.

The compiled modules are the same source, so the same verdicts; `.ci/run` runs the suite
on the compiled core and the grading tests again on the pure one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

# Pure modules on the grading path that mypyc compiles (a module defining a pydantic
# model does not compile; nor does one with a lone surrogate in a string literal).
MODULES = (
    "toolproxy.grade.casecheck",
    "toolproxy.grade.checker",
    "toolproxy.grade.equality",
    "toolproxy.grade.expectations",
    "toolproxy.grade.grades",
    "toolproxy.grade.labels",
    "toolproxy.grade.matchers",
    "toolproxy.grade.showing",
    "toolproxy.grade.model",
    "toolproxy.grade.pairing",
    "toolproxy.grade.parsestage",
    "toolproxy.grade.schemastage",
    "toolproxy.grade.semantic",
    "toolproxy.schema.accepts",
    "toolproxy.schema.compiling",
    "toolproxy.schema.formats",
    "toolproxy.schema.glance",
    "toolproxy.schema.quick",
    "toolproxy.schema.quickerrors",
    "toolproxy.schema.resolving",
    "toolproxy.util.absent",
    "toolproxy.util.jsonfast",
    "toolproxy.wire.toolnames",
)
# C modules built beside them, each read by the module that imports it when present
NATIVE = (
    "toolproxy.grade.nativeequal",
    "toolproxy.schema.nativeglance",
    "toolproxy.grade.nativegrade",
)
# a C module's source files beside its own `.c` (in its folder), and the headers it reads
NATIVE_PARTS = {
    "toolproxy.grade.nativegrade": (
        "nativehooks.c", "nativeread.c", "nativepairing.c", "nativeerrors.c", "nativeschema.c",
        "nativesemantic.c", "nativeshow.c", "nativegrade.h", "nativeerrors.h",
        "../schema/nativeglance.h",
    ),
    "toolproxy.schema.nativeglance": ("nativeglance.h",),
}  # fmt: skip
SOURCES = (".py", ".pyi", ".c", ".h")  # what the build reads: an edit to any one stales it
FOLDER = "toolproxy-compiled"  # in the venv (sys.prefix): a fresh venv has none
MANIFEST = "manifest.json"
PURE_ENV = "TOOLPROXY_PURE"
NO_NATIVE_ENV = "TOOLPROXY_NO_NATIVE"  # the compiled core without its C modules
PACKAGE = Path(__file__).resolve().parents[1]


def package_digest(root: Path = PACKAGE) -> str:
    """sha256 over every source file (`SOURCES`) under `root`: relative path and bytes, in
    path order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in SOURCES and p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def source_stamp(root: Path = PACKAGE) -> str:
    """sha256 over every source file (`SOURCES`) under `root`: relative path, size,
    modification and change times, inode (no file is read)."""
    return _stamp(_stats(root))


def settled_stamp(root: Path = PACKAGE, now_ns: int | None = None) -> str | None:
    """`source_stamp`, unless a file changed within `SETTLE_NS` of now (None)."""
    stats = _stats(root)
    now = time.time_ns() if now_ns is None else now_ns
    if any(max(st.st_mtime_ns, st.st_ctime_ns) > now - SETTLE_NS for _, st in stats):
        return None
    return _stamp(stats)


def with_stamp(manifest: dict[str, Any], stamp: str | None, root: Path = PACKAGE) -> dict[str, Any]:
    """`manifest` with `stamp` (taken before the digest) when the sources under `root` still
    have it, else without a stamp: a file written meanwhile leaves the digest to decide."""
    kept = {k: v for k, v in manifest.items() if k != "stamp"}
    if stamp is not None and source_stamp(root) == stamp:
        kept["stamp"] = stamp
    return kept


SETTLE_NS = 2 * 10**9  # coarser than any file system's clock tick (FAT: 2 s)


def _stats(root: Path) -> list[tuple[str, os.stat_result]]:
    found = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(folder, root)
        for name in sorted(names):
            if name.endswith(SOURCES):
                path = os.path.join(folder, name)
                found.append((os.path.normpath(os.path.join(rel, name)), os.stat(path)))
    return found


def _stamp(stats: list[tuple[str, os.stat_result]]) -> str:
    lines = (
        f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\n"
        for rel, st in stats
    )
    return hashlib.sha256("".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def usable_files(manifest: Any, digest: str, python: str) -> dict[str, str]:
    """module -> compiled file (relative to the manifest's folder) when `manifest` was
    built from sources of `digest` by this `python` (`sys.version`); {} otherwise."""
    if not isinstance(manifest, dict):
        return {}
    files = manifest.get("files")
    if manifest.get("digest") != digest or manifest.get("python") != python:
        return {}
    if not isinstance(files, dict) or not all(isinstance(f, str) for f in files.values()):
        return {}
    return dict(files)


class CompiledFinder:
    """Finds the compiled modules (and mypyc's shared library module) by name (a meta path
    finder: `importlib.abc.MetaPathFinder` adds nothing but 30 ms of imports)."""

    def __init__(self, files: Mapping[str, Path]) -> None:
        self.files = dict(files)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        file = self.files.get(fullname)
        return None if file is None else importlib.util.spec_from_file_location(fullname, file)


def activate(prefix: str = sys.prefix, environ: Mapping[str, str] = os.environ) -> bool:
    """Load `MODULES` compiled from now on, when a build of these sources is in `prefix`;
    whether it did."""
    if in_use():
        return True
    if environ.get(PURE_ENV):
        return False
    folder = Path(prefix) / FOLDER
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    stamped = isinstance(manifest, dict) and manifest.get("stamp") == source_stamp()
    digest = manifest.get("digest") if stamped else package_digest()
    files = usable_files(manifest, digest, sys.version)
    if not files or not all((folder / f).is_file() for f in files.values()):
        return False
    if environ.get(NO_NATIVE_ENV):  # each module that imports one reads in Python instead
        files = {m: f for m, f in files.items() if m not in NATIVE}
    sys.meta_path.insert(0, CompiledFinder({m: folder / f for m, f in files.items()}))
    return True


def native(module: str, name: str) -> Callable[..., Any] | None:
    """Function `name` of C module `module` (one of `NATIVE`), or None when it is not
    loaded (the pure core, `TOOLPROXY_NO_NATIVE`, no build): its caller then runs the
    Python it stands for."""
    try:
        found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    except ImportError:
        return None
    return found


def in_use() -> bool:
    """Whether this process loads the compiled modules."""
    return any(isinstance(f, CompiledFinder) for f in sys.meta_path)


def core() -> str:
    """Which grading core this process runs, in words (benchmarks print it)."""
    return "compiled (mypyc)" if in_use() else "pure Python"
