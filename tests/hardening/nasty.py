"""A nasty upstream: answers each `/case/<name>` with exact bytes, delays and resets, as
broken and odd as real providers and middleboxes get. And a raw client that reads what
it is sent byte for byte, so nothing normalises the comparison."""

from __future__ import annotations

import gzip
import json
import socket
import socketserver
import struct
import threading
import time
import zlib
from dataclasses import dataclass, field
from urllib.parse import quote

import brotli
import zstandard

KEY = "sk-nasty/SECRET+0123456789="  # "/", "+", "=": every encoding spells it apart
RESET = "reset"  # a piece that resets the connection (RST) at that point


@dataclass
class Case:
    """What the upstream sends: byte pieces, float pauses, or RESET."""

    pieces: list[bytes | float | str] = field(default_factory=list)
    hang_s: float = 0.0  # sleep first (the client gives up)


def _head(status: str, headers: list[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _chunked(body: bytes, size: int, ext: str = "", trailers: str = "") -> bytes:
    out = b""
    for i in range(0, len(body), size):
        piece = body[i : i + size]
        out += f"{len(piece):x}{ext}\r\n".encode() + piece + b"\r\n"
    return out + b"0\r\n" + trailers.encode() + b"\r\n"


CHAT = json.dumps(
    {
        "id": "c1",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
).encode()
TOOL = json.dumps(
    {
        "id": "c2",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "t1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                        }
                    ],
                },
            }
        ],
    }
).encode()


def _sse(events: list[object], sep: bytes = b"\n\n") -> bytes:
    return (
        b"".join(b"data: " + json.dumps(e).encode() + sep for e in events) + b"data: [DONE]" + sep
    )


SSE_CHAT = _sse(
    [
        {
            "id": "s",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": "héllo wörld"}}],
        },
        {
            "id": "s",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        },
    ]
)
SSE_CRLF = SSE_CHAT.replace(b"\n", b"\r\n")
SSE_ANTHROPIC = b"".join(
    f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
    for name, data in [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "a",
                    "model": "m",
                    "role": "assistant",
                    "content": [],
                    "usage": {"input_tokens": 3},
                },
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "hi"},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
)
NON_UTF8 = b'{"text": "caf\xe9 \xff\xfe", "key": "' + KEY.encode() + b'"}'
JSON_CT = ("Content-Type", "application/json")
SSE_CT = ("Content-Type", "text/event-stream")


def _length(status: str, body: bytes, headers: list[tuple[str, str]]) -> bytes:
    return _head(status, [*headers, ("Content-Length", str(len(body)))]) + body


