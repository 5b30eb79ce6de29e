"""An agent on Ollama's own API (`/api/chat`, NDJSON streams) through real mitmdump, the
real `ollama` client talking: what it reads is what the upstream sent, the call
(arguments an object, no id) is recorded, the tool message naming no call is linked to
it, the session continues, and grading works as for any other format."""

from __future__ import annotations

import json

import httpx
import ollama

from tests import paths
from toolproxy.cli.main import main
from toolproxy.scripted import Reply, Script, ScriptedCall

from .conftest import rows, wait_rows

WIRE = paths.FIXTURES / "wire"
CALL = ScriptedCall(
    name="get_current_weather", arguments={"location": "Paris, FR", "format": "celsius"}
)


def test_an_ollama_agent_is_recorded_linked_and_graded(upstream, proxy, capture, tmp_path, capsys):
    upstream.set_script(
        Script.of(
            Reply(text="Let me check.", tool_calls=[CALL], text_chunk_size=4),
            Reply(text="It is 11°C in Paris."),
            deterministic=True,
        )
    )
    tools = json.loads((WIRE / "ollama_request.json").read_text())["tools"]
    messages = [{"role": "user", "content": "What is the weather today in Paris?"}]
    client = ollama.Client(host=proxy.url)
    parts = list(client.chat(model="llama3.2", messages=messages, tools=tools, stream=True))
    (call,) = [c for p in parts for c in p.message.tool_calls or []]
    assert dict(call.function.arguments) == CALL.arguments
    messages += [
        {"role": "assistant", "content": "Let me check.", "tool_calls": [call.model_dump()]},
        {"role": "tool", "content": "11 degrees celsius", "tool_name": "get_current_weather"},
    ]
    final = client.chat(model="llama3.2", messages=messages, tools=tools, stream=False)
    assert final.message.content == "It is 11°C in Paris."
    ex = wait_rows(
        capture,
        "SELECT exchange_id, session_id, session_source, wire_format, parse_status, streamed"
        " FROM exchanges ORDER BY started_at",
        2,
    )
    assert [x[2:] for x in ex] == [
        ("new", "ollama_chat", "ok", True),
        ("continued", "ollama_chat", "ok", False),
    ]
    assert ex[1][1] == ex[0][1]
    (recorded,) = rows(capture, "SELECT exchange_id, call_id, name, arguments FROM tool_calls")
    assert recorded[:3] == (ex[0][0], None, "get_current_weather")
    assert json.loads(recorded[3]) == CALL.arguments
    linked = rows(capture, "SELECT exchange_id, call_exchange_id, call_index FROM tool_results")
    assert linked == [(ex[1][0], ex[0][0], 0)]
    cases = tmp_path / "cases.yaml"
    assert main(["label", "-c", str(capture), "--out", str(cases)]) == 0
    capsys.readouterr()
    assert main(["grade", str(cases), "-c", str(capture), "--run", "as-made", "--json"]) == 0
    graded = json.loads(capsys.readouterr().out)["summary"]
    assert (graded["cases"], graded["passed"]) == (1, 1)  # the call turn, accepted as made
    # a reviewer wanted Fahrenheit: the same call is now a confident wrong value
    cases.write_text(cases.read_text().replace("format: celsius", "format: fahrenheit"))
    assert main(["grade", str(cases), "-c", str(capture), "--run", "edited", "--json"]) == 0
    graded = json.loads(capsys.readouterr().out)["summary"]
    assert graded["by_label"] == {"hallucinated_param": 1}


def test_the_bytes_of_a_stream_reach_the_agent_untouched(upstream, proxy, capture):
    streamed = (WIRE / "ollama_stream.ndjson").read_bytes()
    upstream.set_script(
        Script.of(Reply(raw_body=streamed.decode(), content_type="application/x-ndjson"))
    )
    body = json.loads((WIRE / "ollama_request.json").read_text()) | {"stream": True}
    with httpx.stream("POST", f"{proxy.url}/api/chat", json=body, timeout=10) as r:
        assert b"".join(r.iter_raw()) == streamed
    [(status, tokens)] = wait_rows(capture, "SELECT parse_status, output_tokens FROM exchanges", 1)
    assert (status, tokens) == ("ok", 33)
