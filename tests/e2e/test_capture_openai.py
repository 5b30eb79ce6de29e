"""Real mitmdump + the real openai SDK: what the client gets is what it gets directly,
and what lands in the store is what was said on the wire."""

from __future__ import annotations

import json

import openai
import pytest

from toolproxy.scripted import Reply, Script, ScriptedCall
from toolproxy.wire.sse import iter_sse_events

from .conftest import rows, wait_rows

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
        },
    },
]
MESSAGES = [{"role": "user", "content": "Weather and time in Paris?"}]
PARALLEL = Reply(
    tool_calls=[
        ScriptedCall(name="get_weather", arguments={"city": "Paris — café ☕", "q": 'a"b\\n'}),
        ScriptedCall(name="get_time", arguments={"tz": "Europe/Paris"}),
    ],
    args_chunk_size=5,
)


def clients(base):
    return openai.OpenAI(base_url=f"{base}/v1", api_key="sk-test", max_retries=0)


def raw_chat(client, stream, **kw):
    """Body bytes exactly as the SDK's transport received them."""
    args = dict(model="m", messages=MESSAGES, tools=TOOLS, **kw)
    if stream:
        with client.chat.completions.with_streaming_response.create(stream=True, **args) as r:
            return b"".join(r.iter_bytes())
    return client.chat.completions.with_raw_response.create(**args).http_response.content


@pytest.mark.parametrize("stream", [False, True])
def test_chat_parallel_calls_byte_identical_and_recorded(upstream, proxy, capture, stream):
    upstream.set_script(Script.of(PARALLEL, deterministic=True))
    direct = raw_chat(
        clients(upstream.url), stream, stream_options={"include_usage": True} if stream else None
    )
    upstream.reset()
    proxied = raw_chat(
        clients(proxy.url), stream, stream_options={"include_usage": True} if stream else None
    )
    assert proxied == direct and proxied
    calls = wait_rows(
        capture, "SELECT index, name, arguments_raw, parse_error FROM tool_calls ORDER BY index", 2
    )
    assert [c[1] for c in calls] == ["get_weather", "get_time"]
    assert json.loads(calls[0][2]) == {"city": "Paris — café ☕", "q": 'a"b\\n'}
    assert calls[0][3] is None
    ex = rows(
        capture,
        "SELECT wire_format, streamed, parse_status, finish_reason, output_tokens, "
        "ttfb_ms IS NOT NULL, latency_ms > 0 FROM exchanges",
    )
    assert ex == [("openai_chat", stream, "ok", "tool_calls", ex[0][4], True, True)]
    assert ex[0][4] and ex[0][4] > 0
    tools = rows(capture, "SELECT name FROM tools_offered ORDER BY position")
    assert tools == [("get_weather",), ("get_time",)]
    ((times, body),) = rows(capture, "SELECT sse_times, response_body FROM exchanges")
    if stream:  # one arrival time per event of the stored stream, in order
        times = json.loads(times)
        assert len(times) == len(iter_sse_events(body.encode())[0]) > 2
        assert times == sorted(times) and times[0] > 0
    else:
        assert times is None


async def test_async_client_streamed_and_not(upstream, proxy, capture):
    upstream.set_script(Script.of(Reply(text="héllo wörld"), deterministic=True))
    client = openai.AsyncOpenAI(base_url=f"{proxy.url}/v1", api_key="sk-test", max_retries=0)
    reply = await client.chat.completions.create(model="m", messages=MESSAGES)
    assert reply.choices[0].message.content == "héllo wörld"
    text = ""
    async for chunk in await client.chat.completions.create(
        model="m", messages=MESSAGES, stream=True
    ):
        text += "".join(c.delta.content or "" for c in chunk.choices)
    assert text == "héllo wörld"
    got = wait_rows(
        capture, "SELECT streamed, assistant_text FROM exchanges ORDER BY started_at", 2
    )
    assert got == [(False, "héllo wörld"), (True, "héllo wörld")]


