"""The LLM judge: decides whether an argument's value means what a `judge` matcher says.

`make_judge(base_url, model, key_env, capture)` returns `judge(criterion, value) ->
(score, reason)` for the checker: a graded score, 1 (satisfies the criterion), 0.5 (partly:
some of what it requires, or a small error) or 0 (does not), with the judge's reason; a
`judge` matcher passes at `pass_at` (default 1). The prompt is built from one fixed template
(`build_prompt`) and asks for `{"score": 1 | 0.5 | 0, "reason": "..."}`; the reply is read
by `parse_verdict` (which also takes `{"verdict": true|false}` as 1 or 0), both pure.
Scores are cached by sha256 of (model, prompt) in the capture's `judge_cache` table, with
their reasons, so re-grading the same field with the same pinned model never calls the
endpoint again (without a capture, `toolproxy judge calibrate`, in memory only).

A failing endpoint (HTTP error, garbage, timeout) or a reply that is not the verdict asked
for raises `JudgeError` with a clear message: the field is then not graded, never passed
and never failed. Failures are not cached, so the next field (or grading run) asks again;
except that once the endpoint timed out or could not be reached, this judge stops asking
and fails the remaining fields at once.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolproxy import store
from toolproxy.errors import UserError
from toolproxy.grade.model import JUDGE_SCORES
from toolproxy.grade.rows import JudgeVerdict
from toolproxy.store.segments import SegmentWriter

Judge = Callable[[str, Any], tuple[float, str]]

TEMPLATE = """\
You are grading one argument of a tool call made by an AI model.
Score how well the argument's value satisfies the criterion. Judge meaning, not wording:
paraphrases, synonyms and different formatting of the same content satisfy it.
- 1: it satisfies the criterion.
- 0.5: it partly does: some of what the criterion requires, or a small error.
- 0: it does not: it says something else, or far less than the criterion requires.

Criterion:
{criterion}

Value (JSON):
{value}

Answer with one JSON object and nothing else:
{{"score": 1 or 0.5 or 0, "reason": "one short sentence"}}"""
MAX_VALUE_CHARS = 20_000  # a judge prompt is for a field, not a document


class JudgeError(Exception):
    """The judge could not give a verdict (endpoint failure or an unreadable reply)."""


def build_prompt(criterion: str, value: Any) -> str:
    """The judge prompt for one field: the fixed template filled in."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) > MAX_VALUE_CHARS:
        text = text[:MAX_VALUE_CHARS] + " …(cut)"
    return TEMPLATE.format(criterion=criterion.strip(), value=text)


def cache_key(model: str, prompt: str) -> str:
    """sha256 of (model, prompt): the `judge_cache` key."""
    return hashlib.sha256(json.dumps([model, prompt]).encode()).hexdigest()


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_verdict(text: str) -> tuple[float, str]:
    """Read `{"score": 1 | 0.5 | 0, "reason": str}` (or `{"verdict": bool, ...}`, 1 or 0)
    from a reply; a ```json fence is allowed.

    Raises `JudgeError` for anything else: an unreadable verdict is not a verdict.
    """
    body = text.strip()
    if (fenced := _FENCE.match(body)) is not None:
        body = fenced[1]
    try:
        data = json.loads(body)
    except ValueError:
        raise JudgeError(f"judge reply is not JSON: {_cut(text)!r}") from None
    if not isinstance(data, dict):
        raise JudgeError(f'judge reply has no "score": {_cut(text)!r}')
    score = data.get("score")
    if "score" not in data and isinstance(data.get("verdict"), bool):
        score = 1.0 if data["verdict"] else 0.0
    if isinstance(score, bool) or not isinstance(score, (int, float)) or score not in JUDGE_SCORES:
        raise JudgeError(f'judge reply has no "score" of 1, 0.5 or 0: {_cut(text)!r}')
    reason = data.get("reason")
    return float(score), reason if isinstance(reason, str) else ""


