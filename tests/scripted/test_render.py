"""Plans: which body or events a reply becomes, errors per format, gzip."""

from __future__ import annotations

import base64
import gzip
import json
import zlib

import pytest

from toolproxy.scripted.context import Context, Format
from toolproxy.scripted.render import (
    EVENTSTREAM,
    JSON,
    SSE,
    Plan,
    encode_gzip,
    error_body,
    render,
)
from toolproxy.scripted.script import Reply


def header(plan: Plan, name: str) -> str | None:
    return dict(plan.headers).get(name)


@pytest.mark.parametrize("fmt", ["chat", "responses", "messages"])
def test_stream_follows_the_request_unless_the_reply_says(fmt: Format) -> None:
    plain = render(Reply(text="hi"), Context(fmt))
    assert not plain.streamed and header(plain, "content-type") == JSON
    assert json.loads(plain.body)
    streamed = render(Reply(text="hi"), Context(fmt, stream=True))
    assert streamed.streamed and header(streamed, "content-type") == SSE
    assert streamed.events and streamed.body == b""
    assert render(Reply(text="hi", stream=True), Context(fmt)).streamed
    assert not render(Reply(text="hi", stream=False), Context(fmt, stream=True)).streamed


def test_request_id_header_per_format() -> None:
    assert header(render(Reply(), Context("chat")), "x-request-id") == "req_default_0001"
    assert header(render(Reply(), Context("messages")), "request-id") == "req_default_0001"


def test_openai_error_shapes() -> None:
    assert error_body("chat", 429, "slow down") == {
        "error": {
            "message": "slow down",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    assert error_body("responses", 503, "m")["error"]["type"] == "server_error"
    assert error_body(None, 400, "m")["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (529, "overloaded_error"),
    ],
)
def test_anthropic_error_shapes(status: int, kind: str) -> None:
    assert error_body("messages", status, "m") == {
        "type": "error",
        "error": {"type": kind, "message": "m"},
    }


def test_error_reply_with_retry_after() -> None:
    plan = render(Reply(status=429, retry_after=1.5), Context("messages", stream=True))
    assert plan.status == 429 and not plan.streamed
    assert header(plan, "retry-after") == "1.5"
    assert json.loads(plan.body)["error"]["type"] == "rate_limit_error"


def test_error_body_given_as_dict_or_verbatim_text() -> None:
    plan = render(Reply(status=500, error_body={"oops": 1}), Context("chat"))
    assert plan.body == b'{"oops":1}'
    verbatim = render(Reply(status=502, error_body="<h1>Bad gateway"), Context("chat"))
    assert verbatim.body == b"<h1>Bad gateway"


def test_raw_body_goes_out_verbatim_with_its_content_type() -> None:
    plan = render(
        Reply(raw_body="not json {", content_type="text/html", headers={"x-a": "1"}),
        Context("chat", stream=True),
    )
    assert plan == Plan(
        200,
        [("content-type", "text/html"), ("x-request-id", "req_default_0001"), ("x-a", "1")],
        b"not json {",
    )


def test_binary_raw_body_goes_out_as_its_bytes() -> None:
    raw = b"\x00\x00\x00\x10\xff\xfe not UTF-8"
    reply = Reply(raw_body_b64=base64.b64encode(raw).decode(), content_type=EVENTSTREAM)
    plan = render(reply, Context("converse", stream=True, bedrock=True))
    assert plan.body == raw and header(plan, "content-type") == EVENTSTREAM


def test_bedrock_errors_say_their_kind_in_a_header_and_a_message_body() -> None:
    plan = render(Reply(status=429), Context("messages", bedrock=True))
    assert header(plan, "x-amzn-errortype").startswith("ThrottlingException:")
    assert json.loads(plan.body) == {"message": "scripted error 429"}
    assert header(render(Reply(status=418), Context("converse", bedrock=True)), "x-amzn-errortype")
    assert error_body("converse", 400, "bad") == {"message": "bad"}


def test_a_bedrock_stream_is_an_aws_event_stream() -> None:
    plan = render(Reply(text="hi"), Context("converse", stream=True, bedrock=True))
    assert header(plan, "content-type") == EVENTSTREAM and plan.events
    chunks = render(Reply(text="hi"), Context("messages", stream=True, bedrock=True))
    assert header(chunks, "content-type") == EVENTSTREAM
    assert chunks.events and chunks.events[0][:4] != b"even"  # binary messages, not SSE


def test_gzip_of_a_body_decodes_back() -> None:
    plan = render(Reply(text="zip me"), Context("chat"))
    zipped = encode_gzip(plan)
    assert header(zipped, "content-encoding") == "gzip"
    assert gzip.decompress(zipped.body) == plan.body
    assert encode_gzip(plan) == zipped  # no timestamp in the gzip header


def test_gzip_of_events_decodes_event_by_event() -> None:
    plan = render(Reply(text="zip me " * 10, text_chunk_size=5), Context("chat", stream=True))
    assert plan.events is not None
    zipped = encode_gzip(plan)
    assert zipped.events is not None and len(zipped.events) == len(plan.events)
    decoder = zlib.decompressobj(wbits=31)
    # Each piece decodes on its own as it arrives: the stream is flushed per event.
    assert [decoder.decompress(piece) for piece in zipped.events] == plan.events
    assert decoder.eof