def test_malformed_arguments_pass_through_and_are_flagged(upstream, proxy, capture):
    bad = '{"city": "Par'
    upstream.set_script(
        Script.of(Reply(tool_calls=[ScriptedCall(name="get_weather", arguments=bad)]))
    )
    msg = clients(proxy.url).chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS)
    assert msg.choices[0].message.tool_calls[0].function.arguments == bad
    got = wait_rows(capture, "SELECT arguments_raw, arguments, parse_error FROM tool_calls", 1)
    assert got[0][0] == bad and got[0][1] is None and got[0][2]
    assert rows(capture, "SELECT parse_status FROM exchanges") == [("ok",)]


def test_cut_stream_reaches_client_the_same_and_is_partial(upstream, proxy, capture):
    upstream.set_script(
        Script.of(Reply(tool_calls=PARALLEL.tool_calls, cut_after_events=4), deterministic=True)
    )

    def read(base):
        got = b""
        try:
            with clients(base).chat.completions.with_streaming_response.create(
                model="m", messages=MESSAGES, tools=TOOLS, stream=True
            ) as r:
                for chunk in r.iter_bytes():
                    got += chunk
        except Exception as exc:  # the SDK / httpx may raise on the cut
            return got, type(exc).__name__
        return got, None

    direct = read(upstream.url)
    upstream.reset()
    proxied = read(proxy.url)
    assert proxied == direct
    ex = wait_rows(capture, "SELECT parse_status, error_kind FROM exchanges", 1)
    assert ex[0][0] == "partial" and ex[0][1] in ("connection_reset", "stream_cut")


@pytest.mark.parametrize(
    "reply,kind",
    [
        (
            Reply(status=500, error_body={"error": {"message": "boom", "type": "server_error"}}),
            "http_5xx",
        ),
        (Reply(status=429, retry_after=1.5), "http_4xx"),
    ],
)
def test_error_statuses_pass_through_and_are_recorded(upstream, proxy, capture, reply, kind):
    upstream.set_script(Script.of(reply))
    with pytest.raises(openai.APIStatusError) as err:
        clients(proxy.url).chat.completions.create(model="m", messages=MESSAGES)
    assert err.value.status_code == reply.status
    if reply.retry_after:
        assert err.value.response.headers["retry-after"] == "1.5"
    ex = wait_rows(capture, "SELECT status_code, error_kind, error_message FROM exchanges", 1)
    assert ex[0][:2] == (reply.status, kind) and ex[0][2]


def test_garbage_body_is_kept_raw(upstream, proxy, capture):
    upstream.set_script(
        Script.of(Reply(raw_body="<html>bad gateway</html>", content_type="application/json"))
    )
    with pytest.raises((openai.APIResponseValidationError, ValueError)):  # SDK-version dependent
        clients(proxy.url).chat.completions.create(model="m", messages=MESSAGES)
    ex = wait_rows(capture, "SELECT parse_status, response_body FROM exchanges", 1)
    assert ex == [("error", "<html>bad gateway</html>")]


def test_connection_reset_is_recorded(upstream, proxy, capture):
    upstream.set_script(Script.of(Reply(reset_before_response=True)))
    with pytest.raises(openai.APIError):
        clients(proxy.url).chat.completions.create(model="m", messages=MESSAGES)
    ex = wait_rows(capture, "SELECT status_code, error_kind FROM exchanges", 1)
    assert ex[0][0] in (None, 502) and ex[0][1] in (
        "connection_reset",
        "http_5xx",
        "upstream_error",
    )


def test_responses_api_streamed_and_not(upstream, proxy, capture):
    upstream.set_script(Script.of(PARALLEL, deterministic=True))
    client = clients(proxy.url)
    tools = [{"type": "function", **t["function"]} for t in TOOLS]
    first = client.responses.create(model="m", input="weather?", tools=tools)
    names = [i.name for i in first.output if i.type == "function_call"]
    assert names == ["get_weather", "get_time"]
    events = list(client.responses.create(model="m", input="weather?", tools=tools, stream=True))
    assert events[-1].type == "response.completed"
    calls = wait_rows(
        capture,
        "SELECT e.streamed, c.name, c.arguments_raw FROM tool_calls c "
        "JOIN exchanges e USING (exchange_id) ORDER BY e.started_at, c.index",
        4,
    )
    assert [(c[0], c[1]) for c in calls] == [
        (False, "get_weather"),
        (False, "get_time"),
        (True, "get_weather"),
        (True, "get_time"),
    ]
    assert calls[0][2] == calls[2][2]
    fmt = rows(capture, "SELECT DISTINCT wire_format, parse_status FROM exchanges")
    assert fmt == [("openai_responses", "ok")]


