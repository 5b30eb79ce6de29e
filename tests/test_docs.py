"""The README stays true: every command is documented, the quick-start commands exist."""

import re
import tomllib
from pathlib import Path

import yaml

from toolproxy.cli.main import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOCS = {p.name: p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))}


def commands():
    return build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]


def test_every_command_is_in_the_readme():
    for name in commands():
        assert f"`toolproxy {name}" in README, name


def test_quick_start_commands_are_near_the_top_and_real():
    top = README[:1500]
    assert "scripts/setup.sh && .venv/bin/toolproxy demo" in top
    assert ".venv/bin/python -m pytest" in top
    assert (ROOT / "scripts" / "setup.sh").exists()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "scripts/setup.sh" in ci and ".venv/bin/python -m pytest" in ci


def test_every_addon_option_is_documented():
    source = (ROOT / "toolproxy" / "capture" / "addon.py").read_text()
    for option in re.findall(r'"(toolproxy_[a-z_]+)"', source):
        assert f"`{option}`" in README, option


def test_python_version_matches_the_project():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["requires-python"] == ">=3.12"
    assert (ROOT / ".python-version").read_text().strip() == "3.12"


def test_design_card_top_level_exists():
    for name in (
        "pyproject.toml",
        "README.md",
        "toolproxy",
        "addons",
        "schemas",
        "tests",
        "replays",
        "bench",
    ):
        assert (ROOT / name).exists(), name


def test_the_expectations_example_loads(tmp_path):
    from toolproxy.grade.expectations import load_cases

    block = re.search(r"## Expectations\n.*?```yaml\n(.*?)```", DOCS["grading.md"], re.S)
    assert block
    path = tmp_path / "cases.yaml"
    path.write_text(block.group(1))
    (case,) = load_cases([path])
    assert case.id == "weather-paris" and case.calls[0].args["unit"].kind == "enum"


def test_the_label_table_matches_the_code():
    from toolproxy.grade.labels import PRECEDENCE

    for rank, label in enumerate(PRECEDENCE, start=1):
        assert f"| {rank} | `{label}` |" in DOCS["grading.md"]


def test_the_scripted_upstream_example_is_the_default_script():
    from toolproxy.scripted.script import Script
    from toolproxy.scripted.server import DEFAULT_SCRIPT

    block = re.search(r"## The scripted upstream.*?```yaml\n(.*?)```", DOCS["capture.md"], re.S)
    assert block is not None
    shown = Script.model_validate(yaml.safe_load(block.group(1)))
    assert shown == Script.load(DEFAULT_SCRIPT)
    assert any(r.tool_calls for r in shown.replies["default"])


def shell_lines(text: str) -> list[str]:
    """Every command line of the text's ```bash blocks (continuations joined, comments cut)."""
    lines: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def toolproxy_commands() -> list[tuple[str, list[str]]]:
    import shlex

    found = []
    for name, text in [("README.md", README), *DOCS.items()]:
        for line in shell_lines(text):
            for part in re.split(r"\s*(?:&&|\|\||;|\|)\s*", line.rstrip("&").strip()):
                words = shlex.split(part)
                if words and words[0].endswith("toolproxy"):
                    found.append((name, words[1:]))
    return found


def test_every_toolproxy_example_in_the_docs_parses_and_names_real_files():
    import contextlib
    import io

    commands = toolproxy_commands()
    assert len(commands) >= 25  # the docs show 29 today
    parser = build_parser()
    for where, argv in commands:
        with contextlib.redirect_stderr(io.StringIO()) as err:
            try:
                parser.parse_args(argv)
            except SystemExit as exc:
                why = f"{where}: toolproxy {' '.join(argv)}: {err.getvalue()}"
                assert exc.code == 0, why  # --help exits 0
        for word in argv:  # a file of the repo's (a replay config, a schema) must exist
            if re.match(r"^(replays|schemas|addons|scripts|examples)/\S+\.\w+$", word):
                assert (ROOT / word).exists(), f"{where}: {word} does not exist"


def test_every_repo_file_a_command_s_help_names_exists():
    from tests.cli.test_main import every_parser

    for name, parser in every_parser():
        for word in re.findall(
            r"\b(?:replays|schemas|examples|expectations)/[\w.-]+\.\w+", parser.format_help()
        ):
            if not word.startswith("expectations/"):  # the user's own cases file
                assert (ROOT / word).exists(), f"{name} --help: {word}"


def test_the_docs_speak_of_what_exists_not_of_plans():
    for name, text in [("README.md", README), *DOCS.items()]:
        for phrase in ("next issue", "TODO", "TBD", "coming soon", "not yet implemented"):
            assert phrase.lower() not in text.lower(), f"{name}: {phrase}"


def test_the_corpus_size_the_docs_give_is_the_corpus_s():
    from tests.fixtures.corpus import ITEMS

    assert f"`tests/fixtures/corpus/`, {len(ITEMS)} known outputs" in DOCS["grading.md"]


def test_the_nested_matcher_example_loads_and_means_what_it_says():
    from toolproxy.grade.expectations import parse_matcher
    from toolproxy.grade.matchers import match

    block = re.search(
        r"\*\*Matchers inside objects and lists\.\*\*.*?```yaml\n(.*?)```", DOCS["grading.md"], re.S
    )
    assert block
    args = yaml.safe_load(block.group(1))["args"]
    stops, budget = parse_matcher(args["stops"]), parse_matcher(args["budget"])
    assert match(stops, [{"city": "LYON"}, {"city": "Paris", "nights": 2}]) == (True, None)
    assert match(stops, [{"city": "Pari"}, {"city": "Lyon"}])[0] is False
    assert match(budget, {"amount": 530, "currency": "EUR"}) == (True, None)
    assert match(budget, {"amount": 530, "currency": "EUR", "tip": 5})[0] is False
