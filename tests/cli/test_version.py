import subprocess
import sys
import tomllib
from pathlib import Path

import pydantic
import pytest

import toolproxy
from toolproxy.cli.main import main
from toolproxy.cli.version import PACKAGES, installed, version_lines
from toolproxy.store.catalog import SCHEMA_VERSION
from toolproxy.util.compiled import core

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_and_its_metadata_name_one_version():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == toolproxy.__version__


def test_installed_reads_the_metadata_and_says_when_a_package_is_absent():
    assert installed("pydantic") == pydantic.VERSION
    assert installed("no-such-package-toolproxy-test") == "not installed"


def test_lines_name_toolproxy_its_core_its_store_python_and_each_package():
    seen = []

    def lookup(name: str) -> str:
        seen.append(name)
        return "not installed" if name == "xllamacpp" else f"{len(name)}.0"

    lines = version_lines(lookup)
    assert lines[0] == f"toolproxy {toolproxy.__version__}"
    assert lines[1] == f"grading core: {core()}; capture store schema {SCHEMA_VERSION}"
    assert lines[2].startswith(f"Python {sys.version.split()[0]} (")
    assert sys.executable in lines[2]
    assert seen == list(PACKAGES)
    assert "mitmproxy 9.0, duckdb 6.0" in lines[3]
    assert lines[3].endswith("xllamacpp not installed")


def test_version_option_prints_on_stdout_and_exits_0(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == version_lines()
    assert err == ""


def test_the_installed_command_prints_it_without_a_command():
    script = Path(sys.executable).with_name("toolproxy")
    done = subprocess.run([str(script), "-V"], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[0] == f"toolproxy {toolproxy.__version__}"
    assert f"duckdb {installed('duckdb')}" in done.stdout
