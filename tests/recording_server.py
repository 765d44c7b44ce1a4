"""A real HTTP server on a loopback socket that records every request and answers what it is told.

The client is tested at its transport: nothing in ``toolkit`` is replaced.  Replies are queued
(``server.reply(...)``, one per request, the last one repeating); every request is recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl

JSON_TYPE = "application/vnd.pay+json"
LEGACY_TYPE = "text/html;charset=utf-8"


@dataclass(frozen=True)
class Recorded:
    """One request as it arrived on the socket."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return parse_qsl(self.body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(self.body))

    @property
    def fields(self) -> dict[str, str]:
        return dict(self.pairs)

    def header(self, name: str) -> str | None:
        return next((value for key, value in self.headers.items() if key.lower() == name.lower()), None)


@dataclass(frozen=True)
class Reply:
    """What to answer: a JSON object (as the gateway with Accept: vnd.pay+json) or a raw body."""

    body: Mapping[str, object] | str
    status: int = 200
    content_type: str | None = None

    def encode(self) -> tuple[bytes, str]:
        if isinstance(self.body, str):
            return self.body.encode("utf-8"), self.content_type or LEGACY_TYPE
        return json.dumps(self.body).encode("utf-8"), self.content_type or JSON_TYPE


@dataclass
class RecordingServer:
    """``ThreadingHTTPServer`` on 127.0.0.1, port chosen by the system; start/stop or ``with``."""

    prefix: str = "/paynet"
    requests: list[Recorded] = field(default_factory=list)
    _replies: list[Reply] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _last: Reply = Reply({"type": "error", "error-message": "recording server: no reply queued"}, 500)

    def __post_init__(self) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="recording-server", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}{self.prefix}"

    def reply(self, *replies: Reply | Mapping[str, object] | str, status: int = 200) -> None:
        """Queue answers, one per request; when the queue is empty the last one given repeats."""
        with self._lock:
            self._replies.extend(r if isinstance(r, Reply) else Reply(r, status) for r in replies)

    def next_reply(self) -> Reply:
        with self._lock:
            if self._replies:
                self._last = self._replies.pop(0)
            return self._last

    def record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    @property
    def last(self) -> Recorded:
        assert self.requests, "the server received no request"
        return self.requests[-1]

    def start(self) -> RecordingServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def __enter__(self) -> RecordingServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler_for(server: RecordingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            server.record(Recorded(self.command, self.path, dict(self.headers.items()), body))
            reply = server.next_reply()
            payload, content_type = reply.encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
            pass

    return Handler