def test_agent_loop_is_one_session_with_linked_tool_results(upstream, proxy, capture):
    upstream.set_script(
        Script.of(
            Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={"city": "Paris"})]),
            Reply(text="18C"),
        )
    )
    client = clients(proxy.url)
    messages = list(MESSAGES)
    msg = (
        client.chat.completions.create(model="m", messages=messages, tools=TOOLS).choices[0].message
    )
    messages.append(msg.model_dump(exclude_none=True))
    call = msg.tool_calls[0]
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "18C"})
    client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
    # an unrelated conversation with the same opening is another session
    client.chat.completions.create(
        model="m", messages=MESSAGES + [{"role": "user", "content": "x"}]
    )
    ex = wait_rows(
        capture, "SELECT session_id, session_source FROM exchanges ORDER BY started_at", 3
    )
    assert ex[1] == (ex[0][0], "continued")
    assert ex[2][0] != ex[0][0] and ex[2][1] == "new"
    linked = rows(
        capture,
        "SELECT r.call_id, r.content, c.name FROM tool_results r "
        "JOIN tool_calls c ON c.call_id = r.call_id AND c.session_id = r.session_id",
    )
    assert linked == [(call.id, "18C", "get_weather")]


def test_explicit_session_header(upstream, proxy, capture):
    client = clients(proxy.url)
    client.chat.completions.create(
        model="m", messages=MESSAGES, extra_headers={"x-toolproxy-session": "run-42"}
    )
    assert wait_rows(capture, "SELECT session_id, session_source FROM exchanges", 1) == [
        ("run-42", "header")
    ]


def test_non_model_endpoint_is_recorded_unparsed(upstream, proxy, capture):
    clients(proxy.url).models.list()
    ex = wait_rows(capture, "SELECT method, path, wire_format, parse_status FROM exchanges", 1)
    assert ex == [("GET", "/v1/models", "unknown", "unparsed")]


@pytest.mark.parametrize("stream", [False, True])
def test_legacy_functions_api_is_recorded_as_tools_calls_and_linked_results(
    upstream, proxy, capture, stream
):
    """An agent still on `functions` / `function_call` (the SDK sends them as it always
    did): the functions are the offered tools, the function_call is the call (no id), and
    the `function` message sent back is its result, linked to the exchange that made it."""
    from tests import paths

    name = "chat_stream_function_call.sse" if stream else "chat_response_function_call.json"
    body = (paths.FIXTURES / "wire" / name).read_text()
    kind = "text/event-stream" if stream else "application/json"
    upstream.set_script(
        Script.of(Reply(raw_body=body, content_type=kind), Reply(text="72 °F."), deterministic=True)
    )
    functions = [t["function"] for t in TOOLS]
    client = clients(proxy.url)
    asked = [{"role": "user", "content": "Weather in Boston?"}]
    if stream:
        with client.chat.completions.with_streaming_response.create(
            model="m", messages=asked, functions=functions, function_call="auto", stream=True
        ) as r:
            got = b"".join(r.iter_bytes()).decode()
        called = {"name": "get_current_weather", "arguments": '{\n  "location": "Boston, MA"\n}'}
    else:
        reply = client.chat.completions.create(
            model="m", messages=asked, functions=functions, function_call="auto"
        )
        got = reply.choices[0].message.model_dump_json()
        called = reply.choices[0].message.function_call.model_dump()  # type: ignore[union-attr]
    assert "get_current_weather" in got  # passed through as the upstream said it
    message = {"role": "assistant", "content": None, "function_call": called}
    result = {"role": "function", "name": "get_current_weather", "content": '{"temp": 72}'}
    follow = client.chat.completions.create(
        model="m", messages=[*asked, message, result], functions=functions
    )
    assert follow.choices[0].message.content == "72 °F."
    ex = wait_rows(capture, "SELECT exchange_id, session_id FROM exchanges ORDER BY started_at", 2)
    (call,) = rows(capture, "SELECT exchange_id, index, call_id, name, arguments FROM tool_calls")
    assert call[:4] == (ex[0][0], 0, None, "get_current_weather")
    assert json.loads(call[4])["location"] == "Boston, MA"
    offered = rows(capture, "SELECT exchange_id, position, name FROM tools_offered")
    assert sorted((p, n) for _, p, n in offered) == [
        (0, "get_weather"),
        (0, "get_weather"),
        (1, "get_time"),
        (1, "get_time"),
    ]
    linked = rows(
        capture, "SELECT exchange_id, call_id, call_exchange_id, call_index FROM tool_results"
    )
    assert linked == [(ex[1][0], None, ex[0][0], 0)]
    assert ex[0][1] == ex[1][1]  # one session: the reply was sent back


