"""Upstreams for protocols beyond HTTP/1: an HTTP/2 server over TLS (the `h2` package that
mitmproxy itself uses) answering a chat completion, and a websocket echo over HTTP/1."""

from __future__ import annotations

import base64
import hashlib
import socket
import socketserver
import ssl
import struct
import threading

import h2.config
import h2.connection
import h2.events

from .nasty import CHAT


class _Server:
    def __init__(self, handler: type[socketserver.BaseRequestHandler]) -> None:
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def h2_upstream(context: ssl.SSLContext) -> _Server:
    """HTTPS with ALPN h2 only: every request gets CHAT as application/json."""
    context.set_alpn_protocols(["h2"])

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            try:
                sock = context.wrap_socket(self.request, server_side=True)
            except (ssl.SSLError, OSError):
                return
            conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
            conn.initiate_connection()
            sock.sendall(conn.data_to_send())
            while data := sock.recv(65536):
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.StreamEnded):
                        headers = [
                            (":status", "200"),
                            ("content-type", "application/json"),
                            ("content-length", str(len(CHAT))),
                        ]
                        conn.send_headers(event.stream_id, headers)
                        conn.send_data(event.stream_id, CHAT, end_stream=True)
                    elif isinstance(event, h2.events.ConnectionTerminated):
                        return
                sock.sendall(conn.data_to_send())

    return _Server(Handler)


GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def ws_upstream() -> _Server:
    """A websocket server that echoes each text message reversed, then closes on close."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock: socket.socket = self.request
            head = b""
            while b"\r\n\r\n" not in head:
                if not (chunk := sock.recv(4096)):
                    return
                head += chunk
            key = next(
                line.split(b":", 1)[1].strip().decode()
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"sec-websocket-key")
            )
            accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
            sock.sendall(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept.encode() + b"\r\n\r\n"
            )
            while (frame := read_frame(sock)) is not None:
                opcode, payload = frame
                if opcode == 8:
                    sock.sendall(make_frame(8, payload, mask=False))
                    return
                echo = payload.decode()[::-1].encode()  # reversed by character: still UTF-8
                sock.sendall(make_frame(opcode, echo, mask=False))

    return _Server(Handler)


def make_frame(opcode: int, payload: bytes, mask: bool) -> bytes:
    head = bytes([0x80 | opcode])
    n = len(payload)
    bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 65536:
        head += bytes([bit | 126]) + struct.pack(">H", n)
    else:
        head += bytes([bit | 127]) + struct.pack(">Q", n)
    if not mask:
        return head + payload
    key = b"\x01\x02\x03\x04"
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def _exact(sock: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        if not (chunk := sock.recv(n - len(data))):
            return None
        data += chunk
    return data


def read_frame(sock: socket.socket) -> tuple[int, bytes] | None:
    head = _exact(sock, 2)
    if head is None:
        return None
    opcode, n, masked = head[0] & 0x0F, head[1] & 0x7F, head[1] & 0x80
    if n == 126:
        n = struct.unpack(">H", _exact(sock, 2) or b"\0\0")[0]
    elif n == 127:
        n = struct.unpack(">Q", _exact(sock, 8) or b"\0" * 8)[0]
    key = _exact(sock, 4) if masked else None
    payload = _exact(sock, n) or b""
    if key:
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return opcode, payload


def ws_session(port: int, messages: list[bytes]) -> list[tuple[int, bytes]]:
    """Open a websocket to 127.0.0.1:port, send each text message, then close:
    every frame received."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    key = base64.b64encode(b"toolproxy-wskey!").decode()
    sock.sendall(
        f"GET /v1/realtime HTTP/1.1\r\nHost: upstream\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    got = []
    for message in [*messages]:
        sock.sendall(make_frame(1, message, mask=True))
        frame = read_frame(sock)
        assert frame is not None
        got.append(frame)
    sock.sendall(make_frame(8, b"\x03\xe8", mask=True))
    if (frame := read_frame(sock)) is not None:
        got.append(frame)
    sock.close()
    return got
