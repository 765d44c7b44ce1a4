"""The HTTP side of the receiver: a loopback ``ThreadingHTTPServer`` that turns requests into arrivals.

Behaviour section 4: callbacks are GETs with the parameters in the query string.  Section 5:
the payer's browser POSTs form-encoded parameters to ``redirect_url`` (GETs are accepted too).
What to answer is decided by the receiver (``handle``); this module only speaks HTTP.
"""

from __future__ import annotations

import html
import socket
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


_PAGE_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:0;background:#eef3ee;color:#1d2430}"
    "header{background:#1f5130;color:#fff;padding:.5rem 1rem;font-size:.85rem}"
    "main{max-width:30rem;margin:2rem auto;background:#fff;padding:1.5rem 2rem;border-radius:8px;"
    "box-shadow:0 1px 4px rgba(0,0,0,.12)}h1{font-size:1.4rem;margin-top:0}"
    "dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}dt{color:#5b6472}"
    "dd{margin:0;font-weight:600}.hint{color:#5b6472;font-size:.85rem;margin-top:1.5rem}"
)
_STATUS_COLOURS = {"approved": "#1f7a3a", "declined": "#c0262d", "error": "#c0262d", "filtered": "#c0262d"}


def redirect_page(params: Mapping[str, str]) -> Answer:
    """The page the payer sees back at the merchant (gatekit's receiver stands in for the shop's
    ``redirect_url``): the status and the order, escaped, styled like a page a shop would show."""
    raw_status = params.get("status", "unknown")
    status = html.escape(raw_status)
    order = html.escape(params.get("client_orderid") or params.get("merchant_order", ""))  # (Hosted Fields)
    colour = _STATUS_COLOURS.get(raw_status, "#946200")
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Payment {status}</title><style>{_PAGE_STYLE}</style></head><body>"
        "<header>the merchant's shop (gatekit's receiver, at the order's redirect_url)</header><main>"
        f'<h1>Payment <span style="color:{colour}">{status}</span></h1>'
        f'<dl><dt>status</dt><dd id="status">{status}</dd><dt>order</dt><dd id="order">{order}</dd></dl>'
        '<p class="hint">The gateway sent the payer back here with the signed outcome; the order\'s final '
        "status comes from the gateway's status call or its callback.</p></main></body></html>"
    )
    return Answer(200, "text/html; charset=utf-8", page.encode("utf-8"))


class ReceiverServer(ThreadingHTTPServer):
    """A threading HTTP server that hands every request to ``handle``; handler threads are joined on close."""

    daemon_threads = True
    # connections waiting to be accepted (socketserver's default, 5, resets the rest: a load run's payers and
    # callbacks come by the dozen at once)
    request_queue_size = 512

    def __init__(self, address: tuple[str, int], handle: Handle) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET  # (an IPv6 literal)
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
