"""One line per request that ``gatekit simulate`` serves (``--quiet`` turns it off), card data masked.

    10:42:07.113 POST /paynet/api/v2/sale/1001 sale 200 async-response orderid=8056020 3 ms

The time, the method and path, the operation (the route: a catalogue operation, a page, a
control call), the HTTP status, the ``type`` and ``paynet-order-id`` of a gateway answer, and how
long the simulator took; control characters escaped (``toolkit.terminal``: a path from a web page cannot
write escape sequences or a forged line into the terminal).  An ASGI middleware that the command puts
around the simulator's app: the simulator itself, its tests and ``gatekit certify`` never run it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from toolkit.masking import mask_text
from toolkit.terminal import printable
from toolkit.wire import DecodeError, decode_response

MAX_BODY = 64 * 1024  # gateway answers are small
API = "/api/"  # the gateway's operations (JSON or the legacy key=value form); pages and /_sim/ are not decoded

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]


class _Answer:
    """What the app sent back: the status, and the body when it is a gateway answer (``decode``)."""

    def __init__(self, decode: bool) -> None:
        self.status = 0
        self.decode = decode
        self.body = bytearray()

    def see(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
        elif message["type"] == "http.response.body" and self.decode and len(self.body) < MAX_BODY:
            self.body += message.get("body", b"")

    def fields(self) -> dict[str, str]:
        if not self.body or len(self.body) >= MAX_BODY:
            return {}
        try:
            return decode_response(bytes(self.body))
        except DecodeError:
            return {}


def operation(scope: Scope) -> str:
    """The route that answered: its endpoint's name (a catalogue operation for the gateway API)."""
    endpoint = scope.get("endpoint")
    name = getattr(endpoint, "__name__", "") or "-"
    return name.removesuffix("_group")


def line(scope: Scope, answer: _Answer, seconds: float, at: datetime | None = None) -> str:
    fields = answer.fields()
    kind = fields.get("type", "-")
    orderid = fields.get("paynet-order-id") or "-"
    stamp = (at or datetime.now()).strftime("%H:%M:%S.%f")[:-3]
    text = (
        f"{stamp} {scope.get('method', '-')} {scope.get('path', '')} {operation(scope)} {answer.status or '-'} "
        f"{kind} orderid={orderid} {seconds * 1000:.0f} ms"
    )
    return printable(mask_text(text))


class RequestLog:
    """ASGI middleware: ``write`` gets one masked line when each request has been answered."""

    def __init__(self, app: Callable[..., Any], write: Callable[[str], None]) -> None:
        self.app = app
        self.write = write

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, answer = time.perf_counter(), _Answer(decode=API in str(scope.get("path", "")))

        async def sending(message: Message) -> None:
            answer.see(message)
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self.write(line(scope, answer, time.perf_counter() - started))
