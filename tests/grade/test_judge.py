"""The LLM judge against a real HTTP server playing scripted verdicts, caching in a real
capture (DuckDB in a temp dir)."""

from __future__ import annotations

import json

import pytest

from toolproxy import store
from toolproxy.errors import UserError
from toolproxy.grade import judge as judge_mod
from toolproxy.grade.judge import JudgeError, build_prompt, cache_key, make_judge, parse_verdict
from toolproxy.scripted import Reply, Script

SECRET = "sk-judge-secret-5d1f0a"
YES = Reply(text='{"verdict": true, "reason": "same city"}')
NO = Reply(text='{"verdict": false, "reason": "a different city"}')


@pytest.fixture
def capture(tmp_path):
    return store.init_capture(tmp_path / "capture")


def new_judge(scripted_upstream, capture, model="judge-1", **options):
    options = {"timeout_s": 5.0, "retries": 0, **options}
    return make_judge(scripted_upstream.url + "/v1", model, "TEST_JUDGE_KEY", capture, **options)


def cached(capture):
    return store.query(capture, "SELECT key, model, prompt, verdict, reason FROM judge_cache")[1]


def test_prompt_is_the_fixed_template_filled_in():
    prompt = build_prompt("  the city of Paris ", {"b": 1, "a": "Paris, France"})
    assert "Criterion:\nthe city of Paris\n" in prompt
    assert 'Value (JSON):\n{"a": "Paris, France", "b": 1}\n' in prompt
    assert '{"score": 1 or 0.5 or 0, "reason": "one short sentence"}' in prompt
    assert "- 0.5: it partly does" in prompt
    long = build_prompt("c", "x" * 30_000)
    assert "…(cut)" in long and len(long) < judge_mod.MAX_VALUE_CHARS + len(judge_mod.TEMPLATE)
    assert long.endswith('"reason": "one short sentence"}')


def test_cache_key_depends_on_model_and_prompt():
    assert cache_key("m", "p") == cache_key("m", "p")
    assert len({cache_key("m", "p"), cache_key("m2", "p"), cache_key("m", "p2")}) == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"score": 1, "reason": "ok"}', (1.0, "ok")),
        (
            '{"score": 0.5, "reason": "the city, not the district"}',
            (0.5, "the city, not the district"),
        ),
        ('```json\n{"score": 0, "reason": "no"}\n```', (0.0, "no")),
        ('{"score": 1.0, "verdict": false}', (1.0, "")),  # the score is what was asked
        # a judge that answers pass/fail: 1 or 0
        ('{"verdict": true, "reason": "ok"}', (1.0, "ok")),
        ('  {"verdict": false}  ', (0.0, "")),
        ('{"verdict": true, "reason": 3}', (1.0, "")),
    ],
)
def test_parse_verdict_reads_the_asked_json(text, expected):
    score, reason = parse_verdict(text)
    assert (score, reason) == expected and type(score) is float


@pytest.mark.parametrize(
    "text",
    [
        "yes",
        "",
        '{"verdict": "true"}',
        '["verdict", true]',
        '{"reason": "r"}',
        "{broken",
        '{"score": 0.7}',
        '{"score": "1"}',
        '{"score": true}',
        '{"score": 2}',
        '{"score": null}',
    ],
)
def test_parse_verdict_refuses_anything_else(text):
    with pytest.raises(JudgeError, match="judge reply"):
        parse_verdict(text)


def test_verdicts_are_cached_with_reasons_and_never_asked_twice(
    scripted_upstream, capture, monkeypatch
):
    monkeypatch.setenv("TEST_JUDGE_KEY", SECRET)
    scripted_upstream.set_script(Script.of(YES, NO))
    judge = new_judge(scripted_upstream, capture)
    assert judge("the city of Paris", "Paris") == (True, "same city")
    assert judge("the city of Paris", "Paris") == (True, "same city")
    assert len(scripted_upstream.requests) == 1
    (request,) = scripted_upstream.requests
    assert request.body["model"] == "judge-1" and request.body["temperature"] == 0
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    prompt = request.body["messages"][0]["content"]
    assert prompt == build_prompt("the city of Paris", "Paris")
    assert cached(capture) == [(cache_key("judge-1", prompt), "judge-1", prompt, True, "same city")]

    # a new judge (the next grading run) reads the cache: still no second request
    again = new_judge(scripted_upstream, capture)
    assert again("the city of Paris", "Paris") == (True, "same city")
    assert len(scripted_upstream.requests) == 1
    # another value is another prompt; another pinned model is another key
    assert again("the city of Paris", "Lyon") == (False, "a different city")
    assert len(scripted_upstream.requests) == 2
    other = new_judge(scripted_upstream, capture, model="judge-2")
    other("the city of Paris", "Paris")
    assert len(scripted_upstream.requests) == 3
    assert len(cached(capture)) == 3


