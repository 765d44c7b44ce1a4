"""A hostile gateway on a loopback socket: it reads the request, then answers bytes at the pace it is told.

    with HostileServer([(b"HTTP/1.1 200 OK\\r\\n", 0.0), *drip(b"Content-Length: 9\\r\\n", 0.2)]) as hostile:
        GatewayClient(config.with_overrides(base_url=hostile.base_url)) ...

Every connection gets the same script; the server stops writing when the client goes away.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Sequence

Step = tuple[bytes, float]  # bytes to send, then seconds to wait


def drip(data: bytes, pause: float) -> list[Step]:
    """One byte at a time, ``pause`` seconds apart."""
    return [(data[i : i + 1], pause) for i in range(len(data))]


def answer(body: bytes, *, status: str = "200 OK", content_type: str = "application/vnd.pay+json") -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


class HostileServer:
    def __init__(self, script: Sequence[Step]) -> None:
        self.script = list(script)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="hostile-gateway", daemon=True)
        self.connections = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/paynet"

    def _serve(self) -> None:
        self._listener.settimeout(0.05)
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            _read_request(conn)
            for data, pause in self.script:
                if self._stop.is_set() or not _send(conn, data):
                    return
                if pause:
                    self._stop.wait(pause)

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._listener.close()
        self._thread.join(5)


def _send(conn: socket.socket, data: bytes) -> bool:
    try:
        conn.sendall(data)
        return True
    except OSError:  # the client went away
        return False


def _read_request(conn: socket.socket) -> None:
    """Headers, then the body its Content-Length announces (a client sends little)."""
    conn.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), 0
    )
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk
