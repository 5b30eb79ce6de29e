"""`toolproxy import` of a real `mitmdump -w` flow file gives the rows live capture gives.

The same agent conversation (the real openai SDK; streamed and not; a tool result sent
back; a malformed reply) runs twice against the scripted upstream: once through mitmdump
with the toolproxy addon, once through a bare mitmdump that saves its flows. Importing the
flow file must give the same calls, results, sessions, parse outcomes and redaction as the
live capture, and the API key must be nowhere on disk.
"""

from __future__ import annotations

import json

import openai

from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port
from toolproxy.cli.main import main
from toolproxy.scripted import Reply, Script, ScriptedCall

from .conftest import assert_clean, rows, wait_rows

KEY = "sk-proj-importtest0123456789abcdef"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
REPLIES = [
    Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={"city": "Paris"})]),
    Reply(text="It is sunny in Paris."),
    Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={"city": "Oslo"})]),
    Reply(text="Snow in Oslo."),
    Reply(raw_body='{"choices": [', content_type="application/json"),  # malformed
]


def run_agent(base_url: str) -> None:
    """Two two-turn conversations (the second streamed), then a reply that is not JSON."""
    client = openai.OpenAI(base_url=f"{base_url}/v1", api_key=KEY, max_retries=0)
    for city, stream in (("Paris", False), ("Oslo", True)):
        messages = [{"role": "user", "content": f"Weather in {city}?"}]
        call = _ask(client, messages, stream)
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": f"sunny in {city}"},
        ]
        _ask(client, messages, stream)
    try:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    except (openai.APIError, ValueError):
        pass  # the malformed reply: the SDK cannot read it either


def _ask(client, messages, stream):
    if not stream:
        reply = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
        calls = reply.choices[0].message.tool_calls or []
        return calls[0].model_dump() if calls else None
    call = None
    for chunk in client.chat.completions.create(
        model="m", messages=messages, tools=TOOLS, stream=True
    ):
        for delta in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
            if delta.id:
                call = {
                    "id": delta.id,
                    "type": "function",
                    "function": {"name": "", "arguments": ""},
                }
            if delta.function.name:
                call["function"]["name"] += delta.function.name
            if delta.function.arguments:
                call["function"]["arguments"] += delta.function.arguments
    return call


UNPARSED = "their bodies did not parse"
SAME = {
    "exchanges": "SELECT wire_format, streamed, status_code, parse_status, model_requested, "
    "finish_reason, assistant_text, input_tokens, output_tokens, session_source, "
    "request_headers, path, error_kind FROM exchanges ORDER BY started_at",
    "tool_calls": "SELECT name, call_id, arguments_raw, parse_error FROM tool_calls "
    "ORDER BY started_at, index",
    "tool_results": "SELECT call_id, content, call_exchange_id IS NOT NULL, call_index "
    "FROM tool_results ORDER BY started_at",
    "tools_offered": "SELECT name, schema_hash FROM tools_offered ORDER BY started_at, name",
    "sessions": "SELECT count(DISTINCT session_id), count(*) FROM exchanges",
}


def test_imported_flows_match_the_live_capture(upstream, tmp_path, capsys):
    upstream.set_script(Script.of(*REPLIES, deterministic=True))
    live = tmp_path / "live"
    spec = ProxySpec(capture=live, upstream=upstream.url, port=free_port(), flush_interval=0.05)
    with RunningProxy(spec) as proxy:
        run_agent(proxy.url)
        wait_rows(live, "SELECT * FROM exchanges", 5)
        output = proxy.stop()
    assert_clean(output)

    upstream.reset()
    flows = tmp_path / "flows.mitm"
    bare = ProxySpec(
        capture=tmp_path / "unused",
        upstream=upstream.url,
        port=free_port(),
        with_addon=False,
        bare_stream=False,  # mitmdump keeps bodies only when it buffers them
        extra=["-w", str(flows)],
    )
    with RunningProxy(bare) as proxy:
        run_agent(proxy.url)
        proxy.stop()

    imported = tmp_path / "imported"
    assert main(["import", str(flows), "-c", str(imported)]) == 0
    said = capsys.readouterr().out
    assert said == f"imported 5 exchanges from 1 file into {imported} (1 kept raw: {UNPARSED})\n"
    for table, sql in SAME.items():
        assert rows(imported, sql) == rows(live, sql), table
    assert rows(imported, "SELECT count(*) FROM tool_calls") == [(2,)]
    assert rows(imported, "SELECT DISTINCT parse_status FROM exchanges ORDER BY 1") == [
        ("error",),
        ("ok",),
    ]
    headers = rows(imported, "SELECT request_headers FROM exchanges LIMIT 1")[0][0]
    assert "REDACTED" in json.dumps(headers)
    for file in imported.rglob("*"):
        if file.is_file():
            assert KEY.encode() not in file.read_bytes(), file

    # again: nothing new
    assert main(["import", str(flows), "-c", str(imported)]) == 0
    assert "(5 already in the capture" in capsys.readouterr().out
    assert rows(imported, "SELECT count(*) FROM exchanges") == [(5,)]
