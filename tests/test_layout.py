"""The tests mirror the package: `toolproxy/a/b.py` (or a C module, `b.c`) is tested in
`tests/a/test_b.py`.

A package's `__init__.py` needs `tests/a/test_a.py` only when it defines something (a
function or a class), not when it only documents and re-exports. A module without a test
file of its own is listed in `UNMIRRORED` with where it is tested instead.
"""

import ast

from tests.paths import REPO, TESTS

PACKAGE = REPO / "toolproxy"
UNMIRRORED = {
    "cli/__main__.py": "two lines running cli.main; tests/cli/test_main.py runs `-m toolproxy.cli`",
    "errors.py": "one exception class; every CLI usage-error test raises it",
    "records.py": "record models; tests/store/test_tables.py and the wire tests hold their fields",
    "replay/model.py": "the replay models; every tests/replay test builds them",
    "store/rows.py": "row types; tests/store/queries/ reads every one of them",
}


def modules() -> list:
    """The package's modules: its Python files and its C ones."""
    return sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.c")])


def mirror_of(module) -> object:
    rel = module.relative_to(PACKAGE)
    if rel.name == "__init__.py":
        return TESTS.joinpath(*rel.parts[:-1], f"test_{rel.parent.name}.py")
    return TESTS.joinpath(*rel.parts[:-1], f"test_{rel.stem}.py")


def defines_something(module) -> bool:
    tree = ast.parse(module.read_text())
    return any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) for n in tree.body)


def test_every_module_has_its_test_file():
    missing = []
    for module in modules():
        rel = str(module.relative_to(PACKAGE))
        if rel in UNMIRRORED or (module.name == "__init__.py" and not defines_something(module)):
            continue
        if not mirror_of(module).exists():
            missing.append(f"{rel} -> {mirror_of(module).relative_to(REPO)}")
    assert missing == []


def test_every_exemption_names_a_module_that_exists_and_has_no_test_file():
    for rel in UNMIRRORED:
        module = PACKAGE / rel
        assert module.exists(), rel
        assert not mirror_of(module).exists(), f"{rel} has its test file now: drop it"


def test_every_test_file_in_a_package_folder_mirrors_a_module():
    mirrored = {mirror_of(m) for m in modules()}
    mirrored_dirs = {p.parent for p in mirrored}
    extra = [
        str(t.relative_to(REPO))
        for t in TESTS.rglob("test_*.py")
        if t.parent in mirrored_dirs and t not in mirrored and t.parent != TESTS
    ]
    assert set(extra) == ALLOWED_EXTRA


# Test files that cover a package across modules rather than one module, or the tests' own
# helpers (tests/tui/drive.py: a failing snapshot's text diff).
ALLOWED_EXTRA = {
    "tests/grade/test_corpus.py",
    "tests/grade/test_properties.py",
    "tests/tui/test_drive.py",
}
