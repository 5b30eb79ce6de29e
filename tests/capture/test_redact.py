import json
from urllib.parse import quote_plus

from toolproxy.capture.redact import MAX_REMEMBERED, REDACTED, Redactor, without

KEY = "sk-test-0123456789abcdef"


def test_default_secret_headers_are_replaced_and_names_kept():
    r = Redactor.build()
    out = r.redact_headers(
        [
            ("Authorization", f"Bearer {KEY}"),
            ("x-api-key", KEY),
            ("api-key", KEY),
            ("Cookie", "session=abcdefghijkl"),
            ("Content-Type", "application/json"),
            ("X-Custom-Token", "tok-abcdefghijkl"),
        ]
    )
    assert out["authorization"] == REDACTED
    assert out["x-api-key"] == REDACTED
    assert out["api-key"] == REDACTED
    assert out["cookie"] == REDACTED
    assert out["x-custom-token"] == REDACTED  # name pattern, not listed
    assert out["content-type"] == "application/json"


def test_user_configured_header_and_repeated_headers_are_joined():
    r = Redactor.build(extra_headers=["X-Tenant"])
    out = r.redact_headers([("X-Tenant", "acme-secret-tenant"), ("Accept", "a"), ("accept", "b")])
    assert out == {"x-tenant": REDACTED, "accept": "a, b"}


def test_query_keys_are_replaced_and_remembered():
    r = Redactor.build(extra_query=["tenant"])
    url = r.redact_url(f"/v1/models?key={KEY}&api-version=2024&tenant=acme1234&x=1")
    assert KEY not in url and "acme1234" not in url
    assert "api-version=2024" in url and "x=1" in url
    assert r.scrub(f"error: bad key {KEY}") == f"error: bad key {REDACTED}"


def test_url_without_query_is_unchanged():
    assert Redactor.build().redact_url("/v1/chat/completions") == "/v1/chat/completions"


def test_bearer_prefix_and_bare_key_are_both_scrubbed():
    r = Redactor.build()
    r.redact_headers([("authorization", f"Bearer {KEY}")])
    assert KEY not in (r.scrub(f"the key {KEY} was rejected") or "")


def test_json_paths_with_wildcards_and_indexes():
    r = Redactor.build(extra_json_paths=["metadata.token", "items.*.secret", "list.1"])
    doc = {
        "api_key": "top-level-key-123",
        "metadata": {"token": "meta-token-123", "keep": 1},
        "items": [{"secret": "s1-abcdefgh"}, {"secret": "s2-abcdefgh", "ok": True}],
        "list": ["a", "b"],
    }
    out, changed = r.redact_json(doc)
    assert changed
    assert out["api_key"] == REDACTED
    assert out["metadata"] == {"token": REDACTED, "keep": 1}
    assert out["items"] == [{"secret": REDACTED}, {"secret": REDACTED, "ok": True}]
    assert out["list"] == ["a", REDACTED]


def test_json_path_that_does_not_match_changes_nothing():
    r = Redactor.build(extra_json_paths=["a.b.c"])
    doc = {"a": {"b": 3}, "x": [1]}
    out, changed = r.redact_json(doc)
    assert not changed and out == {"a": {"b": 3}, "x": [1]}


def test_redact_body_keeps_text_identical_when_nothing_matches():
    r = Redactor.build()
    text = '{"model": "m",   "messages": []}'
    assert r.redact_body(text) == text


def test_redact_body_reserialises_only_when_changed_and_handles_non_json():
    r = Redactor.build()
    out = r.redact_body(json.dumps({"api_key": "body-key-12345678", "model": "m"}))
    assert "body-key-12345678" not in out and json.loads(out)["model"] == "m"
    # the key seen in the body is now scrubbed from any other text
    assert r.redact_body("plain body-key-12345678 text") == f"plain {REDACTED} text"


def test_scrub_value_walks_nested_values_and_keys():
    r = Redactor.build()
    r.redact_headers([("x-api-key", KEY)])
    value = {"a": [KEY, 1, None, {KEY: f"x{KEY}y"}]}
    assert r.scrub_value(value) == {"a": [REDACTED, 1, None, {REDACTED: f"x{REDACTED}y"}]}


def test_short_values_are_not_scrubbed_from_free_text():
    r = Redactor.build()
    r.redact_headers([("x-api-key", "abc")])
    assert r.scrub("abc abc") == "abc abc"
    assert r.scrub(None) is None


def test_remembered_secrets_are_bounded():
    r = Redactor.build()
    for i in range(MAX_REMEMBERED + 50):
        r.redact_headers([("cookie", f"session-{i:08d}")])
    assert len(r.found) == MAX_REMEMBERED
    assert "session-00000000" not in r.found


