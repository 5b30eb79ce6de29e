"""An agent on Google's Gemini API (the real `google-genai` client) through real mitmdump:
it reads what the upstream sent, the offered tools' API schemas become the JSON Schemas
they mean, the calls (no ids) are recorded and the function responses linked to them by
place, the session continues over a streamed and a whole turn, the API key never reaches
disk, and a call the schema refuses is graded so."""

from __future__ import annotations

import json

from google import genai
from google.genai import types

from toolproxy.cli.main import main
from toolproxy.scripted import Reply, Script, ScriptedCall

from .conftest import rows, wait_rows

KEY = "AIzaSy-gemini-SECRET-0123456789"
WEATHER = types.FunctionDeclaration(
    name="get_weather",
    description="Current weather for a city.",
    parameters=types.Schema(
        type="OBJECT",
        properties={"city": types.Schema(type="STRING"), "days": types.Schema(type="INTEGER")},
        required=["city"],
    ),
)


def test_a_gemini_agent_is_recorded_linked_and_graded(upstream, proxy, capture, tmp_path, capsys):
    calls = [
        ScriptedCall(name="get_weather", arguments={"city": "Paris"}),
        ScriptedCall(name="get_weather", arguments={"city": "Lyon", "days": "3"}),  # "3" for 3
    ]
    upstream.set_script(
        Script.of(
            Reply(text="Checking both.", tool_calls=calls, text_chunk_size=5),
            Reply(text="Paris 18°C, Lyon 20°C."),
            deterministic=True,
        )
    )
    client = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=proxy.url))
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[WEATHER])])
    contents: list = [types.Content(role="user", parts=[types.Part(text="Paris and Lyon?")])]
    parts = list(
        client.models.generate_content_stream(
            model="gemini-2.5-flash", contents=contents, config=config
        )
    )
    made = [c for p in parts for c in p.function_calls or []]
    assert [(c.name, c.args) for c in made] == [(c.name, c.arguments) for c in calls]
    model_turn = [types.Part(text="Checking both.")] + [types.Part(function_call=c) for c in made]
    answers = [
        types.Part(function_response=types.FunctionResponse(name=c.name, response={"temp": t}))
        for c, t in zip(made, (18, 20), strict=True)
    ]
    contents += [
        types.Content(role="model", parts=model_turn),
        types.Content(role="user", parts=answers),
    ]
    final = client.models.generate_content(
        model="gemini-2.5-flash", contents=contents, config=config
    )
    assert final.text == "Paris 18°C, Lyon 20°C."
    ex = wait_rows(
        capture,
        "SELECT exchange_id, session_id, session_source, wire_format, parse_status, streamed,"
        " model_requested FROM exchanges ORDER BY started_at",
        2,
    )
    assert [x[2:] for x in ex] == [
        ("new", "gemini", "ok", True, "gemini-2.5-flash"),
        ("continued", "gemini", "ok", False, "gemini-2.5-flash"),
    ]
    assert ex[1][1] == ex[0][1]
    recorded = rows(
        capture, "SELECT exchange_id, index, call_id, name FROM tool_calls ORDER BY index"
    )
    assert recorded == [(ex[0][0], 0, None, "get_weather"), (ex[0][0], 1, None, "get_weather")]
    (schema,) = rows(capture, "SELECT DISTINCT parameters FROM tools_offered")
    assert json.loads(schema[0])["properties"]["days"] == {"type": "integer"}
    linked = rows(
        capture,
        "SELECT exchange_id, call_exchange_id, call_index FROM tool_results ORDER BY call_index",
    )
    assert linked == [(ex[1][0], ex[0][0], 0), (ex[1][0], ex[0][0], 1)]
    assert not [p for p in capture.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    cases = tmp_path / "cases.yaml"
    assert main(["label", "-c", str(capture), "--out", str(cases)]) == 0
    capsys.readouterr()
    assert main(["grade", str(cases), "-c", str(capture), "--run", "gemini", "--json"]) == 0
    graded = json.loads(capsys.readouterr().out)["summary"]
    assert graded["by_label"] == {"type_coercion": 1}  # "3" where the schema says integer
