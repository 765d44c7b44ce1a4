"""A bare-socket client of ``gatekit proxy`` for its tests (``tests/test_proxy_*.py``): what it sends is sent as
written, and every answer is read as it comes, so that a second answer, or a connection left open after a refusal,
is seen."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from toolkit.proxy import ProxyServer
from toolkit.wire import decode_response

DEADLINE = 10.0  # seconds a bare client waits for an answer, or for the proxy to close the connection
STATUS = "POST /api/v2/status/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"


@dataclass(frozen=True)
class Answered:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    @property
    def message(self) -> str:
        """What a client library shows: the ``error-message`` of an answer in the gateway's form, else the text."""
        if self.text.startswith(("type=", "{")):
            return decode_response(self.body).get("error-message", "")
        return self.text


class Raw:
    """A client on a bare socket to ``base_url``: ``send`` bytes as written, read each ``answer``, see ``closed``."""

    def __init__(self, base_url: str) -> None:
        address = urlsplit(base_url)
        self.sock = socket.create_connection((address.hostname, address.port), timeout=DEADLINE)
        self.buffer = b""

    def __enter__(self) -> Raw:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def receive(self) -> bool:
        """What the proxy sends next, into ``buffer``; False when it closed the connection."""
        try:
            data = self.sock.recv(1 << 16)
        except ConnectionResetError:
            return False
        self.buffer += data
        return bool(data)

    def _take(self, size: int) -> bytes:
        while len(self.buffer) < size:
            if not self.receive():
                raise AssertionError(f"the connection ended {size - len(self.buffer)} bytes before the answer's end")
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def answer(self) -> Answered | None:
        """The next answer (a ``100 Continue`` is one); None when the proxy closes the connection instead."""
        while b"\r\n\r\n" not in self.buffer:
            if not self.receive():
                assert not self.buffer, f"an answer cut short: {self.buffer!r}"
                return None
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip() for name, value in (line.split(":", 1) for line in lines[1:])}
        status = int(lines[0].split()[1])
        if status == 100 or status == 204:
            return Answered(status, headers, b"")
        if "content-length" in headers:
            return Answered(status, headers, self._take(int(headers["content-length"])))
        assert headers.get("transfer-encoding") == "chunked", headers
        body = b""
        while size := int(self._line(), 16):
            body += self._take(size)
            assert self._take(2) == b"\r\n"
        assert self._line() == b""
        return Answered(status, headers, body)

    def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            assert self.receive(), "the connection ended inside a chunked body"
        line, _, self.buffer = self.buffer.partition(b"\r\n")
        return line

    def closed(self) -> bool:
        """Whether the proxy closes the connection within ``DEADLINE`` (what comes before is kept in ``buffer``)."""
        try:
            while self.receive():
                pass
        except TimeoutError:
            return False
        return True


def request(head: str, body: bytes = b"") -> bytes:
    return head.encode("latin-1") + b"\r\n" + body


class Output:
    """The proxy's output, kept."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


def refused(proxy: ProxyServer, data: bytes) -> Answered:
    """The one answer to ``data``, with the connection closed after it and nothing more sent."""
    with Raw(proxy.base_url) as client:
        client.send(data)
        answer = client.answer()
        assert answer is not None
        assert answer.headers.get("connection") == "close", answer
        assert client.closed(), "the proxy kept the connection open after refusing a request"
        assert client.buffer == b"", f"a second answer: {client.buffer[:200]!r}"
    return answer