@pytest.mark.parametrize("stream", [False, True])
def test_hosted_mcp_calls_are_recorded_and_graded_against_the_listed_schemas(
    upstream, proxy, capture, tmp_path, capsys, stream
):
    """A Responses agent with a remote MCP server as a tool: the provider lists the
    server's tools and runs the model's calls. Both are the model's doing: the calls are
    recorded (with the server), the listed tools are the offered schemas, and a call the
    server would refuse (an argument left out) is graded so."""
    from tests import paths
    from toolproxy.cli.main import main

    name = "responses_stream_mcp.sse" if stream else "responses_response_mcp.json"
    first = (paths.FIXTURES / "wire" / name).read_text()
    second = json.loads((paths.FIXTURES / "wire" / "responses_response_mcp.json").read_text())
    call = second["output"][1] | {"id": "mcp_2", "arguments": '{"repoName": "openai/codex"}'}
    second["output"] = [call, second["output"][2]]  # listed already: not listed again
    kind = "text/event-stream" if stream else "application/json"
    upstream.set_script(
        Script.of(
            Reply(raw_body=first, content_type=kind),
            Reply(raw_body=json.dumps(second), content_type="application/json"),
            deterministic=True,
        )
    )
    tool = {
        "type": "mcp",
        "server_label": "deepwiki",
        "server_url": "https://mcp.deepwiki.com/mcp",
        "require_approval": "never",
    }
    client = clients(proxy.url)
    asked = [{"role": "user", "content": "Which transports does MCP support?"}]
    if stream:
        with client.responses.create(model="gpt-4.1", input=asked, tools=[tool], stream=True) as s:
            output = [e.response for e in s if e.type == "response.completed"][0].output
    else:
        output = client.responses.create(model="gpt-4.1", input=asked, tools=[tool]).output
    assert [item.type for item in output] == ["mcp_list_tools", "mcp_call", "message"]
    sent_back = [item.model_dump(exclude_none=True) for item in output]
    again = [*asked, *sent_back, {"role": "user", "content": "And in openai/codex?"}]
    client.responses.create(model="gpt-4.1", input=again, tools=[tool])
    ex = wait_rows(capture, "SELECT exchange_id, session_id FROM exchanges ORDER BY started_at", 2)
    assert ex[0][1] == ex[1][1]  # one session: the reply came back in the input
    calls = rows(
        capture, "SELECT exchange_id, call_id, name, mcp_server FROM tool_calls ORDER BY started_at"
    )
    first_id = "mcp_682d437d90a88191bf88cd03aae0c3e503937d5f622d7a90"
    assert calls == [
        (ex[0][0], first_id, "ask_question", "deepwiki"),
        (ex[1][0], "mcp_2", "ask_question", "deepwiki"),
    ]
    for exchange_id, _ in ex:
        offered = rows(
            capture,
            "SELECT name, kind, mcp_server, parameters IS NOT NULL FROM tools_offered"
            " WHERE exchange_id = ? ORDER BY position",
            [exchange_id],
        )
        assert offered == [
            ("deepwiki", "mcp", "deepwiki", False),
            ("read_wiki_structure", "mcp_tool", "deepwiki", True),
            ("ask_question", "mcp_tool", "deepwiki", True),
        ]
    cases = tmp_path / "cases.yaml"
    assert main(["label", "-c", str(capture), "--out", str(cases)]) == 0
    capsys.readouterr()
    assert main(["grade", str(cases), "-c", str(capture), "--run", "mcp", "--json"]) == 0
    graded = json.loads(capsys.readouterr().out)
    grades = graded["grades"] if isinstance(graded, dict) else graded
    assert sorted((g["passed"], g["label"]) for g in grades) == [
        (False, "missing_required"),
        (True, None),
    ]


