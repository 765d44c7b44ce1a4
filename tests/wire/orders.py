"""Earlier orders that follow-up requests refer to, made with hand-built requests only.

A sale with CVV2 123 is approved at once on the simulator; CVV2 321 starts a 3-D Secure 2.x
authentication (method step, then challenge); the 1.0.2 test card 4444000022224444 goes to the
1.0.2 ACS (behaviour 6).  The payer's ACS answer is posted like a browser would, and the CRes or
PaRes read from the auto-submitting form the ACS hands back (behaviour 5).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from html import unescape
from html.parser import HTMLParser

from tests.wire.gateway import Answer, Gateway
from tests.wire.table import wire

FINAL = ("approved", "declined", "filtered", "error")
CHALLENGE_PASSWORD = "hint"  # behaviour 6: the password that approves the simulator's challenge
V1_CARD = "4444000022224444"
CALLBACK_URL = "http://127.0.0.1:9/callback"  # a closed loopback port: deliveries fail at once, quietly

SAMPLE: dict[str, str] = {
    "order_desc": "Wire test order",
    "amount": "10.00",
    "currency": "EUR",
    "address1": "1 Test Street",
    "city": "Berlin",
    "zip_code": "10115",
    "country": "DE",
    "phone": "+4930123456",
    "email": "payer@example.com",
    "ipaddress": "203.0.113.7",
    "card_printed_name": "JOHN SMITH",
    "credit_card_number": "4538977399606732",
    "expire_month": "12",
    "expire_year": "2099",
    "cvv2": "123",
    "redirect_url": "https://merchant.example/return",
    "comment": "wire test",
    "threeDSCompInd": "Y",
    "account_number": "DE89370400440532013000",
    "destination-card-no": "4444555566661111",
}


def new_id(prefix: str = "wire") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


@dataclass
class Order:
    """An order the gateway knows: its ids, the answer that created it, and what the tests learned."""

    client_orderid: str
    orderid: str
    created: Answer
    extra: dict[str, str] = field(default_factory=dict)


class _Inputs(HTMLParser):
    """The ``<input name=... value=...>`` pairs of an HTML page (the ACS's auto-submitting form)."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "input" and named.get("name"):
            self.values[str(named["name"])] = named.get("value") or ""


def form_inputs(html: str) -> dict[str, str]:
    parser = _Inputs()
    parser.feed(html)
    return parser.values


class Orders:
    """Makes prerequisite orders through ``gateway`` (JSON mode) and waits on their status."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    # --- payments ------------------------------------------------------------------------------

    def payment(self, kind: str = "sale", **overrides: str) -> Order:
        op = wire(kind)
        values = {**SAMPLE, "client_orderid": new_id(kind), **overrides}
        names = [*op.mandatory, *overrides]  # optional fields given as overrides are sent too
        fields = {name: values[name] for name in dict.fromkeys(names) if name != "control"}
        answer = self.gateway.post(op, self.gateway.with_control(op, fields))
        assert answer.http_status == 200 and answer.type == "async-response", answer.describe()
        return Order(fields["client_orderid"], answer["paynet-order-id"], answer)

    def approved(self, kind: str = "sale", **overrides: str) -> Order:
        order = self.payment(kind, **overrides)
        self.wait(order, lambda status: status["status"] in FINAL)
        return order

    def status(self, order: Order, *, json_mode: bool = True) -> Answer:
        op = wire("status")
        fields = {"login": self.gateway.login, "client_orderid": order.client_orderid, "orderid": order.orderid}
        return self.gateway.post(op, self.gateway.with_control(op, fields), json_mode=json_mode)

    def wait(self, order: Order, done: Callable[[Answer], bool], timeout: float = 10.0) -> Answer:
        """Poll the status (every 20 ms) until ``done`` says so; fail with the last answer at the deadline."""
        deadline = time.monotonic() + timeout
        while True:
            answer = self.status(order)
            assert answer.type == "status-response", answer.describe()
            if done(answer):
                return answer
            assert time.monotonic() < deadline, f"status did not get there in {timeout} s: {answer.describe()}"
            time.sleep(0.02)

    def card_ref(self) -> Order:
        """An approved sale tokenised by create-card-ref: ``extra['cardrefid']``."""
        order = self.approved()
        op = wire("create-card-ref")
        fields = {"login": self.gateway.login, "client_orderid": order.client_orderid, "orderid": order.orderid}
        answer = self.gateway.post(op, self.gateway.with_control(op, fields))
        assert answer.type == "create-card-ref-response" and answer.fields.get("card-ref-id"), answer.describe()
        order.extra["cardrefid"] = answer["card-ref-id"]
        return order

    # --- 3-D Secure ------------------------------------------------------------------------------

    def tds_method(self) -> Order:
        """A sale with CVV2 321 waiting for its 3-D Secure method result (no ``redirect-to`` yet), whose method
        URL the payer's browser has loaded (the hidden frame of the status's ``html``): ``Y`` may be uploaded."""
        order = self.payment("sale", cvv2="321", redirect_url=SAMPLE["redirect_url"])
        status = self.wait(order, lambda s: s["status"] != "processing" or bool(s.fields.get("html")))
        assert status["status"] == "processing" and "redirect-to" not in status.fields, status.describe()
        frame = re.search(r'<iframe[^>]*\ssrc="([^"]+)"', status["html"])
        assert frame, status.describe()
        loaded = self.gateway.session.get(unescape(frame.group(1)), timeout=30)
        assert loaded.status_code == 200, loaded.text[:400]
        return order

    def upload_method(self, order: Order, indicator: str = "Y") -> Answer:
        op = wire("upload-method-url-result")
        fields = {
            "login": self.gateway.login,
            "client-order-id": order.client_orderid,
            "orderid": order.orderid,
            "threeDSCompInd": indicator,
        }
        return self.gateway.post(op, self.gateway.with_control(op, fields))

    def tds_challenge(self) -> Order:
        """A CVV2 321 sale at its ACS challenge: ``extra['acs']`` is the ``redirect-to`` address."""
        order = self.tds_method()
        uploaded = self.upload_method(order)
        assert uploaded.type == "async-response", uploaded.describe()
        status = self.wait(order, lambda s: "redirect-to" in s.fields or s["status"] != "processing")
        order.extra["acs"] = status["redirect-to"]
        return order

    def tds_v1(self) -> Order:
        """A sale with the 1.0.2 test card at its ACS: ``extra['acs']`` is the ``redirect-to`` address."""
        order = self.payment("sale", credit_card_number=V1_CARD, amount="1.00", redirect_url=SAMPLE["redirect_url"])
        status = self.wait(order, lambda s: "redirect-to" in s.fields or s["status"] != "processing")
        order.extra["acs"] = status["redirect-to"]
        return order

    def acs_result(self, order: Order, name: str) -> str:
        """The payer answers the ACS with the approving password; the result the merchant receives."""
        page = self.gateway.session.post(
            order.extra["acs"] + "/answer", data={"password": CHALLENGE_PASSWORD}, timeout=30
        )
        assert page.status_code == 200, page.text[:400]
        inputs = {key.lower(): value for key, value in form_inputs(page.text).items()}
        assert name.lower() in inputs, f"no {name} in the ACS answer page: {sorted(inputs)}"
        return inputs[name.lower()]

    # --- payouts ---------------------------------------------------------------------------------

    def payout_check(self) -> Order:
        op = wire("payout-check")
        fields = {
            "client_orderid": new_id("check"),
            "amount": SAMPLE["amount"],
            "currency": SAMPLE["currency"],
            "credit_card_number": SAMPLE["credit_card_number"],
        }
        answer = self.gateway.post(op, fields)
        assert answer.http_status == 200 and answer.type == "async-response", answer.describe()
        order = Order(fields["client_orderid"], answer["paynet-order-id"], answer)
        self.wait(order, lambda status: status["status"] in FINAL)
        return order