def test_mentions_secret_finds_plain_and_json_escaped_secrets():
    r = Redactor.build()
    assert not r.mentions_secret({"a": "b"})  # nothing remembered yet
    r.redact_headers([("x-api-key", KEY), ("authorization", 'quo"ted\\key-123')])
    assert r.mentions_secret({"nested": [f"..{KEY}.."]})
    assert r.mentions_secret({"v": 'x quo"ted\\key-123 y'})
    assert not r.mentions_secret({"a": "clean", "n": 1})


def test_scrub_order_cache_follows_new_secrets():
    r = Redactor.build()
    r.redact_headers([("x-api-key", "short-key-1")])
    assert r.scrub("short-key-1") == REDACTED
    r.redact_headers([("x-api-key", "short-key-1-and-longer")])
    assert r.scrub("short-key-1-and-longer") == REDACTED  # longest first, not "...-and-longer"


def test_an_encoded_query_secret_is_scrubbed_in_both_spellings():
    r = Redactor.build()
    assert r.redact_url("/v1/x?sig=ab%2Fcd%2Bef12345&b=a%20b") == "/v1/x?sig=[REDACTED]&b=a%20b"
    echoed = "bad url /v1/x?sig=ab%2Fcd%2Bef12345 (signature ab/cd+ef12345)"
    assert r.scrub(echoed) == "bad url /v1/x?sig=[REDACTED] (signature [REDACTED])"


def test_a_body_that_is_not_json_gets_a_text_pass_for_key_like_fields():
    r = Redactor.build()
    cut = '{"model": "m", "api_key": "sk-abcdefgh12345", "messages": ['
    assert "sk-abcdefgh12345" not in r.redact_body(cut)
    form = "model=m&apiKey=sk-zyxwvuts98765&x=1"
    assert r.redact_body(form) == "model=m&apiKey=[REDACTED]&x=1"
    bearer = "oops Authorization: Bearer sk-bearer-777777777 end"
    assert "sk-bearer-777777777" not in r.redact_body(bearer)
    # a parsed JSON body keeps its ordinary fields
    assert r.redact_body('{"max_tokens": 10, "model": "m"}') == '{"max_tokens": 10, "model": "m"}'


def test_bytes_that_are_not_utf8_are_scrubbed_before_they_are_stored():
    r = Redactor.build()
    r.redact_headers([("authorization", "Bearer sk-echoed-123456789")])
    data = b"\xff\xfe auth=Bearer sk-echoed-123456789 \x80"
    assert r.redact_bytes(data) == b"\xff\xfe auth=[REDACTED] \x80"


def test_a_secret_written_with_json_escapes_is_scrubbed_too():
    r = Redactor()
    r.redact_headers([("Authorization", 'Bearer sk-a/b"c-0123456789')])
    echoed = '{"error": "bad key sk-a\\/b\\"c-0123456789"}'  # "/" and '"' escaped
    assert r.mentions_secret(echoed)
    assert "0123456789" not in r.redact_body(echoed)


KEY_CUT = "sk-live-cut-SECRET-0123456789abcdef"


def cut_at(n: int) -> str:
    return f"Incorrect API key provided: {KEY_CUT}. See your account"[: 28 + n]


def test_a_text_cut_inside_a_secret_loses_the_half_that_stayed():
    # a body kept to its size cap, a message kept to its length: the key's whole value is
    # not there to be found, its first half is
    r = Redactor()
    r.redact_headers([("authorization", f"Bearer {KEY_CUT}")])
    said = "Incorrect API key provided: "
    assert r.scrub(cut_at(20)) == said + REDACTED
    assert r.scrub(cut_at(8)) == said + REDACTED
    assert r.scrub(cut_at(20) + "…") == said + REDACTED + "…"  # `one_line`'s cut
    assert r.scrub(cut_at(7)) == cut_at(7)  # "sk-live": no more than a key's public prefix
    assert r.scrub(cut_at(20) + " and on") == cut_at(20) + " and on"  # not cut there
    whole = f"{said}{KEY_CUT} and {KEY_CUT[:12]}"
    assert r.scrub(whole) == f"{said}{REDACTED} and {REDACTED}"
    assert r.mentions_secret({"error_message": cut_at(10)})
    assert not r.mentions_secret({"error_message": cut_at(7)})
    assert r.scrub_value({"a": [cut_at(30)]}) == {"a": [said + REDACTED]}
    assert r.redact_bytes(cut_at(30).encode() + b"\xff") == cut_at(30).encode() + b"\xff"
    assert r.redact_bytes(b"\xff" + cut_at(30).encode()) == b"\xff" + (said + REDACTED).encode()


def test_one_known_key_is_taken_out_unless_too_short_to_search_for():
    assert without(f"bad key {KEY_CUT}!", KEY_CUT) == f"bad key {REDACTED}!"
    assert without("no-key sent", "no-key") == "no-key sent"  # the judge's placeholder
    assert without("nothing", None) == "nothing"


