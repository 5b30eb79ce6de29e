"""Structured output through the whole path: the real openai SDK asks for JSON
(`response_format` json_schema and json_object, Responses' `text.format`, streamed and
not) through real mitmdump + toolproxy; the scripted upstream answers right, broken, cut,
incomplete and wrong; `toolproxy label` turns a reply into an `expect: output` case and
`toolproxy grade` gives each reply its label, by the same stages as a tool call."""

from __future__ import annotations

from typing import Any

import openai
import pytest
import yaml

from toolproxy.cli.main import main
from toolproxy.scripted import Reply, Script

from .conftest import rows, wait_rows

TRIP = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city", "days"],
    "additionalProperties": False,
}
SCHEMA_FORMAT: Any = {
    "type": "json_schema",
    "json_schema": {"name": "trip", "schema": TRIP, "strict": True},
}
# model -> (what the scripted model answers, its finish reason, the label the reply earns)
REPLIES = {
    "good": ('{"city": "Paris", "days": 3}', None, None),
    "good-streamed": ('{"city": "Paris", "days": 3}', None, None),
    "broken": ('{"city": "Paris", "days": 3,}', None, "malformed_json"),
    "unclosed": ('{"city": "Paris", "days": 3', None, "truncation"),  # a prefix of JSON
    "prose": ("Sure! A 3-day trip to Paris.", None, "malformed_json"),
    "cut": ('{"city": "Par', "length", "truncation"),
    "incomplete": ('{"city": "Paris"}', None, "missing_required"),
    "wrong": ('{"city": "Lyon", "days": 3}', None, "hallucinated_param"),
    "stringly": ('{"city": "Paris", "days": "3"}', None, "type_coercion"),
    "extra": ('{"city": "Paris", "days": 3, "budget": 900}', None, "hallucinated_param"),
}


@pytest.mark.e2e
def test_structured_output_is_labeled_and_graded_like_a_call(upstream, proxy, capture, tmp_path):
    script = {
        m: [Reply(text=t, finish_reason=f, text_chunk_size=5)] for m, (t, f, _) in REPLIES.items()
    }
    script["object"] = [Reply(text='{"a": 1}')]
    script["responses"] = [Reply(text='{"city": "Paris", "days": 3}')]
    upstream.set_script(Script(replies=script))
    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="sk-structured", max_retries=0)
    ask: Any = [{"role": "user", "content": "Plan a 3-day trip to Paris as JSON."}]
    for model in REPLIES:
        stream = model in ("good-streamed", "cut")
        reply = client.chat.completions.create(
            model=model, messages=ask, response_format=SCHEMA_FORMAT, stream=stream
        )
        if stream:
            list(reply)  # type: ignore[arg-type]
    client.chat.completions.create(
        model="object", messages=ask, response_format={"type": "json_object"}
    )
    client.responses.create(
        model="responses",
        input="Plan a 3-day trip to Paris as JSON.",
        text={"format": {"type": "json_schema", "name": "trip", "schema": TRIP, "strict": True}},
    )
    models = [*REPLIES, "object", "responses"]
    recorded = wait_rows(capture, "SELECT model_requested, exchange_id FROM exchanges", len(models))
    exchange_of = dict(recorded)

    # label: the recorded replies become expect: output cases
    labeled = tmp_path / "labeled.yaml"
    assert main(["label", "-c", str(capture), "-o", str(labeled)]) == 0
    cases = {c["exchange_id"]: c for c in yaml.safe_load(labeled.read_text())}
    good = cases[exchange_of["good"]]
    assert good["expect"] == "output" and good["output"] == {"city": "Paris", "days": 3}
    assert good["id"].startswith("output-")
    assert cases[exchange_of["responses"]]["output"] == {"city": "Paris", "days": 3}
    assert cases[exchange_of["object"]]["output"] == {"a": 1}

    # grade: what each reply earns against the right answer
    mine = [
        {"id": m, "exchange_id": exchange_of[m], "expect": "output",
         "output": {"city": "Paris", "days": 3}}
        for m in [*REPLIES, "responses"]
    ] + [{"id": "object", "exchange_id": exchange_of["object"], "expect": "output",
          "output": {"a": 1}}]  # fmt: skip
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump(mine, sort_keys=False))
    assert main(["grade", str(path), "-c", str(capture), "--run", "structured"]) == 0
    got = dict(rows(capture, "SELECT case_id, coalesce(label, 'passed') FROM grades"))
    wanted = {m: label or "passed" for m, (_, _, label) in REPLIES.items()}
    assert got == wanted | {"object": "passed", "responses": "passed"}
    # the output is graded as one call to (output), against the requested schema
    sources = rows(capture, "SELECT DISTINCT called_tools::VARCHAR FROM grades")
    assert sources == [('["(output)"]',)]

    # replay: a candidate answering the same request is graded against the recorded output
    config = tmp_path / "candidates.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "feedback_retries": 0,
                "candidates": [
                    {"name": n, "base_url": f"{upstream.url}/v1", "model": m, "api_key_env": None}
                    for n, m in (("same", "good"), ("lyon", "wrong"), ("prose", "prose"))
                ],
            }
        )
    )
    argv = ["replay", str(config), "-c", str(capture), "--run", "re", "--per", "exchange"]
    argv += ["--exchange", exchange_of["good"], "--no-progress"]
    assert main(argv) == 0
    replayed = dict(
        rows(capture, "SELECT run, coalesce(label, 'passed') FROM grades WHERE run LIKE 're:%'")
    )
    assert replayed == {
        "re:recorded": "passed",
        "re:same": "passed",
        "re:lyon": "hallucinated_param",
        "re:prose": "malformed_json",
    }