def corpus() -> dict[str, Case]:
    """Name -> case: bodies x framings, encodings, statuses, and one-off oddities."""
    cases: dict[str, Case] = {}
    bodies = {
        "json": (CHAT, JSON_CT),
        "tool": (TOOL, JSON_CT),
        "sse_chat": (SSE_CHAT, SSE_CT),
        "sse_anthropic": (SSE_ANTHROPIC, SSE_CT),
        "non_utf8": (NON_UTF8, JSON_CT),
        "empty_object": (b"{}", JSON_CT),
    }
    for name, (body, ct) in bodies.items():
        cases[f"{name}_length"] = Case([_length("200 OK", body, [ct])])
        cases[f"{name}_chunked"] = Case(
            [_head("200 OK", [ct, ("Transfer-Encoding", "chunked")]) + _chunked(body, 4096)]
        )
        tiny = _chunked(body, 1)
        cases[f"{name}_chunked_1byte"] = Case(
            [_head("200 OK", [ct, ("Transfer-Encoding", "chunked")]), *_split(tiny, 7)]
        )
        cases[f"{name}_close_delimited"] = Case(
            [_head("200 OK", [ct, ("Connection", "close")]) + body]
        )
    codecs = {
        "gzip": gzip.compress,
        "br": brotli.compress,
        "zstd": lambda b: zstandard.ZstdCompressor().compress(b),
        "deflate": zlib.compress,
    }
    for enc, fn in codecs.items():
        packed = fn(CHAT)
        enc_h = ("Content-Encoding", enc)
        cases[f"{enc}_length"] = Case([_length("200 OK", packed, [JSON_CT, enc_h])])
        cases[f"{enc}_chunked"] = Case(
            [
                _head("200 OK", [JSON_CT, enc_h, ("Transfer-Encoding", "chunked")])
                + _chunked(packed, 16)
            ]
        )
    cases["gzip_sse"] = Case(
        [_length("200 OK", gzip.compress(SSE_CHAT), [SSE_CT, ("Content-Encoding", "gzip")])]
    )
    cases["bogus_encoding"] = Case(
        [_length("200 OK", CHAT, [JSON_CT, ("Content-Encoding", "x-rot13")])]
    )
    cases["lying_gzip"] = Case([_length("200 OK", CHAT, [JSON_CT, ("Content-Encoding", "gzip")])])
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}}).encode()
    for status in [
        "201 Created",
        "400 Bad Request",
        "401 Unauthorized",
        "404 Not Found",
        "409 Conflict",
        "422 Unprocessable Entity",
        "500 Internal Server Error",
        "502 Bad Gateway",
        "529 Overloaded",
    ]:
        cases[f"status_{status.split()[0]}"] = Case([_length(status, echo, [JSON_CT])])
    cases["status_429_retry_after"] = Case(
        [_length("429 Too Many Requests", echo, [JSON_CT, ("Retry-After", "2")])]
    )
    cases["status_503_html"] = Case(
        [
            _length(
                "503 Service Unavailable",
                b"<html><body>down</body></html>",
                [("Content-Type", "text/html")],
            )
        ]
    )
    cases["status_204"] = Case([_head("204 No Content", [])])
    cases["status_304"] = Case([_head("304 Not Modified", [("ETag", '"x"')])])
    cases["early_hints_103"] = Case(
        [
            _head("103 Early Hints", [("Link", "</style.css>; rel=preload")]),
            _length("200 OK", CHAT, [JSON_CT]),
        ]
    )
    cases["trailers"] = Case(
        [
            _head("200 OK", [JSON_CT, ("Transfer-Encoding", "chunked"), ("Trailer", "X-Checksum")])
            + _chunked(CHAT, 50, trailers="X-Checksum: abc\r\n")
        ]
    )
    cases["chunk_extensions"] = Case(
        [
            _head("200 OK", [JSON_CT, ("Transfer-Encoding", "chunked")])
            + _chunked(CHAT, 64, ext=";name=value")
        ]
    )
    cases["duplicate_headers"] = Case(
        [
            _length(
                "200 OK",
                CHAT,
                [
                    JSON_CT,
                    ("Set-Cookie", "a=1"),
                    ("Set-Cookie", "b=2"),
                    ("X-Dup", "1"),
                    ("x-dup", "2"),
                ],
            )
        ]
    )
    cases["long_header"] = Case([_length("200 OK", CHAT, [JSON_CT, ("X-Long", "v" * 16000)])])
    cases["mixed_case_headers"] = Case(
        [_length("200 OK", CHAT, [("CoNtEnT-TyPe", "application/json"), ("X-CUSTOM", "Yes")])]
    )
    cases["empty_reason"] = Case([_length("200 ", CHAT, [JSON_CT])])
    cases["custom_reason"] = Case([_length("200 All Good Here", CHAT, [JSON_CT])])
    cases["key_in_header"] = Case([_length("200 OK", CHAT, [JSON_CT, ("X-Echo-Key", KEY)])])
    cases["slow_drip"] = Case(
        [
            _head("200 OK", [SSE_CT, ("Transfer-Encoding", "chunked")]),
            *[p for piece in _split(_chunked(SSE_CHAT, 30), 40) for p in (0.02, piece)],
        ]
    )
    cases["sse_crlf"] = Case([_length("200 OK", SSE_CRLF, [SSE_CT])])
    cases["sse_split_mid_utf8"] = Case(
        [
            _head("200 OK", [SSE_CT, ("Transfer-Encoding", "chunked")]),
            *_split(_chunked(SSE_CHAT, 3), 5),
        ]
    )
    cases["sse_cut_mid_stream"] = Case(
        [_head("200 OK", [SSE_CT, ("Connection", "close")]) + SSE_CHAT[: len(SSE_CHAT) // 2]]
    )
    cases["sse_no_done"] = Case(
        [_length("200 OK", SSE_CHAT.replace(b"data: [DONE]\n\n", b""), [SSE_CT])]
    )
    cases["big_body_1mb"] = Case(
        [_length("200 OK", b'{"pad": "' + b"x" * 1_000_000 + b'"}', [JSON_CT])]
    )
    cases["http10_response"] = Case(
        [b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + CHAT]
    )
    cases["reset_before_response"] = Case([RESET])
    cases["reset_mid_body"] = Case(
        [_head("200 OK", [JSON_CT, ("Content-Length", str(len(CHAT)))]) + CHAT[:20], RESET]
    )
    cases["short_body_then_close"] = Case(
        [_head("200 OK", [JSON_CT, ("Content-Length", str(len(CHAT) + 100))]) + CHAT]
    )
    cases["hang"] = Case([], hang_s=4.0)
    cases["invalid_json_body"] = Case([_length("200 OK", b'{"choices": [', [JSON_CT])])
    cases["text_plain_body"] = Case(
        [_length("200 OK", b"plain words", [("Content-Type", "text/plain")])]
    )
    cases["no_content_type"] = Case([_length("200 OK", CHAT, [])])
    # The key echoed back in every body encoding (as providers do in their errors).
    said = json.dumps({"error": {"message": f"bad key {KEY}"}}).encode()
    cases["key_gzip"] = Case(
        [_length("401 Unauthorized", gzip.compress(said), [JSON_CT, ("Content-Encoding", "gzip")])]
    )
    cases["key_br"] = Case(
        [_length("401 Unauthorized", brotli.compress(said), [JSON_CT, ("Content-Encoding", "br")])]
    )
    cases["key_zstd"] = Case(
        [
            _length(
                "401 Unauthorized",
                zstandard.ZstdCompressor().compress(said),
                [JSON_CT, ("Content-Encoding", "zstd")],
            )
        ]
    )
    cases["key_invalid_json"] = Case(
        [_length("401 Unauthorized", b'{"error": "bad key ' + KEY.encode() + b'"', [JSON_CT])]
    )
    cases["key_json_escaped"] = Case(
        [_length("401 Unauthorized", said.replace(b"/", b"\\/"), [JSON_CT])]
    )
    cases["key_url_encoded"] = Case(
        [
            _length(
                "400 Bad Request",
                b"key=" + quote(KEY, safe="").encode(),
                [("Content-Type", "application/x-www-form-urlencoded")],
            )
        ]
    )
    split = _sse(
        [
            {
                "id": "s",
                "object": "chat.completion.chunk",
                "model": "m",
                "choices": [{"index": 0, "delta": {"content": f"your key is {KEY}"}}],
            }
        ]
    )
    at = split.index(b"SECRET")
    cases["key_sse_split"] = Case(
        [
            _head("200 OK", [SSE_CT, ("Transfer-Encoding", "chunked")]),
            _chunked(split[:at], 1000)[:-5],
            0.05,
            _chunked(split[at:], 1000),
        ]
    )
    return cases


def _split(data: bytes, size: int) -> list[bytes | float | str]:
    return [data[i : i + size] for i in range(0, len(data), size)]


class NastyUpstream:
    """Serves `corpus()` on 127.0.0.1 until closed."""

    def __init__(self) -> None:
        cases = corpus()
        self.cases = cases
        self.stopping = threading.Event()
        stopping = self.stopping

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock: socket.socket = self.request
                head = _read_head(sock)
                if head is None:
                    return
                target = head.split(b" ", 2)[1].decode() if head.count(b" ") >= 2 else ""
                length = _content_length(head)
                _read_exact(sock, length)
                case = cases.get(target.partition("?case=")[2])
                if case is None:
                    sock.sendall(_length("404 Not Found", b"no case", []))
                    return
                if case.hang_s:
                    stopping.wait(case.hang_s)
                    return
                for piece in case.pieces:
                    if isinstance(piece, float):
                        time.sleep(piece)
                    elif piece == RESET:
                        sock.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                        )
                        sock.close()
                        return
                    else:
                        assert isinstance(piece, bytes)
                        sock.sendall(piece)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> NastyUpstream:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


def _read_head(sock: socket.socket) -> bytes | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    sock_rest[id(sock)] = rest
    return head


sock_rest: dict[int, bytes] = {}


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0


def _read_exact(sock: socket.socket, n: int) -> None:
    got = len(sock_rest.pop(id(sock), b""))
    while got < n:
        chunk = sock.recv(65536)
        if not chunk:
            return
        got += len(chunk)


REQUEST = json.dumps(
    {
        "model": "m",
        "messages": [{"role": "user", "content": "weather in Paris?"}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            }
        ],
    }
).encode()


def fetch(port: int, case: str, timeout: float = 2.5) -> tuple[bytes, str]:
    """Send the chat request for `case`; (every byte received, how it ended)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    request = (
        f"POST /v1/chat/completions?case={case} HTTP/1.1\r\nHost: upstream\r\n"
        f"Content-Type: application/json\r\nAuthorization: Bearer {KEY}\r\n"
        f"Content-Length: {len(REQUEST)}\r\nConnection: close\r\n\r\n"
    ).encode() + REQUEST
    sock.sendall(request)
    data, end = b"", "eof"
    deadline = time.monotonic() + timeout
    try:
        while True:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except TimeoutError:
        end = "timeout"
    except ConnectionResetError:
        end = "reset"
    finally:
        sock.close()
    return data, end
