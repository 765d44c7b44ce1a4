"""``Reply``: the answer to one request, written on the client's socket, whole (``send``) or as it comes (``start``,
``write``, ``end``).

The body is framed by ``Content-Length`` when its length is known, else chunked (HTTP/1.1) or by closing the
connection (HTTP/1.0).  Each write waits ``write_timeout`` at most for a client that does not read; a client
that went away raises ``ClientGone`` (a reset, a broken pipe), which its connection ends quietly.
"""

from __future__ import annotations

import re
import socket
from email.utils import formatdate
from http import HTTPStatus

Headers = list[tuple[str, str]]
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_FRAMING = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "date"})


class ClientGone(Exception):
    """The client closed or reset its connection, or did not read for ``write_timeout``: nobody to answer."""


def phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


class Reply:
    """The answer to one request; ``keep_alive`` False closes the connection after it."""

    def __init__(self, sock: socket.socket, *, write_timeout: float) -> None:
        self.sock = sock
        self.write_timeout = write_timeout
        self.method = ""
        self.version = "HTTP/1.1"
        self.keep_alive = False
        self.started = False
        self.sent = 0  # bytes of the body written
        self._chunked = False
        self._bodyless = False

    def for_request(self, method: str, version: str, keep_alive: bool) -> None:
        self.method, self.version, self.keep_alive = method, version, keep_alive

    def send(self, status: int, headers: Headers, body: bytes) -> None:
        self.start(status, headers, len(body))
        self.write(body)
        self.end()

    def start(self, status: int, headers: Headers, length: int | None) -> None:
        """The status line and the header fields (framing ones are the reply's own: those given are left out)."""
        self._bodyless = self.method == "HEAD" or status in (204, 304) or status < 200
        lines = [f"HTTP/1.1 {status} {phrase(status)}".rstrip()]
        lines += [f"{name}: {_value(value)}" for name, value in headers
                  if _TOKEN.fullmatch(name) and name.lower() not in _FRAMING]  # fmt: skip
        if length is not None and (not self._bodyless or self.method == "HEAD"):
            lines.append(f"Content-Length: {length}")
        elif not self._bodyless and self.version == "HTTP/1.1":
            lines.append("Transfer-Encoding: chunked")
            self._chunked = True
        elif not self._bodyless:
            self.keep_alive = False  # (HTTP/1.0: the end of the body is the end of the connection)
        lines.append(f"Date: {formatdate(usegmt=True)}")
        lines.append("Connection: keep-alive" if self.keep_alive else "Connection: close")
        self.started = True
        self._write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace"))

    def write(self, data: bytes) -> None:
        if not data or self._bodyless:
            return
        self._write(b"%x\r\n%b\r\n" % (len(data), data) if self._chunked else data)
        self.sent += len(data)

    def end(self) -> None:
        if self._chunked:
            self._write(b"0\r\n\r\n")

    def interim_continue(self) -> None:
        """``100 Continue``: the client that asked (``Expect: 100-continue``) may send its body."""
        self._write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _write(self, data: bytes) -> None:
        try:
            self.sock.settimeout(self.write_timeout)
            self.sock.sendall(data)
        except OSError as exc:  # (BrokenPipeError, ConnectionResetError, TimeoutError: it went away or stalled)
            self.keep_alive = False
            raise ClientGone(exc.__class__.__name__) from None


def _value(value: str) -> str:
    """A field value as it may be written: no CR or LF (a folded or forged value cannot start another field)."""
    return value.replace("\r", " ").replace("\n", " ")


__all__ = ["ClientGone", "Headers", "Reply", "phrase"]
