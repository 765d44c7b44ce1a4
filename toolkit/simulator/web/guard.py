"""Who may use the control API (``/_sim/``): it resets, forces statuses, moves the clock, reads the journal.

- Without a control token (the default) it answers loopback clients only, and only when the
  ``Host`` header names this machine (``localhost``, a loopback address, or the host of
  ``public_url``): a web page that rebinds its own name to 127.0.0.1 (DNS rebinding) is refused.
- With ``--control-token`` every call must carry ``Authorization: Bearer <token>``
  (``SimulatorControl(token=...)``), from any address.
- Always: a browser's cross-site request is refused (``Sec-Fetch-Site: cross-site`` or
  ``same-site``, or an ``Origin`` that is not the simulator's own), so a page the developer visits
  cannot change the simulator's state with a form or ``fetch``.

Refusals are JSON like the control API's own: ``{"error": "<field>: <why>", "field": "<field>"}``.
"""

from __future__ import annotations

import hmac
import json
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from toolkit.masking import Secret
from toolkit.simulator.destinations import is_loopback

PREFIX = "/_sim"


class ControlGuard:
    def __init__(self, app: ASGIApp, *, token: Secret | None, public_url: str = "") -> None:
        self.app = app
        self.token = token.reveal().encode() if token else b""
        self.public_host = (urlsplit(public_url).hostname or "").lower() if public_url else ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] == "http" and (path == PREFIX or path.startswith(PREFIX + "/")):
            refusal = self.refusal(scope)
            if refusal is not None:
                await _refuse(send, *refusal)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        """(HTTP status, field, why) when the request may not use the control API; None when it may."""
        headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
        host = headers.get("host", "")
        site = headers.get("sec-fetch-site", "")
        if site in ("cross-site", "same-site"):
            return 403, "origin", f"a {site} request from a web page is refused (Sec-Fetch-Site: {site})"
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/") != f"{scope.get('scheme', 'http')}://{host}":
            return 403, "origin", f"Origin {origin[:100]} is not this simulator: cross-site requests are refused"
        if self.token:
            return self._token_refusal(headers.get("authorization", ""))
        client = scope.get("client")
        if client and not is_loopback(str(client[0])):
            return (
                403,
                "client",
                (
                    f"the control API answers loopback clients only, not {client[0]}; "
                    "start the simulator with --control-token to open it to other machines"
                ),
            )
        hostname = (urlsplit("//" + host).hostname or "").lower() if host else ""
        if not (is_loopback(hostname) or (hostname and hostname == self.public_host)):
            return 403, "host", f"Host {host[:100]!r} does not name this simulator (DNS rebinding is refused)"
        return None

    def _token_refusal(self, authorization: str) -> tuple[int, str, str] | None:
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return 401, "authorization", "the control API needs Authorization: Bearer <control token>"
        if not hmac.compare_digest(given.strip().encode(), self.token):
            return 401, "authorization", "the control token is wrong"
        return None


async def _refuse(send: Send, status: int, field: str, why: str) -> None:
    body = json.dumps({"error": f"{field}: {why}", "field": field}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="gatekit simulator control API"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