def test_a_stored_conversation_is_one_session_and_its_results_link(upstream, proxy, capture):
    """The Conversations API: the server holds the turns, so each request sends only its
    new items and names the conversation. Two conversations opened the same way stay two
    sessions; a result links to the call its own conversation made."""
    upstream.set_script(
        Script.of(
            Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={"city": "Paris"})]),
            Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={"city": "Paris"})]),
            Reply(text="18C in Paris."),
            deterministic=True,
        )
    )
    client = clients(proxy.url)
    tools = [
        {
            "type": "function",
            "name": "get_weather",
            "parameters": TOOLS[0]["function"]["parameters"],
        }
    ]
    asked = "Weather in Paris?"
    opened = {
        conv: client.responses.create(model="m", input=asked, tools=tools, conversation=conv)
        for conv in ("conv_a", "conv_b")
    }
    call = opened["conv_a"].output[0]
    result = {"type": "function_call_output", "call_id": call.call_id, "output": "18C"}  # type: ignore[union-attr]
    client.responses.create(model="m", input=[result], tools=tools, conversation="conv_a")
    ex = wait_rows(
        capture,
        "SELECT exchange_id, session_id, session_source FROM exchanges ORDER BY started_at",
        3,
    )
    assert [s for _, _, s in ex] == ["new", "new", "conversation"]
    assert ex[0][1] != ex[1][1] and ex[2][1] == ex[0][1]
    linked = rows(capture, "SELECT exchange_id, call_exchange_id, call_index FROM tool_results")
    assert linked == [(ex[2][0], ex[0][0], 0)]


def test_a_response_the_provider_says_failed_is_its_error_not_the_models_answer(
    upstream, proxy, capture, tmp_path, capsys
):
    """Responses can answer 200 and end its stream with `response.failed`: the capture
    records the provider's error, and grading says the case got no model output, not that
    the model made no call."""
    from toolproxy.cli.main import main

    failed = {
        "id": "resp_1",
        "status": "failed",
        "output": [],
        "error": {"code": "server_error", "message": "The model failed."},
    }
    events = [
        ("response.created", {"id": "resp_1", "status": "in_progress"}),
        ("response.failed", failed),
    ]
    body = "".join(
        f"event: {kind}\ndata: {json.dumps({'type': kind, 'response': r})}\n\n"
        for kind, r in events
    )
    upstream.set_script(Script.of(Reply(raw_body=body, content_type="text/event-stream")))
    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="sk-test", max_retries=0)
    seen = [e.type for e in client.responses.create(model="m", input="hi", stream=True)]
    assert seen == ["response.created", "response.failed"]
    ((eid, *got),) = wait_rows(
        capture, "SELECT exchange_id, parse_status, error_kind, error_message FROM exchanges", 1
    )
    assert got == ["ok", "provider_error", "server_error: The model failed."]
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        json.dumps(
            [{"id": "c1", "exchange_id": eid, "expect": "call", "calls": [{"tool": "get_weather"}]}]
        )
    )
    main(["grade", str(cases), "-c", str(capture), "--run", "failed", "--json"])
    (grade,) = json.loads(capsys.readouterr().out)["grades"]
    assert grade["not_graded"] and grade["label"] is None
    assert grade["reason"] == (
        f"upstream_failed: exchange {eid} failed before any model output"
        " (provider_error: server_error: The model failed.)"
    )