# --- credentials a request body carries for the provider to use: hosted MCP servers and
# data sources, in the shapes the APIs document ---------------------------------------------

MCP_KEY = "sk-mcp-SECRET-0123456789"
OAUTH = "oauth-SECRET-abcdefghij"
AZURE = "azure-search-SECRET-98765"
SMITHERY = "smithery-SECRET-13579bdf"


def _hosted_mcp_bodies() -> dict[str, dict]:
    return {
        # OpenAI Responses: a remote MCP server as a tool, its auth header and OAuth token
        "responses": {
            "model": "gpt-5",
            "input": "roll 2d4",
            "tools": [
                {
                    "type": "mcp",
                    "server_label": "dice",
                    "server_url": f"https://mcp.example.com/mcp?api_key={SMITHERY}&profile=p1",
                    "headers": {"Authorization": f"Bearer {MCP_KEY}", "X-Region": "eu"},
                    "authorization": OAUTH,
                    "require_approval": "never",
                }
            ],
        },
        # Anthropic Messages, MCP connector: the server's token in mcp_servers
        "anthropic": {
            "model": "claude-sonnet-4-5",
            "max_tokens": 1000,
            "messages": [{"role": "user", "content": "What tools do you have?"}],
            "mcp_servers": [
                {
                    "type": "url",
                    "url": "https://mcp.example.com/sse",
                    "name": "example-mcp",
                    "authorization_token": MCP_KEY,
                }
            ],
        },
        # Azure OpenAI On Your Data: the search service's key
        "azure": {
            "messages": [{"role": "user", "content": "hi"}],
            "data_sources": [
                {
                    "type": "azure_search",
                    "parameters": {
                        "endpoint": "https://search.example.net",
                        "index_name": "docs",
                        "authentication": {"type": "api_key", "key": AZURE},
                    },
                }
            ],
        },
    }


def test_credentials_for_hosted_mcp_servers_and_data_sources_are_redacted():
    r = Redactor.build()
    bodies = _hosted_mcp_bodies()
    out = {name: json.loads(r.redact_body(json.dumps(body))) for name, body in bodies.items()}
    for text in map(json.dumps, out.values()):
        for secret in (MCP_KEY, OAUTH, AZURE, SMITHERY):
            assert secret not in text
    tool = out["responses"]["tools"][0]
    assert tool["headers"] == {"Authorization": REDACTED, "X-Region": "eu"}
    assert tool["authorization"] == REDACTED
    assert tool["server_url"] == f"https://mcp.example.com/mcp?api_key={REDACTED}&profile=p1"
    assert tool["server_label"] == "dice" and tool["require_approval"] == "never"
    assert out["anthropic"]["mcp_servers"][0] == {
        "type": "url",
        "url": "https://mcp.example.com/sse",
        "name": "example-mcp",
        "authorization_token": REDACTED,
    }
    assert out["anthropic"]["max_tokens"] == 1000
    params = out["azure"]["data_sources"][0]["parameters"]
    assert params["authentication"] == {"type": "api_key", "key": REDACTED}
    assert params["endpoint"] == "https://search.example.net"
    # each is remembered: the Responses API echoes its tools back in the response
    echo = json.dumps({"tools": bodies["responses"]["tools"], "note": AZURE})
    assert all(s not in (r.scrub(echo) or "") for s in (MCP_KEY, OAUTH, AZURE, SMITHERY))


def test_the_conversation_and_tool_schemas_keep_fields_named_like_secrets():
    # An argument the model passed, a tool result and a schema property are the agent's
    # data: they are graded, and their text stitches the session, so they stay as sent.
    r = Redactor.build()
    body = {
        "model": "m",
        "max_completion_tokens": 50,
        "prompt_cache_key": "cache-abcdefgh",
        "messages": [
            {"role": "user", "content": "log me in"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "login", "arguments": '{"password": "pw"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"access_token": "t0k3n"}'},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "login",
                    "parameters": {
                        "type": "object",
                        "properties": {"password": {"type": "string", "default": "x"}},
                    },
                },
            }
        ],
        "input": [{"type": "function_call_output", "output": {"password": "in-input-1"}}],
    }
    text = json.dumps(body)
    assert r.redact_body(text) == text
    assert not r.found


def test_a_form_body_key_is_scrubbed_from_an_echo_that_spells_it_decoded():
    r = Redactor.build()
    key = "sk-form/SECRET+0123456789="
    body = r.redact_body(f"model=m&api_key={quote_plus(key)}")
    assert body == f"model=m&api_key={REDACTED}"
    assert (
        r.scrub(f"Incorrect API key provided: {key}") == f"Incorrect API key provided: {REDACTED}"
    )
