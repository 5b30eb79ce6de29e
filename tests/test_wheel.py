"""toolproxy built as a wheel and installed outside the checkout works: the package data
it needs (the expectations schema, the chat template, the default upstream script, the
conformance suite) is in
the wheel, and `toolproxy addon-path` gives mitmdump a script that loads the addon."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = """
import json, sys
from pathlib import Path
import toolproxy
from toolproxy.cli.main import main
from toolproxy.grade.expectations import load_cases
from toolproxy.localmodel.template import tool_template
from toolproxy.scripted.server import DEFAULT_SCRIPT
from toolproxy.suites import suite_path
cases = Path("cases.yaml")
text = "{match: text, values: [A]}"
cases.write_text(f"- {{id: a, exchange_id: x, calls: [{{tool: t, args: {{q: {text}}}}}]}}\\n")
print(json.dumps({
    "package": toolproxy.__file__,
    "cases": [c.id for c in load_cases([cases])],
    "template": len(tool_template()) > 0,
    "script": Path(DEFAULT_SCRIPT).is_file(),
    "suite": len(load_cases([suite_path("conformance")])),
}))
sys.exit(main(["addon-path"]))
"""


def test_the_wheel_works_outside_the_checkout(tmp_path):
    dist, site, work, src = (tmp_path / d for d in ("dist", "site", "work", "src"))
    work.mkdir()
    # built from a copy: setuptools writes build/ and egg-info beside the sources
    shutil.copytree(
        ROOT / "toolproxy", src / "toolproxy", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src)],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("toolproxy-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)], check=True)
    env = dict(os.environ, PYTHONPATH=str(site))
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=work, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    import json

    probe, addon = done.stdout.splitlines()
    found = json.loads(probe)
    assert found["package"].startswith(str(site))  # the wheel's copy, not the checkout's
    assert found == found | {"cases": ["a"], "template": True, "script": True, "suite": 50}
    script = Path(addon)
    assert script.is_file() and not script.is_relative_to(ROOT)
    # the script loads the addon from the wheel: mitmproxy's own loader runs it
    loaded = subprocess.run(
        [sys.executable, "-c", f"from mitmproxy.addons.script import load_script; "
         f"m = load_script({str(script)!r}); print(type(m.addons[0]).__module__)"],
        cwd=work, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert loaded.stdout.strip() == "toolproxy.capture.addon", loaded.stderr