@pytest.mark.e2e
@pytest.mark.parametrize("stream", [False, True])
def test_a_refusal_is_recorded_apart_and_graded_as_no_output(
    upstream, proxy, capture, tmp_path, stream
):
    """The model refuses instead of answering in the schema (Chat's `message.refusal`):
    the agent gets the refusal as sent, the capture keeps its words in `refusal`, and
    grading says what happened: no output (`no_call`), not broken JSON."""
    import json

    refused = "I'm sorry, I can't help with that request."
    head = {"id": "chatcmpl-r", "object": "chat.completion.chunk", "model": "gpt-4o"}
    if stream:
        chunks = [{"role": "assistant", "content": None, "refusal": ""}, {"refusal": refused[:9]},
                  {"refusal": refused[9:]}]  # fmt: skip
        events = [
            head | {"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in chunks
        ]
        events.append(head | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        kind = "text/event-stream"
    else:
        message = {"role": "assistant", "content": None, "refusal": refused}
        body = json.dumps(
            head | {"object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        )  # fmt: skip
        kind = "application/json"
    upstream.set_script(Script.of(Reply(raw_body=body, content_type=kind)))
    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="sk-structured", max_retries=0)
    ask: Any = [{"role": "user", "content": "Plan a 3-day trip to Paris as JSON."}]
    got = client.chat.completions.create(
        model="m", messages=ask, response_format=SCHEMA_FORMAT, stream=stream
    )
    if stream:
        said = "".join(c.choices[0].delta.refusal or "" for c in got if c.choices)  # type: ignore[union-attr]
    else:
        said = got.choices[0].message.refusal  # type: ignore[union-attr]
    assert said == refused  # untouched
    [(exchange_id, text, refusal)] = wait_rows(
        capture, "SELECT exchange_id, assistant_text, refusal FROM exchanges", 1
    )
    assert (text, refusal) == (None, refused)
    case = {"id": "trip", "exchange_id": exchange_id, "expect": "output",
            "output": {"city": "Paris", "days": 3}}  # fmt: skip
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump([case]))
    assert main(["grade", str(path), "-c", str(capture), "--run", "refused"]) == 0
    assert rows(capture, "SELECT label FROM grades") == [("no_call",)]
