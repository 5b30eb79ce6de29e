"""Replay config files: the shipped examples load, and every mistake is a clear error."""

from __future__ import annotations

import pytest

from tests.paths import REPO
from toolproxy.errors import UserError
from toolproxy.replay.config import (
    ConfigError,
    baseline_of,
    changed_candidates,
    load_config,
    resolve_key,
)
from toolproxy.replay.model import Candidate, ReplayConfig

REPLAYS = REPO / "replays"
GOOD = """\
repeats: 3
candidates:
  - name: a
    base_url: http://127.0.0.1:8765/v1
    model: m1
  - name: b
    base_url: https://api.example.com/v1
    model: m2
    api_key_env: EXAMPLE_API_KEY
    params: {temperature: 0}
    baseline: true
"""


def write(tmp_path, text):
    path = tmp_path / "cfg.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def problems(tmp_path, text):
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, text))
    assert isinstance(e.value, UserError)
    return [str(i) for i in e.value.issues], str(e.value)


def test_good_config(tmp_path):
    config = load_config(write(tmp_path, GOOD))
    assert config.repeats == 3 and [c.name for c in config.candidates] == ["a", "b"]
    assert config.candidates[1].params == {"temperature": 0}
    assert baseline_of(config).name == "b"


def test_first_candidate_is_the_baseline_when_none_is_marked(tmp_path):
    config = load_config(write(tmp_path, GOOD.replace("    baseline: true\n", "")))
    assert baseline_of(config).name == "a"


@pytest.mark.parametrize("path", sorted(REPLAYS.glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_examples_load(path):
    config = load_config(path)
    assert config.candidates
    text = path.read_text()
    assert "sk-" not in text and "#" in text  # commented, and no key inline


def test_shipped_examples_exist():
    assert {p.name for p in REPLAYS.glob("*.yaml")} >= {
        "local-llamacpp.yaml",
        "openai-vs-vllm.yaml",
        "scripted.yaml",
    }


def test_unknown_keys_name_file_line_and_path(tmp_path):
    text = GOOD.replace("    model: m1\n", "    model: m1\n    concurency: 2\n").replace(
        "repeats: 3", "repeat: 3"
    )
    issues, message = problems(tmp_path, text)
    path = str(tmp_path / "cfg.yaml")
    assert issues == [
        f"{path}:1: repeat: unknown key (did you mean 'repeats'?); known keys: candidates, "
        "repeats, feedback_retries, stream",
        f"{path}:6: candidates[0].concurency: unknown key (did you mean 'concurrency'?); known "
        "keys: name, base_url, model, api_key_env, params, concurrency, rate_limit, timeout_s, "
        "retries, baseline",
    ]
    assert message.startswith(f"2 problems in replay config {path}:")


def test_bad_types_and_values(tmp_path):
    text = GOOD.replace("repeats: 3", "repeats: lots\nstream: sometimes").replace(
        "model: m2", "model: m2\n    concurrency: 0"
    )
    issues, _ = problems(tmp_path, text)
    assert [i.split(": ", 2)[1] for i in issues] == [
        "repeats",
        "stream",
        "candidates[1].concurrency",
    ]
    assert ":1: repeats: Input should be a valid integer" in issues[0]
    assert ":10: candidates[1].concurrency: Input should be greater than or equal to 1" in issues[2]


def test_missing_required_fields_and_empty_candidates(tmp_path):
    issues, _ = problems(tmp_path, "candidates:\n  - name: a\n")
    assert [i.split(": ", 2)[1:] for i in issues] == [
        ["candidates[0].base_url", "Field required"],
        ["candidates[0].model", "Field required"],
    ]
    issues, _ = problems(tmp_path, "candidates: []\n")
    assert issues[0].endswith(":1: candidates: at least one candidate is needed")
    issues, _ = problems(tmp_path, "- a\n- b\n")
    assert issues[0].endswith(":1: expected a mapping with `candidates: [...]`")
    issues, _ = problems(tmp_path, "")
    assert "expected a mapping" in issues[0]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("name", "recorded", "'recorded' names the recorded model's grading run; pick another"),
        ("name", "''", "must not be blank"),
        ("name", "'  '", "must not be blank"),
        ("model", "''", "must not be blank"),
    ],
)
def test_a_reserved_or_blank_name_is_refused(tmp_path, field, value, message):
    # a candidate named `recorded` was graded into `<run>:recorded`, then the recorded
    # model's rows replaced its own: its grades were lost without a word
    was = f"{field}: {'a' if field == 'name' else 'm1'}\n"
    text = GOOD.replace(was, f"{field}: {value}\n", 1)
    assert text != GOOD
    issues, _ = problems(tmp_path, text)
    assert [i.split(": ", 2)[1:] for i in issues] == [[f"candidates[0].{field}", message]]


def test_duplicate_names_and_several_baselines(tmp_path):
    text = GOOD.replace("name: b", "name: a") + "\n".join(
        ["  - name: c", "    base_url: http://h/v1", "    model: m", "    baseline: true", ""]
    )
    issues, _ = problems(tmp_path, text)
    assert any(
        i.endswith(":6: candidates[1].name: duplicate candidate name 'a' (also candidates[0])")
        for i in issues
    )
    assert any(
        ":15: candidates[2].baseline: more than one baseline (candidates[1], candidates[2])" in i
        for i in issues
    )


