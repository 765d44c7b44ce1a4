"""The merchant's own checkout page for the suite's Hosted Fields scenarios, served on loopback by the test.

A merchant that follows the family's Hosted Fields examples keeps its checkout page and lets the gateway's SDK put
the card number, expiry and CVV into it as iframes (hosted-fields.md sections 1, 2 and 4).  ``CheckoutPages``
serves that page as the examples do: the ephemeral ticket the merchant's server got for this page load in the page
(``page_for``), the SDK loaded async from the gateway's origin (``SDK_URL``), its script and style from the page's
own origin, and the examples' Content-Security-Policy (no inline script or style; scripts, frames and the
tokenize call from the SDK's origin only).  The page writes what happened on its form (``data-state``: ``ready``,
``tokenized``, ``refused``; ``data-error-code``; ``data-violations``), never the card or the token.

    with CheckoutPages(sdk_url_of(config.base_url), config.endpoint_id) as pages:
        browser_payer.open_checkout(pages.page_for(merchant.ephemeral_ticket(), "10.42", "EUR"))
"""

from __future__ import annotations

import html
import itertools
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from string import Template
from typing import Any

from toolkit.hosted_fields import content_security_policy, origin_of
from toolkit.hosts import url_host

_FILES = resources.files("toolkit.certify") / "checkout"
STATIC = {"/checkout.js": "text/javascript", "/checkout.css": "text/css"}
PAGE = "/checkout/"


class CheckoutPages:
    """Checkout pages on ``host`` (a free port), one per ticket: ``page_for(ticket, amount, currency)`` is its URL."""

    def __init__(self, sdk_url: str, endpoint_id: str, *, host: str = "127.0.0.1") -> None:
        self.sdk_url = sdk_url
        self.endpoint_id = endpoint_id
        self.policy = content_security_policy(origin_of(sdk_url))
        self._template = Template((_FILES / "checkout.html").read_text(encoding="utf-8"))
        self._static = {path: (_FILES / path.lstrip("/")).read_bytes() for path in STATIC}
        self._pages: dict[str, bytes] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        pages = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                pages._get(self)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer((host, 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://{url_host(host)}:{self._server.server_address[1]}"
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"CheckoutPages({self.base_url}, SDK {self.sdk_url})"

    def start(self) -> CheckoutPages:
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="gatekit-checkout", daemon=True)  # fmt: skip
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> CheckoutPages:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def page_for(self, ticket: str, amount: str, currency: str) -> str:
        """The address of a checkout page holding ``ticket`` (single use: one page per ticket, as per page load)."""
        values = {"sdk_url": self.sdk_url, "endpoint_id": self.endpoint_id, "ticket": ticket, "amount": amount,
                  "currency": currency}  # fmt: skip
        page = self._template.substitute({name: html.escape(value) for name, value in values.items()})
        with self._lock:
            name = str(next(self._ids))
            self._pages[name] = page.encode("utf-8")
        return f"{self.base_url}{PAGE}{name}"

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?", 1)[0]
        with self._lock:
            page = self._pages.get(path.removeprefix(PAGE)) if path.startswith(PAGE) else None
        if page is not None:
            send_answer(handler, 200, "text/html", page, {"Content-Security-Policy": self.policy,
                                                      "Referrer-Policy": "no-referrer"})  # fmt: skip
        elif path in STATIC:
            send_answer(handler, 200, STATIC[path], self._static[path])
        else:
            send_answer(handler, 404, "text/plain", b"no such page\n")


def send_answer(
    handler: BaseHTTPRequestHandler, status: int, kind: str, body: bytes, extra: Mapping[str, str] | None = None
) -> None:
    """One answer of a merchant's page server: the body whole, never cached, its type not sniffed."""
    handler.send_response(status)
    handler.send_header("Content-Type", f"{kind}; charset=utf-8")
    handler.send_header("Content-Length", str(len(body)))
    handler.send_header("Cache-Control", "no-store")
    handler.send_header("X-Content-Type-Options", "nosniff")
    for name, value in (extra or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)
