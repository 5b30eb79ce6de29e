"""toolproxy.localmodel.process and .server: the real local model (SmolLM2-135M through
llama.cpp) as a child process, called with the real `openai` SDK. What is asserted is the
plumbing (a structured tool call when tools are offered, text when not, the process gone
after), not the tiny model's judgement."""

from __future__ import annotations

import json

import openai
import pytest

from toolproxy.localmodel.process import LocalModel, ModelError
from toolproxy.localmodel.weights import MODEL_NAME

TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_current_time",
        "description": "Current time in an IANA timezone",
        "parameters": {
            "type": "object",
            "properties": {"timezone": {"type": "string"}},
            "required": ["timezone"],
        },
    },
}


@pytest.fixture(scope="module")
def model():
    with LocalModel() as running:
        yield running
    assert running.process is not None and running.process.poll() is not None


def test_offered_tools_get_a_structured_call(model):
    client = openai.OpenAI(base_url=model.url, api_key="local", max_retries=0)
    reply = client.chat.completions.create(
        model=MODEL_NAME,
        messages=[{"role": "user", "content": "What time is it in Tokyo?"}],
        tools=[TIME_TOOL],
        tool_choice="required",
    )
    (call,) = reply.choices[0].message.tool_calls
    assert call.function.name == "get_current_time"
    assert isinstance(json.loads(call.function.arguments).get("timezone"), str)
    assert reply.choices[0].finish_reason == "tool_calls"


def test_without_tools_it_answers_in_text_and_streams(model):
    client = openai.OpenAI(base_url=model.url, api_key="local", max_retries=0)
    chunks = client.chat.completions.create(
        model=MODEL_NAME,
        messages=[{"role": "user", "content": "Say hello."}],
        stream=True,
        max_tokens=16,
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.strip()


def test_a_port_in_use_is_a_clear_error(model):
    with pytest.raises(ModelError, match=f"did not start on port {model.port}"):
        LocalModel(port=model.port).start()
