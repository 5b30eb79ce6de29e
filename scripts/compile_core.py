"""Compile toolproxy's grading core with mypyc, and its C modules, into the venv (see
toolproxy/util/compiled.py).

    .venv/bin/python scripts/compile_core.py     # scripts/setup.sh runs it

Builds `compiled.MODULES` and `compiled.NATIVE` into `<venv>/toolproxy-compiled/` with
their manifest (the package's source digest and stamp, this Python, each module's file).
When the build there is already of these sources, only stamps it (a checkout that rewrote
files without changing them changes the stamp, and each start would hash the sources
again). Needs a C compiler and the Python headers; exit code 1 and one line when the build
fails (toolproxy then runs the pure Python core, slower).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ["TOOLPROXY_PURE"] = "1"  # this process imports the sources, never a build

from toolproxy.util.compiled import (  # noqa: E402
    FOLDER,
    MANIFEST,
    MODULES,
    NATIVE,
    NATIVE_PARTS,
    package_digest,
    settled_stamp,
    usable_files,
    with_stamp,
)


def built_files(target: Path) -> dict[str, str]:
    """module name -> its compiled file under `target` (mypyc's shared module included)."""
    files = {}
    for so in target.rglob("*.so"):
        rel = so.relative_to(target)
        name = ".".join((*rel.parts[:-1], rel.name.split(".")[0]))
        files[name] = rel.as_posix()
    return files


def native_extension(extension: Any, module: str) -> Any:
    """The setuptools `Extension` of C module `module`: its own `.c`, the other `.c` files
    of `NATIVE_PARTS` (paths from its folder), and its headers as what it depends on."""
    source = Path(*module.split(".")).with_suffix(".c")
    parts = [Path(os.path.normpath(source.parent / name)) for name in NATIVE_PARTS.get(module, ())]
    return extension(
        module,
        [str(source), *(str(p) for p in parts if p.suffix == ".c")],
        depends=[str(p) for p in parts if p.suffix == ".h"],
    )


def write_manifest(target: Path, record: dict[str, Any], stamp: str | None, sources: Path) -> None:
    """The manifest, stamped when the sources are still as stamped before the digest."""
    text = json.dumps(with_stamp(record, stamp, sources), indent=2) + "\n"
    (target / MANIFEST).write_text(text, encoding="utf-8")


def main() -> int:
    target = Path(sys.prefix) / FOLDER
    sources = REPO / "toolproxy"
    stamp = settled_stamp(sources)  # before the digest: the files it stamps are those hashed
    digest = package_digest(sources)
    try:
        manifest = json.loads((target / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    if usable_files(manifest, digest, sys.version):
        if isinstance(manifest, dict) and manifest.get("stamp") != stamp:
            write_manifest(target, manifest, stamp, sources)
        print(f"compile_core: {target} is up to date")
        return 0
    shutil.rmtree(target, ignore_errors=True)
    paths = [str(Path(*m.split(".")).with_suffix(".py")) for m in MODULES]
    os.chdir(REPO)  # mypyc reads pyproject.toml's [tool.mypy] from here
    with tempfile.TemporaryDirectory() as tmp:
        try:
            from mypyc.build import mypycify
            from setuptools import Extension, setup

            native = [native_extension(Extension, m) for m in NATIVE]
            setup(
                name="toolproxy-compiled",
                ext_modules=mypycify(paths, target_dir=tmp) + native,
                script_args=["-q", "build_ext", "--build-lib", str(target), "--build-temp", tmp],
            )
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - any build failure: say it
            shutil.rmtree(target, ignore_errors=True)
            print(f"compile_core: the build failed ({exc}); the pure Python core runs")
            return 1
    files = built_files(target)
    missing = [m for m in (*MODULES, *NATIVE) if m not in files]
    if missing:
        shutil.rmtree(target, ignore_errors=True)
        print(f"compile_core: the build made no file for {', '.join(missing)}")
        return 1
    record = {"digest": digest, "python": sys.version, "files": files}
    write_manifest(target, record, stamp, sources)
    built = f"{len(MODULES)} modules and {len(NATIVE)} C modules"
    print(f"compile_core: {built} compiled into {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
