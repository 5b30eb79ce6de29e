"""Replay configuration files: which candidate models a replay sends captured turns to.

Format
------

A YAML file (conventionally under `replays/`), read with YAML 1.2 core scalars (only
`true`/`false` are booleans, as in expectation files)::

    repeats: 3                 # k: each item is replayed k times per candidate (1..100, default 1)
    feedback_retries: 2        # closed loop: corrections fed back per turn (0..10, default 2)
    stream: as_recorded        # as_recorded (default) | always | never
    candidates:                # required, at least one
      - name: qwen-local       # required, unique, not `recorded`; used in run names and reports
        base_url: http://127.0.0.1:8080/v1   # required: an http(s) URL of an OpenAI-compatible API
        model: qwen2.5-7b-instruct           # required: the model name sent in requests
        api_key_env: null      # the NAME of the environment variable holding the key
                               #   (e.g. OPENAI_API_KEY); null or absent: no key is sent
        params:                # extra request params, sent on every request of this candidate
          temperature: 0       #   (they win over the recorded ones)
        concurrency: 4         # requests in flight at once (1..1024, default 4)
        rate_limit: 10         # requests per second (default: unlimited)
        timeout_s: 120         # per request (default 60)
        retries: 3             # on 429 / 5xx / transport errors, with backoff (0..20, default 3)
        baseline: true         # the candidate reports compare against

At most one candidate may say `baseline: true`; when none does, the **first** candidate is
the baseline (`baseline_of`).

Keys never go into the file: `api_key_env` must be an environment variable name (upper-case
letters, digits and `_`, not starting with a digit). A value that looks like a key (`sk-...`,
or anything else) is refused without echoing it, and so is a `base_url` that carries a
password. `resolve_key` reads the variable when the replay starts; an unset variable is an
error naming it.

Every problem in a file is reported at once, each as `file:line: field.path: message`
(`ConfigError`, exit code 2 in the CLI).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from pydantic import ValidationError

from toolproxy.errors import UserError
from toolproxy.grade.casefile import Issue, _duplicate_keys, _Loader, format_path, yaml_line
from toolproxy.replay.model import RECORDED, Candidate, ReplayConfig, Target
from toolproxy.util.textfile import Unreadable, read_text
from toolproxy.util.words import counted

ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
# Prefixes of provider keys (OpenAI, Anthropic, Groq, xAI, Google, Hugging Face, ...).
KEY_PREFIXES = ("sk-", "sk_", "gsk_", "xai-", "aiza", "hf_", "pk-", "bearer ")
SECRET_KEY = re.compile(r"key|token|secret|password|auth", re.IGNORECASE)


class ConfigError(UserError):
    """A replay config that does not validate (`issues` lists every problem), or a key
    variable that is not set."""

    def __init__(self, message: str, issues: Sequence[Issue] = ()) -> None:
        self.issues = sorted(issues, key=lambda i: (i.line or 0, i.path))
        lines = "".join(f"\n  {i}" for i in self.issues)
        super().__init__(message + lines)


def _known_keys(loc: tuple[Any, ...]) -> list[str]:
    """The field names allowed in the mapping that holds `loc` (for "did you mean")."""
    inner = loc[:-1]
    if inner[:1] == ("candidates",) and len(inner) == 2:
        return list(Candidate.model_fields)
    return list(ReplayConfig.model_fields) if not inner else []


def _pydantic_issues(file: str, node: yaml.Node, error: ValidationError) -> list[Issue]:
    issues = []
    for e in error.errors():
        loc = tuple(e["loc"])
        message = e["msg"]
        if e["type"] == "extra_forbidden":
            known = _known_keys(loc)
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            message = "unknown key" + (f" (did you mean {close[0]!r}?)" if close else "")
            if SECRET_KEY.search(str(loc[-1])):
                message += "; keys never go into config files: name their variable in api_key_env"
            elif known:
                message += f"; known keys: {', '.join(known)}"
        elif loc and loc[-1] == "api_key_env":
            message = "must be the NAME of an environment variable (a string), or null"
        issues.append(
            Issue(file=file, line=yaml_line(node, loc), path=format_path(loc), message=message)
        )
    return issues


def key_env_problem(value: str, option: str = "api_key_env") -> str | None:
    """Why `value` is not an acceptable `api_key_env` (or command-line `option`, such as
    --judge-key-env), or None. Never quotes the value: it may be a key."""
    if value.lower().startswith(KEY_PREFIXES):
        flag = option.startswith("--")
        place, usage = (
            ("on command lines", f"{option} OPENAI_API_KEY")
            if flag
            else ("into config files", f"{option}: OPENAI_API_KEY")
        )
        return (
            f"this looks like an API key, not the name of an environment variable: keys never "
            f"go {place}. Export the key (export OPENAI_API_KEY=...) and write `{usage}`"
        )
    if not ENV_NAME.fullmatch(value):
        return (
            "must be the NAME of an environment variable (upper-case letters, digits and _, "
            "e.g. OPENAI_API_KEY), never the key itself"
        )
    return None


def base_url_problem(value: str) -> str | None:
    """Why `value` is not a usable base URL, or None."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  (raises ValueError for a bad port)
    except ValueError as e:
        return f"not a valid URL ({e})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not a valid URL: expected http(s)://host[:port]/path, e.g. http://127.0.0.1:8000/v1"
    if parts.password:
        return "carries a password: put credentials in the environment (api_key_env), not the URL"
    return None