@pytest.mark.parametrize(
    "value",
    [
        "sk-proj-abcdefghijklmnop1234567890",
        "sk-ant-api03-abcdefghij",
        "gsk_0123456789abcdef",
        "openai_api_key",
        "MY-KEY",
        "1KEY",
    ],
)
def test_api_key_env_that_is_not_a_variable_name_is_refused_without_echo(tmp_path, value):
    issues, message = problems(tmp_path, GOOD.replace("EXAMPLE_API_KEY", value))
    assert len(issues) == 1 and ":9: candidates[1].api_key_env:" in issues[0]
    assert "never" in issues[0]
    assert value not in message  # it may be a key: never printed


def test_key_in_an_unknown_field_is_not_echoed(tmp_path):
    secret = "sk-live-0123456789abcdef"
    issues, message = problems(
        tmp_path, GOOD.replace("model: m1", f"model: m1\n    api_key: {secret}")
    )
    assert "keys never go into config files" in issues[0] and secret not in message


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("127.0.0.1:8000/v1", "not a valid URL"),
        ("ftp://host/v1", "not a valid URL"),
        ("http://host:notaport/v1", "not a valid URL"),
        ("http:///v1", "not a valid URL"),
        ("http://user:hunter2@host/v1", "carries a password"),
    ],
)
def test_bad_base_url(tmp_path, url, why):
    issues, message = problems(tmp_path, GOOD.replace("http://127.0.0.1:8765/v1", url))
    assert len(issues) == 1 and ":4: candidates[0].base_url: " + why in issues[0]
    assert "hunter2" not in message


def test_yaml_errors(tmp_path):
    issues, _ = problems(tmp_path, "candidates: [\n")
    assert "not valid YAML" in issues[0] and ":2:" in issues[0]
    issues, _ = problems(tmp_path, GOOD + "repeats: 2\n")
    assert issues[0].endswith(":12: duplicate key 'repeats'")


def test_unreadable_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the replay config"):
        load_config(tmp_path / "missing.yaml")


def test_yaml_12_scalars(tmp_path):
    """`no` stays a string (a model may be called that), as in expectation files."""
    config = load_config(write(tmp_path, GOOD.replace("model: m1", "model: no")))
    assert config.candidates[0].model == "no"


def test_resolve_key(monkeypatch):
    base = {"name": "c", "base_url": "http://h/v1", "model": "m"}
    assert resolve_key(Candidate(**base)) is None
    monkeypatch.setenv("TOOLPROXY_TEST_KEY", "secret-value")
    assert resolve_key(Candidate(**base, api_key_env="TOOLPROXY_TEST_KEY")) == "secret-value"
    monkeypatch.delenv("TOOLPROXY_TEST_KEY")
    with pytest.raises(ConfigError, match="TOOLPROXY_TEST_KEY is not set"):
        resolve_key(Candidate(**base, api_key_env="TOOLPROXY_TEST_KEY"))
    monkeypatch.setenv("TOOLPROXY_TEST_KEY", "")
    with pytest.raises(ConfigError, match="TOOLPROXY_TEST_KEY is empty"):
        resolve_key(Candidate(**base, api_key_env="TOOLPROXY_TEST_KEY"))
    with pytest.raises(ConfigError, match="looks like an API key") as e:
        resolve_key(Candidate(**base, api_key_env="sk-abc123"))
    assert "sk-abc123" not in str(e.value)


def test_structural_mistakes(tmp_path):
    issues, _ = problems(tmp_path, "candidates: {a: 1}\n")
    assert issues[0].endswith(":1: candidates: Input should be a valid list")
    issues, _ = problems(tmp_path, "candidates: [x]\n")
    assert "candidates[0]" in issues[0] and "valid dictionary" in issues[0]
    issues, _ = problems(tmp_path, GOOD.replace("EXAMPLE_API_KEY", "123"))
    assert issues[0].endswith(
        ":9: candidates[1].api_key_env: must be the NAME of an environment variable (a string), "
        "or null"
    )


def test_a_run_resumes_only_with_each_candidate_where_it_was_played():
    a = Candidate(name="a", base_url="http://127.0.0.1:8765/v1/", model="m1")
    b = Candidate(name="b", base_url="https://api.example.com/v1", model="m2")
    config = ReplayConfig(candidates=[a, b])
    played_a = ("http", "127.0.0.1", 8765, "/v1/chat/completions", "m1")
    played_b = ("https", "api.example.com", 443, "/v1/chat/completions", "m2")
    assert a.target() == played_a and b.target() == played_b
    assert changed_candidates("r", config, {}) == []
    assert changed_candidates("r", config, {"a": {played_a}, "b": {played_b}}) == []
    assert changed_candidates("r", config, {"gone": {played_a}}) == []  # not in the config
    moved = ("https", "api.example.com", 443, "/v2/chat/completions", "m2")
    before = ("http", "127.0.0.1", 8765, "/v1/chat/completions", "m0")
    assert changed_candidates("r", config, {"a": {played_a, before}, "b": {moved}}) == [
        "run r played candidate 'a' as model 'm0' at http://127.0.0.1:8765/v1; the config now "
        "says model 'm1' at http://127.0.0.1:8765/v1: resuming would mix two candidates' "
        "answers in one run",
        "run r played candidate 'b' as model 'm2' at https://api.example.com:443/v2; the "
        "config now says model 'm2' at https://api.example.com:443/v1: resuming would mix two "
        "candidates' answers in one run",
    ]
