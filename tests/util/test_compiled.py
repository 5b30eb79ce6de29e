"""The compiled grading core: used only when built from these very sources (`util.compiled`)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from toolproxy.util import compiled
from toolproxy.util.compiled import (
    CompiledFinder,
    activate,
    package_digest,
    settled_stamp,
    source_stamp,
    usable_files,
    with_stamp,
)

PROBE = "toolproxy_compiled_probe"


def built_module(name: str) -> ModuleType:
    """The venv's build of C module `name` (`compiled.NATIVE`), for these very sources:
    the one loaded when the compiled core is in use, else loaded from its file here (the
    pure core's tests hold it to the Python they run)."""
    if name in sys.modules:
        return sys.modules[name]
    folder = Path(sys.prefix) / compiled.FOLDER
    manifest = json.loads((folder / compiled.MANIFEST).read_text(encoding="utf-8"))
    files = usable_files(manifest, package_digest(), sys.version)
    assert name in files, "scripts/compile_core.py (scripts/setup.sh runs it) builds it"
    spec = importlib.util.spec_from_file_location(name, folder / files[name])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_manifest_of_these_sources_and_this_python_gives_its_files():
    manifest = {"digest": "d1", "python": "3.12.1", "files": {"a.b": "a/b.so"}}
    assert usable_files(manifest, "d1", "3.12.1") == {"a.b": "a/b.so"}


@pytest.mark.parametrize(
    "manifest",
    [
        {"digest": "other", "python": "3.12.1", "files": {"a.b": "a/b.so"}},  # sources edited
        {"digest": "d1", "python": "3.12.2", "files": {"a.b": "a/b.so"}},  # another Python
        {"digest": "d1", "python": "3.12.1", "files": ["a/b.so"]},
        {"digest": "d1", "python": "3.12.1", "files": {"a.b": 3}},
        {"digest": "d1", "python": "3.12.1"},
        ["d1"],
        None,
    ],
)
def test_any_other_manifest_gives_nothing(manifest):
    assert usable_files(manifest, "d1", "3.12.1") == {}


def test_the_digest_changes_with_any_source_and_not_with_other_files(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    before = package_digest(tmp_path)
    (tmp_path / "notes.txt").write_text("not a source")
    assert package_digest(tmp_path) == before
    (tmp_path / "sub" / "b.py").write_text("y = 3\n")
    assert package_digest(tmp_path) != before


@pytest.mark.parametrize("name", ["fast.c", "fast.pyi"])
def test_a_c_module_or_a_stub_is_a_source_too(tmp_path, name):
    (tmp_path / "a.py").write_text("x = 1\n")
    digest, stamp = package_digest(tmp_path), source_stamp(tmp_path)
    (tmp_path / name).write_text("/* read by the build */\n")
    assert package_digest(tmp_path) != digest and source_stamp(tmp_path) != stamp


def test_the_stamp_changes_with_any_source_file_listed_or_touched_and_not_with_others(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    before = source_stamp(tmp_path)
    assert source_stamp(tmp_path) == before
    (tmp_path / "notes.txt").write_text("not a source")
    assert source_stamp(tmp_path) == before
    b = tmp_path / "sub" / "b.py"
    at = b.stat().st_mtime_ns
    os.utime(b, ns=(at, at - 10**9))  # another modification time, the same bytes
    assert source_stamp(tmp_path) != before
    before = source_stamp(tmp_path)
    (tmp_path / "c.py").write_text("")
    assert source_stamp(tmp_path) != before
    (tmp_path / "c.py").unlink()
    assert source_stamp(tmp_path) == before
    b.write_text("y = 22\n")  # another size
    assert source_stamp(tmp_path) != before


def test_a_stamp_is_kept_only_for_sources_untouched_for_two_seconds(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    changed = max((s := (tmp_path / "a.py").stat()).st_mtime_ns, s.st_ctime_ns)
    # a file written in the same tick as the stamp was taken could change again unseen
    # (file times have the file system's granularity): no stamp, the digest decides
    assert settled_stamp(tmp_path, now_ns=changed + 10**9) is None
    assert settled_stamp(tmp_path, now_ns=changed + 3 * 10**9) == source_stamp(tmp_path)


def test_a_manifest_is_stamped_only_with_the_stamp_the_sources_still_have(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    stamp = source_stamp(tmp_path)
    manifest = {"digest": "d1", "stamp": "an older stamp"}
    assert with_stamp(manifest, stamp, tmp_path) == {"digest": "d1", "stamp": stamp}
    assert with_stamp(manifest, None, tmp_path) == {"digest": "d1"}  # not settled
    at = (tmp_path / "a.py").stat().st_mtime_ns
    os.utime(tmp_path / "a.py", ns=(at, at + 10**9))  # written during the build
    assert with_stamp(manifest, stamp, tmp_path) == {"digest": "d1"}


def test_the_finder_loads_a_module_from_its_file_and_only_the_modules_it_names(tmp_path):
    probe = tmp_path / "probe_impl.py"
    probe.write_text("WHERE = 'the finder'\n")
    finder = CompiledFinder({PROBE: probe})
    spec = finder.find_spec(PROBE)
    assert spec is not None and spec.origin == str(probe)
    assert finder.find_spec("json") is None


def _prefix(tmp_path: Path, digest: str, stamp: str | None = None) -> Path:
    folder = tmp_path / compiled.FOLDER
    folder.mkdir()
    (folder / "probe_impl.py").write_text("WHERE = 'the build'\n")
    files = {PROBE: "probe_impl.py"}
    manifest = {"digest": digest, "python": sys.version, "files": files}
    if stamp is not None:
        manifest["stamp"] = stamp
    (folder / compiled.MANIFEST).write_text(json.dumps(manifest))
    return tmp_path


@pytest.fixture
def no_build():
    """This process may run the venv's build: its finder is set aside meanwhile, and any
    finder a test activates is dropped after it."""
    mine = [f for f in sys.meta_path if isinstance(f, CompiledFinder)]
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, CompiledFinder)]
    yield
    sys.meta_path[:] = mine + [f for f in sys.meta_path if not isinstance(f, CompiledFinder)]
    sys.modules.pop(PROBE, None)


def test_a_build_of_these_sources_is_loaded_from_then_on(tmp_path, no_build):
    prefix = _prefix(tmp_path, package_digest())
    assert activate(str(prefix), {}) is True
    module = __import__(PROBE)
    assert module.WHERE == "the build"


def test_a_build_stamped_with_the_sources_as_they_are_is_loaded_without_reading_them(
    tmp_path, no_build, monkeypatch
):
    read = []
    monkeypatch.setattr(compiled, "package_digest", lambda *a: read.append(a) or "unused")
    prefix = _prefix(tmp_path, "the digest at build time", stamp=source_stamp())
    assert activate(str(prefix), {}) is True
    assert read == []  # the sources' bytes were not hashed
    assert __import__(PROBE).WHERE == "the build"


@pytest.mark.parametrize("digest", ["right", "wrong"])
def test_a_build_stamped_otherwise_is_loaded_only_when_the_digest_says_so(
    tmp_path, no_build, digest
):
    prefix = _prefix(
        tmp_path, package_digest() if digest == "right" else "an older digest", stamp="old"
    )
    assert activate(str(prefix), {}) is (digest == "right")


@pytest.mark.parametrize("why", ["edited", "pure", "no manifest", "file gone"])
def test_a_stale_or_refused_build_is_never_loaded(tmp_path, why, no_build):
    prefix = _prefix(tmp_path, "an older digest" if why == "edited" else package_digest())
    environ = {compiled.PURE_ENV: "1"} if why == "pure" else {}
    if why == "no manifest":
        (prefix / compiled.FOLDER / compiled.MANIFEST).unlink()
    if why == "file gone":
        (prefix / compiled.FOLDER / "probe_impl.py").unlink()
    assert activate(str(prefix), environ) is False
    assert not compiled.in_use()


def _printed(code: str, env: dict[str, str]) -> str:
    """What `code` prints, run by this Python in a process with `env`."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


def _checker_file(env: dict[str, str]) -> str:
    return _printed("import toolproxy.grade.checker as c; print(c.__file__)", env)


def test_the_venvs_build_is_the_grading_core_unless_pure_is_asked(monkeypatch):
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    env = dict(os.environ)
    loaded = _checker_file(env)
    assert loaded.endswith(".so"), (
        f"the grading core is not the compiled one ({loaded}): scripts/compile_core.py "
        "(scripts/setup.sh runs it) builds it for these sources"
    )
    assert _checker_file(env | {compiled.PURE_ENV: "1"}).endswith("checker.py")


def _glance_native(env: dict[str, str]) -> str:
    code = "import toolproxy.schema.glance as g; print(g.NATIVE_GLANCE is not None, g.__file__)"
    return _printed(code, env)


def test_the_venvs_build_has_its_c_modules_unless_they_are_turned_off(monkeypatch):
    for name in (compiled.PURE_ENV, compiled.NO_NATIVE_ENV):
        monkeypatch.delenv(name, raising=False)
    env = dict(os.environ)
    native, where = _glance_native(env).split(" ", 1)
    assert native == "True" and where.endswith(".so")
    native, where = _glance_native(env | {compiled.NO_NATIVE_ENV: "1"}).split(" ", 1)
    assert native == "False" and where.endswith(".so")  # the compiled core, read in Python
    native, where = _glance_native(env | {compiled.PURE_ENV: "1"}).split(" ", 1)
    assert native == "False" and where.endswith("glance.py")