_PINNED = re.compile(r"(\d{4}-\d{2}-\d{2}|\d{8}|[-@]\d{3,4})$")


def alias_warning(model: str) -> str | None:
    """Why `model` looks like an alias a provider may move to new weights (changing the
    judge's verdicts between runs), or None when its name carries a date or a version
    (gpt-4o-2024-08-06, claude-3-5-sonnet-20241022, gpt-4-0613, gemini-1.5-pro-002)."""
    if _PINNED.search(model) and not model.endswith("latest"):
        return None
    return (
        f"judge model {model!r} looks like an alias (no date or version in its name): its "
        "provider can move it to new weights and change verdicts between runs; pin a dated "
        "snapshot (e.g. gpt-4o-2024-08-06), unless it is a local server you control"
    )


def make_judge(
    base_url: str,
    model: str,
    key_env: str,
    capture: Path | str | None,
    *,
    timeout_s: float = 60.0,
    retries: int = 2,
) -> Judge:
    """A judge asking `model` at the OpenAI-compatible `base_url`, caching in `capture`
    (None: in memory only).

    The cache is read once, at the first call; new scores are written to the capture as
    they come (one segment file each), so an interrupted run keeps what it paid for.
    """
    if not model:
        raise UserError("the judge needs a pinned model (--judge-model)")
    from toolproxy.grade.judgeclient import (
        make_client,  # the openai SDK takes 2 s to import: only for a judge
    )

    client = make_client(base_url, model, key_env, timeout_s=timeout_s, retries=retries)
    cache: dict[str, tuple[float, str]] | None = None
    writer: SegmentWriter | None = None
    unreachable: str | None = None  # set once the endpoint timed out or could not be reached
    where = f"judge {model} at {base_url}"

    def judge(criterion: str, value: Any) -> tuple[float, str]:
        nonlocal cache, writer, unreachable
        if cache is None:
            cache = load_cache(capture, model) if capture is not None else {}
        prompt = build_prompt(criterion, value)
        key = cache_key(model, prompt)
        if key in cache:
            return cache[key]
        if unreachable is not None:
            # fail fast: waiting out the timeout again for every field would stall the run
            raise JudgeError(f"{where}: not asked, it was unreachable earlier ({unreachable})")
        reply = client.complete([{"role": "user", "content": prompt}], temperature=0)
        if reply.text is None:
            if reply.error_kind in ("timeout", "connection"):
                unreachable = f"{reply.error_kind}: {reply.error}"
            raise JudgeError(f"{where}: {reply.error_kind}: {reply.error}")
        try:
            score, reason = parse_verdict(reply.text)
        except JudgeError as exc:
            raise JudgeError(f"{where}: {exc}") from None
        row = JudgeVerdict(
            key=key,
            model=model,
            prompt=prompt,
            verdict=score == 1.0,
            score=score,
            reason=reason,
            judged_at=datetime.now(UTC).isoformat(),
        )
        if capture is not None:
            if writer is None:
                # a writer id of its own per judge: concurrent graders never share a sequence
                writer = SegmentWriter(capture, f"judge-{_stamp()}-{secrets.token_hex(3)}")
            writer.write({"judge_cache": [row.model_dump(mode="json")]})
        cache[key] = (score, reason)
        return score, reason

    return judge


def load_cache(capture: Path | str, model: str) -> dict[str, tuple[float, str]]:
    """The cached scores of `model` in a capture: key -> (score, reason); a verdict cached
    before scores is 1 or 0."""
    from toolproxy.store.queries.grades import judge_cache

    with store.reading(capture) as r:
        rows = judge_cache(r, model)
    return {
        key: (float(score) if score is not None else float(bool(verdict)), reason or "")
        for key, verdict, score, reason in rows
    }


def _stamp() -> str:
    return f"{datetime.now(UTC):%Y%m%dT%H%M%S}"


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