def test_the_key_is_never_written_to_the_capture(scripted_upstream, capture, monkeypatch):
    monkeypatch.setenv("TEST_JUDGE_KEY", SECRET)
    scripted_upstream.set_script(Script.of(YES, Reply(status=401)))
    judge = new_judge(scripted_upstream, capture)
    judge("c", 1)
    with pytest.raises(JudgeError) as failed:
        judge("c", 2)
    assert SECRET not in str(failed.value) and "$TEST_JUDGE_KEY" in str(failed.value)
    store.compact(capture)
    files = [p for p in capture.rglob("*") if p.is_file()]
    assert files and all(SECRET.encode() not in p.read_bytes() for p in files)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(status=500), "http_status: HTTP 500"),
        (Reply(raw_body="<html>oops</html>", content_type="text/html"), "bad_response"),
        (Reply(text="Sure! The value is fine."), "judge reply is not JSON"),
        (Reply(text='{"verdict": "maybe"}'), 'no "score" of 1, 0.5 or 0'),
    ],
    ids=["500", "garbage", "prose", "not-bool"],
)
def test_a_faulty_endpoint_is_a_clear_error_and_not_cached(
    scripted_upstream, capture, reply, message
):
    scripted_upstream.set_script(Script.of(reply, YES))
    judge = new_judge(scripted_upstream, capture, timeout_s=0.3)
    with pytest.raises(JudgeError, match=message) as failed:
        judge("c", "v")
    assert "judge-1" in str(failed.value)
    assert cached(capture) == []
    # not cached: the next try asks again and gets a verdict
    assert judge("c", "v") == (True, "same city")
    assert len(scripted_upstream.requests) == 2


@pytest.mark.parametrize(
    ("reply", "message"),
    [(Reply(hang_s=10), "timeout"), (Reply(reset_before_response=True), "connection")],
    ids=["hang", "reset"],
)
def test_an_unreachable_endpoint_is_not_asked_again(scripted_upstream, capture, reply, message):
    scripted_upstream.set_script(Script.of(reply, YES))
    judge = new_judge(scripted_upstream, capture, timeout_s=0.3)
    with pytest.raises(JudgeError, match=f"judge-1 at .*: {message}"):
        judge("c", "v")
    with pytest.raises(JudgeError, match=f"not asked, it was unreachable earlier \\({message}"):
        judge("c", "other value")
    assert len(scripted_upstream.requests) == 1 and cached(capture) == []


PARTLY = Reply(text='{"score": 0.5, "reason": "the city but not the district"}')


def test_graded_scores_are_cached_and_a_verdict_from_before_scores_reads_as_1_or_0(
    scripted_upstream, capture
):
    scripted_upstream.set_script(Script.of(PARTLY))
    judge = new_judge(scripted_upstream, capture)
    assert judge("Paris 8e", "Paris") == (0.5, "the city but not the district")
    rows = store.query(capture, "SELECT verdict, score FROM judge_cache")[1]
    assert rows == [(False, 0.5)]
    assert new_judge(scripted_upstream, capture)("Paris 8e", "Paris")[0] == 0.5
    # a row written before scores had no score column: its verdict is the score
    from toolproxy.store.segments import SegmentWriter

    old = {"key": cache_key("judge-1", build_prompt("c", 1)), "model": "judge-1",
           "prompt": build_prompt("c", 1), "verdict": True, "reason": "old",
           "judged_at": "2024-01-01T00:00:00+00:00"}  # fmt: skip
    SegmentWriter(capture, "before-scores").write({"judge_cache": [old]})
    assert new_judge(scripted_upstream, capture)("c", 1) == (1.0, "old")
    assert len(scripted_upstream.requests) == 1


def test_without_a_capture_the_judge_caches_in_memory(scripted_upstream, tmp_path):
    scripted_upstream.set_script(Script.of(YES, NO))
    judge = new_judge(scripted_upstream, None)
    assert judge("c", 1) == judge("c", 1) == (1.0, "same city")
    assert len(scripted_upstream.requests) == 1 and list(tmp_path.iterdir()) == []


def test_a_judge_needs_a_pinned_model(capture):
    with pytest.raises(UserError, match="pinned model"):
        make_judge("http://127.0.0.1:9/v1", "", "K", capture)


def test_prompt_holds_values_of_any_json_type():
    for value in (None, True, 1.5, [1, "a"], {"nested": {"x": [1]}}):
        text = build_prompt("c", value)
        assert json.dumps(value, sort_keys=True) in text


@pytest.mark.parametrize(
    "model",
    ["gpt-4o-2024-08-06", "claude-3-5-sonnet-20241022", "gpt-4-0613", "gemini-1.5-pro-002"],
)
def test_a_dated_or_versioned_judge_model_is_pinned(model):
    assert judge_mod.alias_warning(model) is None


@pytest.mark.parametrize("model", ["gpt-4o", "claude-3-5-sonnet-latest", "gpt-4o-mini", "llama3"])
def test_an_alias_judge_model_is_named(model):
    warning = judge_mod.alias_warning(model)
    assert warning is not None and f"judge model {model!r} looks like an alias" in warning