def _raw_issues(file: str, node: yaml.Node, data: dict[str, Any]) -> list[Issue]:
    """Checks pydantic cannot make: names, baselines, key variables, URLs."""
    issues: list[Issue] = []

    def add(loc: tuple[str | int, ...], message: str) -> None:
        issues.append(
            Issue(file=file, line=yaml_line(node, loc), path=format_path(loc), message=message)
        )

    candidates = data.get("candidates")
    if not isinstance(candidates, list):
        return issues
    if not candidates:
        add(("candidates",), "at least one candidate is needed")
    first_of: dict[str, int] = {}
    baselines: list[int] = []
    for i, raw in enumerate(candidates):
        if not isinstance(raw, dict):
            continue
        name = raw.get("name")
        if isinstance(name, str):
            if not name.strip():
                add(("candidates", i, "name"), "must not be blank")
            elif name == RECORDED:
                add(
                    ("candidates", i, "name"),
                    f"{RECORDED!r} names the recorded model's grading run; pick another",
                )
            if name in first_of:
                add(
                    ("candidates", i, "name"),
                    f"duplicate candidate name {name!r} (also candidates[{first_of[name]}])",
                )
            first_of.setdefault(name, i)
        if raw.get("baseline") is True:
            baselines.append(i)
        key_env = raw.get("api_key_env")
        if isinstance(key_env, str) and (problem := key_env_problem(key_env)):
            add(("candidates", i, "api_key_env"), problem)
        model = raw.get("model")
        if isinstance(model, str) and not model.strip():
            add(("candidates", i, "model"), "must not be blank")
        url = raw.get("base_url")
        if isinstance(url, str) and (problem := base_url_problem(url)):
            add(("candidates", i, "base_url"), problem)
    if len(baselines) > 1:
        names = ", ".join(f"candidates[{i}]" for i in baselines)
        for i in baselines[1:]:
            add(("candidates", i, "baseline"), f"more than one baseline ({names}); keep one")
    return issues


def _compose(path: Path, text: str) -> tuple[yaml.Node | None, Any]:
    try:
        loader = _Loader(text)
    except yaml.YAMLError as e:  # the reader refuses control characters before parsing
        issue = Issue(file=str(path), line=None, message=f"not valid YAML: {e}")
        raise ConfigError(f"{path}: not a valid replay config:", [issue]) from None
    try:
        node = loader.get_single_node()
        return node, loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        issue = Issue(
            file=str(path),
            line=mark.line + 1 if mark else None,
            message=f"not valid YAML: {e.problem}",
        )
        raise ConfigError(f"{path}: not a valid replay config:", [issue]) from None
    finally:
        loader.dispose()


def load_config(path: Path | str) -> ReplayConfig:
    """Read and validate a replay config file (format in the module docstring)."""
    path = Path(path)
    try:
        text = read_text(path)
    except Unreadable as e:
        raise ConfigError(f"{path}: cannot read the replay config: {e}") from None
    node, data = _compose(path, text)
    file = str(path)
    if node is None or not isinstance(data, dict):
        line = node.start_mark.line + 1 if node is not None else None
        issue = Issue(file=file, line=line, message="expected a mapping with `candidates: [...]`")
        raise ConfigError(f"{path}: not a valid replay config:", [issue])
    issues = [
        Issue(file=file, line=line, message=f"duplicate key {key!r}")
        for line, key in _duplicate_keys(node)
    ]
    issues += _raw_issues(file, node, data)
    config = None
    try:
        config = ReplayConfig.model_validate(data)
    except ValidationError as e:
        issues += _pydantic_issues(file, node, e)
    if issues or config is None:
        n = len(issues)
        raise ConfigError(f"{counted(n, 'problem')} in replay config {path}:", issues)
    return config


def baseline_of(config: ReplayConfig) -> Candidate:
    """The candidate marked `baseline: true`, else the first one."""
    return next((c for c in config.candidates if c.baseline), config.candidates[0])


def resolve_key(candidate: Candidate) -> str | None:
    """The candidate's API key from the environment; None when it names no variable.

    An unset or empty variable is a `ConfigError` naming it (the key itself never appears in
    an error)."""
    if candidate.api_key_env is None:
        return None
    if problem := key_env_problem(candidate.api_key_env):
        raise ConfigError(f"candidate {candidate.name!r}: api_key_env {problem}")
    key = os.environ.get(candidate.api_key_env)
    if not key:
        raise ConfigError(
            f"candidate {candidate.name!r}: environment variable {candidate.api_key_env} is "
            f"{'empty' if key == '' else 'not set'}; export it, or write `api_key_env: null` "
            "for an endpoint that needs no key"
        )
    return key


def changed_candidates(
    run: str, config: ReplayConfig, played: Mapping[str, Iterable[tuple[Any, ...]]]
) -> list[str]:
    """Why `config` cannot resume `run`: per candidate whose played cells went to another
    model or endpoint (`played`: `store.queries.replays.played_targets`) than the config
    now names. Resuming would keep those cells and report them under the new model."""
    problems = []
    for cand in config.candidates:
        now = cand.target()
        before = sorted({Target(*t) for t in played.get(cand.name, ())} - {now})
        if before:
            problems.append(
                f"run {run} played candidate {cand.name!r} as {before[0].shown()}; the config "
                f"now says {now.shown()}: resuming would mix two candidates' answers in one run"
            )
    return problems
