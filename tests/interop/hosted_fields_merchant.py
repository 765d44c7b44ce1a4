"""A merchant that follows hosted-fields.md as the family's Hosted Fields examples do (their Python/Flask app read
closely), written without gatekit: its own server on 127.0.0.1, its own OAuth RSA-SHA256 signing
(``tests.independent``: hashlib, urllib and cryptography), its own control check.

    GET  /                   the checkout page (``hosted_fields_shop/checkout.html``) under the examples' CSP
    GET  /config.js          window.CONFIG with a fresh ephemeral ticket per page load (Cache-Control: no-store)
    POST /pay                the v4 sale with the page's hosted_fields_token; the gateway's JSON answer, as read
    GET  /status             the order's status (the page polls it every ``poll_ms``; 4 s in the examples)
    POST /result/callback    the payer's browser after 3-D Secure: control verified (constant time), 303 to /result
    GET  /result/callback    303 to the empty result page
    GET  /result             the return page (control verified again), which polls /status
    GET  /result-config.js   its window.CONFIG (no ticket)

The settings are the examples' (``API_URL``, ``SDK_URL``, ``ENDPOINT_ID``, ``MERCHANT_LOGIN``, ``MERCHANT_CONTROL``,
``PRIVATE_KEY``): ``toolkit.hosted_fields.HostedFieldsGateway.environment()`` gives them for a simulator.  What the
gateway answered and what came back from the payer's browser is kept (``sales``, ``returns``) for the tests.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from tests import independent
from toolkit.certify.checkout import send_answer

PAGES = Path(__file__).parent / "hosted_fields_shop"
STATIC = {"checkout.js": "text/javascript", "status.js": "text/javascript", "result.js": "text/javascript",
          "styles.css": "text/css"}  # fmt: skip
SIGNED_CALLBACK_FIELDS = ("status", "orderid", "merchant_order", "control")
BROWSER_FIELDS = (
    "customer_browser_info",
    "customer_browser_javascript_enabled",
    "customer_browser_java_enabled",
    "customer_browser_accept_language",
    "customer_browser_color_depth",
    "customer_browser_screen_width",
    "customer_browser_screen_height",
    "customer_browser_time_zone",
)
TIMEOUT = 30


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def policy(sdk_origin: str) -> str:
    """The examples' Content-Security-Policy (python-flask-js/app.py), built from the SDK's origin."""
    return "; ".join([
        "default-src 'none'", f"script-src 'self' {sdk_origin}", "style-src 'self'", f"frame-src {sdk_origin}",
        f"connect-src 'self' {sdk_origin}", "img-src 'self' data:", "base-uri 'none'", "form-action 'self'",
        "frame-ancestors 'none'",
    ])  # fmt: skip


def control_ok(fields: Mapping[str, str], control_key: str) -> bool:
    """``control = sha1_hex(status + orderid + merchant_order + control key)``, compared in constant time."""
    expected = independent.sha1_hex("".join(fields.get(name, "") for name in SIGNED_CALLBACK_FIELDS[:3]) + control_key)
    return hmac.compare_digest(expected, fields.get("control", "").strip().lower())


@dataclass
class Gateway:
    """The three signed calls (the examples' paynet.py and oauth.py): form-encoded, Accept vnd.pay+json, OAuth
    1.0a RSA-SHA256 over the URL, the body's fields and the five oauth_* parameters."""

    api_url: str
    endpoint_id: str
    login: str
    private_key_pem: bytes
    calls: list[tuple[str, int, str]] = field(default_factory=list)  # (command, HTTP status, body as received)

    def ticket(self) -> str:
        reply = self.post("tokenize/create-ephemeral-ticket")
        ticket = str(reply.get("ephemeralTicket") or "").strip()
        if not ticket:
            raise RuntimeError(reply.get("error-message") or "no ephemeralTicket in the response")
        return ticket

    def post(self, command: str, params: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The answer decoded as JSON whatever its HTTP status; a body that is not a JSON object is a failed call."""
        url = f"{self.api_url}/api/v4/{command}/{self.endpoint_id}"
        params = dict(params or {})
        request = urllib.request.Request(url, data=urlencode(params).encode(), method="POST", headers={
            "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/vnd.pay+json",
            "Authorization": self.authorization(url, params),
        })  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as reply:
                text, status = reply.read().decode("utf-8", "replace"), reply.status
        except urllib.error.HTTPError as error:  # a refusal is a 4xx with a JSON body: read it as any answer
            text, status = error.read().decode("utf-8", "replace"), error.code
            error.close()
        self.calls.append((command, status, text))
        try:
            decoded = json.loads(text)
        except ValueError:
            decoded = None
        if not isinstance(decoded, dict):
            raise RuntimeError(f"gateway request failed with {status}")
        return decoded

    def authorization(self, url: str, params: Mapping[str, str]) -> str:
        oauth = [("oauth_consumer_key", self.login), ("oauth_nonce", secrets.token_hex(16)),
                 ("oauth_signature_method", "RSA-SHA256"), ("oauth_timestamp", str(int(time.time()))),
                 ("oauth_version", "1.0")]  # fmt: skip
        base = independent.base_string("POST", url, [*params.items(), *oauth])
        signature = independent.rsa_sha256_sign(base, self.private_key_pem)
        return independent.authorization_header([*oauth, ("oauth_signature", signature)])


class HostedFieldsMerchant:
    """The merchant's app on 127.0.0.1, a free port; ``settings`` as the examples' ``.env`` names them."""

    def __init__(self, settings: Mapping[str, str], *, poll_ms: int = 200, amount: str = "1.00") -> None:
        self.sdk_url = settings["SDK_URL"]
        self.control_key = settings["MERCHANT_CONTROL"]
        self.endpoint_id = settings["ENDPOINT_ID"]
        self.login = settings["MERCHANT_LOGIN"]
        self.gateway = Gateway(settings["API_URL"], self.endpoint_id, self.login, settings["PRIVATE_KEY"].encode())
        self.poll_ms, self.amount, self.currency = poll_ms, amount, "USD"
        self.policy = policy(origin_of(self.sdk_url))
        self.sales: list[dict[str, Any]] = []  # the sale answers, decoded (paynet-order-id a JSON number)
        self.returns: list[tuple[dict[str, str], bool]] = []  # what the payer's browser posted, and control_ok
        merchant = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                merchant.get(self)

            def do_POST(self) -> None:
                merchant.post(self)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.redirect_url = self.url + "/result/callback"
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="hf-merchant", daemon=True)

    def __enter__(self) -> HostedFieldsMerchant:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)

    # --- routes ------------------------------------------------------------------------------------------------

    def get(self, handler: BaseHTTPRequestHandler) -> None:
        path, _, query = handler.path.partition("?")
        if path == "/":
            self.page(handler, "checkout.html")
        elif path == "/config.js":
            self.config_js(handler)
        elif path == "/result-config.js":
            self.script(handler, {"basePath": "", "amount": self.amount, "currency": self.currency,
                                  "pollMs": self.poll_ms})  # fmt: skip
        elif path == "/status":
            self.status(handler, dict(parse_qsl(query)))
        elif path == "/result/callback":
            self.redirect(handler, "/result")
        elif path == "/result":
            signed = dict(parse_qsl(query))
            if signed.get("orderid") and not control_ok(signed, self.control_key):
                self.answer(handler, 403, "text/plain", b"invalid result signature\n")
            else:
                self.page(handler, "result.html")
        elif path.lstrip("/") in STATIC:
            name = path.lstrip("/")
            self.answer(handler, 200, STATIC[name], (PAGES / name).read_bytes())
        else:
            self.answer(handler, 404, "text/plain", b"not here\n")

    def post(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length)
        if handler.path == "/pay":
            self.pay(handler, body)
        elif handler.path == "/result/callback":
            fields = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
            verified = control_ok(fields, self.control_key)
            self.returns.append((fields, verified))
            if not verified:
                self.answer(handler, 403, "text/plain", b"invalid callback signature\n")
                return
            self.redirect(
                handler, "/result?" + urlencode([(n, fields[n]) for n in SIGNED_CALLBACK_FIELDS if fields.get(n)])
            )
        else:
            self.answer(handler, 404, "text/plain", b"not here\n")

    def config_js(self, handler: BaseHTTPRequestHandler) -> None:
        """Step 1: a fresh single-use ticket for every page load."""
        config: dict[str, Any] = {"basePath": "", "sdkUrl": self.sdk_url, "endpointId": self.endpoint_id,
                                  "amount": self.amount, "currency": self.currency, "pollMs": self.poll_ms}  # fmt: skip
        try:
            config["ephemeralTicket"] = self.gateway.ticket()
        except Exception as error:  # the page must still load, and say it cannot take a payment
            config["error"] = str(error)
        self.script(handler, config)

    def pay(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        """Step 3: the token charged with a v4 sale; the gateway's answer (with our clientOrderId) to the page."""
        try:
            payment = json.loads(body)
        except ValueError:
            payment = None
        token = payment.get("hostedFieldsToken") if isinstance(payment, dict) else None
        if not isinstance(token, str) or not token:
            self.json(handler, 400, {"error": "hostedFieldsToken is required"})
            return
        browser = payment.get("browser") if isinstance(payment.get("browser"), dict) else {}
        customer = payment.get("customer") if isinstance(payment.get("customer"), dict) else {}
        params = {name: str(browser[name]) for name in BROWSER_FIELDS if name in browser}
        params["customer_browser_accept_header"] = handler.headers.get("Accept") or "*/*"
        params["customer_browser_user_agent"] = handler.headers.get("User-Agent") or ""
        client_order_id = f"hf-{secrets.token_hex(16)}"
        params.update({
            "client_orderid": client_order_id, "order_desc": "Hosted Fields example order", "amount": self.amount,
            "currency": self.currency, "hosted_fields_token": token,
            "card_printed_name": str(customer.get("cardPrintedName") or ""),
            "first_name": str(customer.get("firstName") or ""), "last_name": str(customer.get("lastName") or ""),
            "address1": "100 Main st", "city": "Seattle", "zip_code": "98102", "country": "US", "state": "WA",
            "phone": "+12063582043", "email": str(customer.get("email") or ""),
            "ipaddress": handler.client_address[0], "redirect_url": self.redirect_url,
        })  # fmt: skip
        try:
            sale = self.gateway.post("sale", params)
        except Exception as error:
            self.json(handler, 502, {"error": str(error)})
            return
        self.sales.append(sale)
        self.json(handler, 200, {**sale, "clientOrderId": client_order_id})

    def status(self, handler: BaseHTTPRequestHandler, query: Mapping[str, str]) -> None:
        """Step 4: the gateway's status, as it answered (the page reads redirect-to and the final statuses)."""
        order_id, client_order_id = query.get("orderId", ""), query.get("clientOrderId", "")
        if not order_id or not client_order_id:
            self.json(handler, 400, {"error": "orderId and clientOrderId are required"})
            return
        try:
            reply = self.gateway.post("status", {"login": self.login, "client_orderid": client_order_id,
                                                 "orderid": order_id})  # fmt: skip
        except Exception as error:
            self.json(handler, 502, {"error": str(error)})
            return
        self.json(handler, 200, reply)

    # --- answers -------------------------------------------------------------------------------------------------

    def page(self, handler: BaseHTTPRequestHandler, name: str) -> None:
        self.answer(handler, 200, "text/html", (PAGES / name).read_bytes(), {
            "Content-Security-Policy": self.policy, "Referrer-Policy": "no-referrer"})  # fmt: skip

    def script(self, handler: BaseHTTPRequestHandler, config: Mapping[str, Any]) -> None:
        body = f"window.CONFIG = {json.dumps(config, separators=(',', ':'), ensure_ascii=False)};\n"
        self.answer(handler, 200, "text/javascript", body.encode())

    def json(self, handler: BaseHTTPRequestHandler, status: int, data: Mapping[str, Any]) -> None:
        self.answer(handler, status, "application/json", json.dumps(data).encode())

    def redirect(self, handler: BaseHTTPRequestHandler, location: str) -> None:
        handler.send_response(303)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def answer(self, handler: BaseHTTPRequestHandler, status: int, kind: str, body: bytes,
               extra: Mapping[str, str] | None = None) -> None:  # fmt: skip
        send_answer(handler, status, kind, body, extra)  # (as the suite's own checkout server answers)
