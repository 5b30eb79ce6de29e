"""One HTTP/1.1 keep-alive connection to the scripted upstream.

A small hand-rolled request reader: http.server's email-based header parsing cost more
than everything else per request, and the upstream must keep up with benchmarks.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from socketserver import StreamRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolproxy.scripted.context import FIXED_CREATED, Context, Format, dump_json
from toolproxy.scripted.render import JSON, Plan, encode_gzip, error_body, render
from toolproxy.scripted.script import DEFAULT_KEY, Reply, prompt_key, select_key
from toolproxy.wire.bedrock import model_in_path

if TYPE_CHECKING:
    from toolproxy.scripted.server import ScriptedUpstream

_ROUTES: dict[str, Format] = {
    "/chat/completions": "chat",
    "/responses": "responses",
    "/messages": "messages",
    "/api/chat": "ollama",
}
# Bedrock's actions: Converse, and InvokeModel with an Anthropic Messages body
_BEDROCK: dict[str, Format] = {
    "converse": "converse",
    "converse-stream": "converse",
    "invoke": "messages",
    "invoke-with-response-stream": "messages",
}
_BEDROCK_ACTIONS = tuple(_BEDROCK)
_BEDROCK_STREAMS = ("converse-stream", "invoke-with-response-stream")
_PLAIN = Reply()
_LINE_LIMIT = 65536


def route(path: str) -> Format | None:
    """The wire format served at `path` (with or without /v1, query ignored), else None."""
    bare = urlsplit(path).path.rstrip("/")
    if bare.startswith("/v1/"):
        bare = bare[3:]
    if bare.endswith((":generateContent", ":streamGenerateContent")):
        return "gemini"  # /v1beta/models/{model}:generateContent, Vertex AI's too
    _, action = model_in_path(bare, _BEDROCK_ACTIONS)  # Bedrock: /model/{modelId}/{action}
    return _BEDROCK[action] if action else _ROUTES.get(bare)


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the upstream received it."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased, repeated headers joined with ", "
    body: Any  # parsed JSON, or None when absent or unparseable
    raw: bytes
    key: str | None  # the script key it asked for (None when not a POST)
    arrived_at: float  # time.time() once it had been read in full


def _json_plan(status: int, value: Any) -> Plan:
    return Plan(status, [("content-type", JSON)], dump_json(value))


class Handler(StreamRequestHandler):
    """Serves requests on one connection until the client or the reply closes it."""

    # Head and body may go out as separate writes; Nagle would hold back the second.
    disable_nagle_algorithm = True
    upstream: ScriptedUpstream  # set on the subclass the server makes

    def handle(self) -> None:
        """Read requests one after another on this keep-alive connection."""
        self.upstream._track(self.connection, add=True)
        try:
            self.close_connection = False
            while not self.close_connection and self._serve_one():
                pass
        except OSError:
            pass  # the client hung up mid-reply, or stop() closed the socket: routine here
        finally:
            self.upstream._track(self.connection, add=False)

    def _serve_one(self) -> bool:
        line = self.rfile.readline(_LINE_LIMIT)
        while line in (b"\r\n", b"\n"):  # RFC 9112 allows blank lines before a request
            line = self.rfile.readline(_LINE_LIMIT)
        if not line:
            return False
        parts = line.decode("latin-1").split()
        headers = self._read_headers()
        if len(parts) != 3 or headers is None:
            self.close_connection = True
            self._write(_json_plan(400, error_body(None, 400, "malformed request")), _PLAIN)
            return False
        self.method, self.target, version = parts
        self.headers = headers
        connection = headers.get("connection", "").lower()
        self.close_connection = "close" in connection or (
            version == "HTTP/1.0" and "keep-alive" not in connection
        )
        if headers.get("expect", "").lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        try:
            raw = self._read_body()
        except ValueError:  # a length or chunk size that is not a number
            self.close_connection = True
            self._write(_json_plan(400, error_body(None, 400, "malformed body framing")), _PLAIN)
            return False
        if self.method == "POST":
            self._answer(raw)
        else:
            self._record(raw, None, None)
            self._answer_other()
        return True

    def _read_headers(self) -> dict[str, str] | None:
        headers: dict[str, str] = {}
        while True:
            line = self.rfile.readline(_LINE_LIMIT)
            if line in (b"\r\n", b"\n", b""):
                return headers
            name, sep, value = line.decode("latin-1").partition(":")
            if not sep:
                return None
            name, value = name.strip().lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            parts = []
            while size := int(self.rfile.readline(_LINE_LIMIT).split(b";")[0] or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline(_LINE_LIMIT)
            while self.rfile.readline(_LINE_LIMIT) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _record(self, raw: bytes, body: Any, key: str | None) -> None:
        request = RecordedRequest(
            self.method, self.target, self.headers, body, raw, key, time.time()
        )
        self.upstream._record(request)

    def _answer_other(self) -> None:
        """GET /v1/models lists the script's keys; anything else is a 404."""
        path = urlsplit(self.target).path.rstrip("/")
        if self.method == "GET" and path in ("/v1/models", "/models"):
            keys = [k for k in self.upstream.script.replies if k != DEFAULT_KEY]
            models = [
                {"id": k, "object": "model", "created": FIXED_CREATED, "owned_by": "scripted"}
                for k in keys or ["scripted"]
            ]
            self._write(_json_plan(200, {"object": "list", "data": models}), _PLAIN)
        else:
            self._write(self._not_found(), _PLAIN)

    def _not_found(self) -> Plan:
        message = f"no route for {self.method} {urlsplit(self.target).path}"
        return _json_plan(404, error_body(None, 404, message))

    def _answer(self, raw: bytes) -> None:
        """Answer a model request with the next scripted reply for its key."""
        try:
            body = json.loads(raw) if raw else None
        except (ValueError, RecursionError):  # not JSON, or nested deeper than Python reads
            body = None
        key = select_key(self.headers, body)
        self._record(raw, body, key)
        fmt = route(self.target)
        if fmt is None:
            self._write(self._not_found(), _PLAIN)
            return
        if not isinstance(body, dict):
            message = "request body is not a JSON object"
            self._write(_json_plan(400, error_body(fmt, 400, message)), _PLAIN)
            return
        playback = self.upstream.playback
        if playback.script.by_prompt:  # one reply per task: the prompt names it
            by_prompt = prompt_key(key, body)
            key = by_prompt if by_prompt in playback.script.replies else key
        resolved, play, reply = playback.next_reply(key)
        options = body.get("stream_options")
        parts = urlsplit(self.target)
        # Gemini and Bedrock name the model and say it streams in the path; Ollama
        # streams unless told not to; the others only when asked
        named, _, method = parts.path.rpartition("/")[2].partition(":")
        gemini = fmt == "gemini"
        in_path, action = model_in_path(parts.path.rstrip("/"), _BEDROCK_ACTIONS)
        bedrock = bool(action)
        stream = body.get("stream") is True or (fmt == "ollama" and body.get("stream") is None)
        if gemini:
            stream = method == "streamGenerateContent"
        elif bedrock:
            named, stream = in_path or "", action in _BEDROCK_STREAMS
        ctx = Context(
            fmt=fmt,
            key=resolved,
            play=play,
            deterministic=self.upstream.deterministic,
            model=reply.model
            or str((named if gemini or bedrock else body.get("model")) or "scripted"),
            stream=stream,
            array=gemini and "alt=sse" not in parts.query,
            bedrock=bedrock,
            include_usage=isinstance(options, dict) and options.get("include_usage") is True,
            request=body,
            request_bytes=len(raw),
        )
        self._play(reply, ctx)

    def _play(self, reply: Reply, ctx: Context) -> None:
        stopping = self.upstream._stopping
        if reply.delay_s:
            stopping.wait(reply.delay_s)
        if reply.reset_before_response:
            # Linger 0 turns the close into a TCP reset instead of an orderly FIN.
            linger = struct.pack("ii", 1, 0)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            # Closed for real (no FIN first, as shutdown() would send) once finish() drops
            # the reader that still refers to it.
            self.connection.close()
            self.close_connection = True
            return
        if reply.hang_s:
            stopping.wait(reply.hang_s)
            self.close_connection = True
            return
        plan = render(reply, ctx)
        self._write(encode_gzip(plan) if reply.content_encoding == "gzip" else plan, reply)

    def _head(self, plan: Plan) -> bytes:
        try:
            reason = HTTPStatus(plan.status).phrase
        except ValueError:
            reason = "Scripted"
        framing = (
            ("transfer-encoding", "chunked")
            if plan.streamed
            else ("content-length", str(len(plan.body)))
        )
        lines = [
            f"HTTP/1.1 {plan.status} {reason}",
            f"date: {formatdate(usegmt=True)}",
            "server: toolproxy-scripted",
            *(f"{name}: {value}" for name, value in [*plan.headers, framing]),
        ]
        if self.close_connection:
            lines.append("connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _write(self, plan: Plan, reply: Reply) -> None:
        """Write the plan, sleeping and cutting where the reply says."""
        stopping = self.upstream._stopping
        head = self._head(plan)
        if plan.events is None:
            body = plan.body
            if reply.cut_after_bytes is not None:
                body = body[: reply.cut_after_bytes]
                self.close_connection = True
            if reply.first_byte_delay_s:
                self.wfile.write(head)
                stopping.wait(reply.first_byte_delay_s)
                self.wfile.write(body)
            else:
                self.wfile.write(head + body)
            return
        self.wfile.write(head)
        if reply.first_byte_delay_s:
            stopping.wait(reply.first_byte_delay_s)
        for i, event in enumerate(plan.events):
            if reply.cut_after_events is not None and i >= reply.cut_after_events:
                # Close without the terminating zero chunk: a truncated stream.
                self.close_connection = True
                return
            if i and reply.chunk_delay_s:
                stopping.wait(reply.chunk_delay_s)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
        if reply.end_delay_s:
            # A client that stops reading at the stream's own terminator hangs up here.
            stopping.wait(reply.end_delay_s)
        self.wfile.write(b"0\r\n\r\n")
