"""The HTTP side of the receiver: a loopback ``ThreadingHTTPServer`` that turns requests into arrivals.

Behaviour section 4: callbacks are GETs with the parameters in the query string.  Section 5:
the payer's browser POSTs form-encoded parameters to ``redirect_url`` (GETs are accepted too).
What to answer is decided by the receiver (``handle``); this module only speaks HTTP.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import cast
from urllib.parse import parse_qsl

from toolkit.callbacks.records import CALLBACK, REDIRECT, Kind

_IGNORED_PATHS = frozenset({"/favicon.ico", "/robots.txt"})  # browsers ask for these; they are not arrivals
_MAX_BODY = 1 << 20


@dataclass(frozen=True)
class Arrival:
    """One request as the server saw it: raw (unmasked) parameters, query and form body merged."""

    method: str
    path: str
    params: dict[str, str]

    @property
    def kind(self) -> Kind:
        """By the first path segment (``/callback``, ``/redirect``), else GET is a callback, POST a redirect."""
        first = self.path.lstrip("/").split("/", 1)[0]
        if first in (CALLBACK, REDIRECT):
            return first
        return REDIRECT if self.method == "POST" else CALLBACK


@dataclass(frozen=True)
class Answer:
    """What to send back: status, media type and body."""

    status: int
    content_type: str
    body: bytes


Handle = Callable[[Arrival], Answer]


def parse_params(query: str, body: bytes = b"") -> dict[str, str]:
    """Query and form body (body wins); the first value of a repeated name is kept."""
    params: dict[str, str] = {}
    for source in (body.decode("utf-8", errors="replace"), query):
        for name, value in parse_qsl(source, keep_blank_values=True):
            params.setdefault(name, value)
    return params


def text_answer(status: int, text: str) -> Answer:
    return Answer(status, "text/plain; charset=utf-8", text.encode("utf-8"))


def redirect_page(params: Mapping[str, str]) -> Answer:
    """The tiny page the payer sees back at the merchant: it says the status (escaped)."""
    status = html.escape(params.get("status", "unknown"))
    order = html.escape(params.get("client_orderid", ""))
    page = (
        '<!doctype html><html><head><meta charset="utf-8"><title>Payment ' + status + "</title></head>"
        f'<body><h1>Payment {status}</h1><p id="status">{status}</p><p id="order">{order}</p></body></html>'
    )
    return Answer(200, "text/html; charset=utf-8", page.encode("utf-8"))


class ReceiverServer(ThreadingHTTPServer):
    """A threading HTTP server that hands every request to ``handle``; handler threads are joined on close."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handle: Handle) -> None:
        super().__init__(address, _Handler)
        self.handle = handle


class _Handler(BaseHTTPRequestHandler):
    server_version = "gatekit-callbacks"
    timeout = 10  # a client that connects and says nothing must not block shutdown forever

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: arrivals are recorded, not logged to stderr."""

    def _serve(self, method: str) -> None:
        path, _, query = self.path.partition("?")
        if path in _IGNORED_PATHS:
            self._send(text_answer(404, "not an arrival"))
            return
        length = min(int(self.headers.get("Content-Length") or 0), _MAX_BODY)
        body = self.rfile.read(length) if length > 0 else b""
        server = cast(ReceiverServer, self.server)
        self._send(server.handle(Arrival(method, path or "/", parse_params(query, body))))

    def _send(self, answer: Answer) -> None:
        try:
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(answer.body)
        except (BrokenPipeError, ConnectionResetError):  # the caller gave up waiting (a delayed answer)
            self.close_connection = True
