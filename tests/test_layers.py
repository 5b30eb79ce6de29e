"""Pure core, thin adapters, and a store that owns its SQL.

The lists come from pyproject.toml's import-linter contracts (one place): importing each
pure-core module loads no SDK (harlequin's check, in a fresh interpreter), each SDK is
imported only where its contract allows, and no SQL statement is written outside
`toolproxy/store/`.
"""

import ast
import re
import subprocess
import sys
import tomllib

import pytest

from tests.paths import REPO

PACKAGE = REPO / "toolproxy"
CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"][
    "contracts"
]
SDKS = ["mitmproxy", "duckdb", "openai", "mcp", "textual", "anthropic"]


def contract(prefix: str) -> dict:
    (found,) = [c for c in CONTRACTS if c["name"].startswith(prefix)]
    return found


def modules_under(dotted: str) -> list[str]:
    """`dotted` and, for a package, every module in it."""
    path = REPO.joinpath(*dotted.split("."))
    if path.with_suffix(".py").exists():
        return [dotted]
    return sorted(
        ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for p in path.rglob("*.py")
    )


CORE = [m for d in contract("The pure core")["source_modules"] for m in modules_under(d)]


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_sdk(module):
    code = f"import sys, {module}; print(','.join(m for m in {SDKS!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"


def imports_of(path) -> set[str]:
    """Top-level names of every module `path` imports (at any depth of the code)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize(
    "rule", [c["name"] for c in CONTRACTS if c["type"] == "forbidden" and c["name"] != "x"]
)
def test_no_module_a_contract_forbids_imports_the_sdk_directly(rule):
    c = contract(rule)
    forbidden = {m.split(".")[0] for m in c["forbidden_modules"]}
    for module in (m for d in c["source_modules"] for m in modules_under(d)):
        path = REPO.joinpath(*module.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        assert not imports_of(path) & forbidden, (module, imports_of(path) & forbidden)


def test_every_sdk_has_its_owner_contract_and_the_layers_name_every_package():
    names = " ".join(c["name"] for c in CONTRACTS)
    for owner in ("duckdb", "mitmproxy", "mcp SDK", "openai", "textual"):
        assert owner in names
    layered = {part.strip() for layer in contract("Layers")["layers"] for part in layer.split("|")}
    packages = {f"toolproxy.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    packages |= {f"toolproxy.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert packages == layered


# A statement the store's SQL would start with (a hint that names a view in prose is fine).
SQL = re.compile(r"^\s*(SELECT|WITH|INSERT|UPDATE|DELETE|CREATE|COPY|ATTACH)\s", re.I)


def sql_strings(path) -> list[str]:
    """String constants in `path` (f-string parts included) that read as SQL statements."""
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if SQL.match(node.value) and re.search(r"\b(FROM|VALUES|AS)\b", node.value):
                out.append(node.value)
    return out


def test_no_sql_text_outside_the_store():
    offenders = {
        str(p.relative_to(REPO)): sql_strings(p)
        for p in PACKAGE.rglob("*.py")
        if "store" not in p.relative_to(PACKAGE).parts[:1] and sql_strings(p)
    }
    assert offenders == {}


def test_the_sql_check_finds_sql_where_it_is(tmp_path):
    sample = tmp_path / "reader.py"
    sample.write_text('Q = "SELECT name FROM tool_calls"\nF = f"  with x AS (SELECT {1})"\n')
    assert len(sql_strings(sample)) == 2
    assert sql_strings(PACKAGE / "store" / "queries" / "turns.py")
