"""The merchant's side of the gateway's flows, one call per business step.

Shared by the certification steps, the notebooks and the explorer so that each of them stays
thin: ``Merchant`` sends orders built from ``toolkit.testdata``, waits for outcomes (woken by the
callback receiver when callbacks can arrive), and carries the payer's CRes / PaRes to the
3-D Secure upload operations.  A Hosted Fields order (``pay_with_token``: a v4 sale of the card the payer
typed into the gateway's iframes) is followed with the v4 status, as the merchant examples poll it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from html import escape
from typing import Any

from toolkit.callbacks import CallbackReceiver, OrderWaker, Received
from toolkit.client import GatewayClient
from toolkit.masking import mask_fields
from toolkit.models import (
    AsyncResponse,
    CardRefResponse,
    FormResponse,
    HostedSaleResponse,
    RecurringPaymentResponse,
    Status,
    StatusResponse,
)
from toolkit.payer.forms import Page
from toolkit.testdata import orders
from toolkit.testdata.cards import Card
from toolkit.waiting import PollAttempt

METHOD_INDICATORS = {"completed": "Y", "timed out": "N", "absent": "U"}
# seconds the gateway waits for the method step's report before it sets N (spec 4.2); the window runs from the
# method step (the payer's browser loading the method URL), not from the sale (behaviour 12)
METHOD_WINDOW = 10
VOID_COMMENT = "cancelled by the merchant"


class FlowError(RuntimeError):
    """An order is not in the state the next step of the flow needs; the message says what it is."""


@dataclass
class Order:
    """An order as the merchant sent it: the operation, the fields (card data masked) and the answer."""

    operation: str
    ack: AsyncResponse
    fields: dict[str, str] = field(repr=False)
    card: Card | None = None

    @property
    def orderid(self) -> str:
        return self.ack.orderid

    @property
    def client_orderid(self) -> str:
        return self.ack.client_orderid or self.fields.get("client_orderid", "")

    @property
    def redirect_url(self) -> str:
        return self.ack.redirect_url if isinstance(self.ack, FormResponse) else ""

    def __repr__(self) -> str:
        return f"Order({self.operation}, orderid={self.orderid}, client_orderid={self.client_orderid})"


class Merchant:
    """The merchant's back end: a client, where the gateway calls back, and how waits are reported."""

    def __init__(
        self,
        client: GatewayClient,
        receiver: CallbackReceiver | None = None,
        *,
        callback_url: str | None = None,
        on_poll: Callable[[PollAttempt], None] | None = None,
    ) -> None:
        self.client = client
        self.receiver = receiver
        self.callback_url = callback_url
        self.on_poll = on_poll

    # --- sending orders ---------------------------------------------------------------------------

    def _urls(self, tag: str) -> dict[str, str]:
        urls = self._callback()
        if self.receiver is not None:
            urls["redirect_url"] = self.receiver.redirect_url_for(tag)
        return urls

    def _send(self, operation: str, fields: dict[str, Any], card: Card | None = None) -> Order:
        ack = self.client.call(operation, fields)
        assert isinstance(ack, AsyncResponse)
        return Order(operation, ack, mask_fields({k: str(v) for k, v in fields.items()}), card)

    def pay(self, operation: str, card: Card, amount: Decimal, currency: str = "EUR", **overrides: Any) -> Order:
        """sale or preauth with this card (its CVV2 chooses the outcome)."""
        builder = orders.sale_fields if operation == "sale" else orders.preauth_fields
        fields = {**builder(amount=amount, currency=currency, card=card), **self._urls(operation), **overrides}
        return self._send(operation, fields, card)

    def ephemeral_ticket(self) -> str:
        """create-ephemeral-ticket (hosted-fields.md 3.2): a fresh single-use ticket for one load of the merchant's
        checkout page, which hands it to the gateway's SDK."""
        return self.client.create_ephemeral_ticket().ephemeral_ticket

    def pay_with_token(
        self, token: str, amount: Decimal, currency: str = "EUR", card: Card | None = None, **overrides: Any
    ) -> Order:
        """sale_v4 of the card behind ``hosted_fields_token`` (hosted-fields.md 3.3); ``card``: the card the payer
        typed into the gateway's iframes (its CVV2 chose the outcome), kept masked with the order."""
        fields = {**orders.hosted_sale_fields(token, amount=amount, currency=currency), **self._urls("sale_v4"),
                  **overrides}  # fmt: skip
        return self._send("sale_v4", fields, card)

    def verify_account(self, card: Card) -> Order:
        fields = {**orders.verification_fields(card=card), **self._urls("verification")}
        return self._send("account_verification", fields, card)

    def open_form(self, operation: str, amount: Decimal, currency: str = "EUR") -> Order:
        """A hosted-form operation (``sale-form``, ``payout-form``...): the answer carries the page address."""
        name = operation.replace("-", "_")
        fields = {**orders.form_fields(name, amount=amount, currency=currency), **self._urls(name)}
        return self._send(name, fields)

    def capture(self, order: Order, amount: Decimal | None = None) -> Order:
        return self._follow_up("capture", order, amount)

    def return_(self, order: Order, amount: Decimal | None = None) -> Order:
        return self._follow_up("return", order, amount)

    def void(self, order: Order, amount: Decimal | None = None, comment: str = VOID_COMMENT) -> Order:
        """void (``comment`` is mandatory on the gateway); an ``amount`` is sent only to see it refused."""
        return self._follow_up("void", order, amount, comment=comment)

    def _follow_up(self, operation: str, order: Order, amount: Decimal | None, **extra: str) -> Order:
        """A later transaction of ``order``: its callback goes to the order's ``notify_url`` (section 10)."""
        fields: dict[str, Any] = {"client_orderid": order.client_orderid, "orderid": order.orderid, **extra}
        if amount is not None:
            fields.update(amount=amount, currency=order.fields.get("currency", "EUR"))
        validate = not (operation == "void" and amount is not None)
        ack = self.client.call(operation, fields, validate=validate)
        assert isinstance(ack, AsyncResponse)
        return Order(operation, ack, mask_fields({k: str(v) for k, v in fields.items()}))

    def attempt(self, operation: str, order: Order, **changes: Any) -> Order:
        """A follow-up of ``order`` with fields changed as given, sent without the client's own checks, to
        see what the gateway says: ``login=""`` leaves the login out, ``client_orderid=...`` names another.
        """
        comment = {"comment": VOID_COMMENT} if operation == "void" else {}
        fields = {"client_orderid": order.client_orderid, "orderid": order.orderid, **comment, **changes}
        ack = self.client.call(operation, fields, validate=False)
        assert isinstance(ack, AsyncResponse)
        return Order(operation, ack, mask_fields({k: str(v) for k, v in fields.items()}))

    def card_ref(self, order: Order, version: str = "v2") -> CardRefResponse:
        operation = "create_card_ref_v4" if version == "v4" else "create_card_ref"
        response = self.client.call(operation, client_orderid=order.client_orderid, orderid=order.orderid)
        assert isinstance(response, CardRefResponse)
        return response

    def rebill(
        self,
        cardrefid: str,
        outcome: str = "approved",
        amount: Decimal | None = None,
        *,
        then_try: tuple[Decimal, ...] = (),
        operation: str = "make_rebill",
    ) -> Order:
        """A rebill of a card reference (``make_rebill``, ``make_rebill_sale``, or ``make_rebill_preauth``: a hold
        to capture, void or return); ``then_try``: the amounts the gateway tries in turn when the amount is
        declined (``enumerate_amounts``, behaviour section 10)."""
        extra = {"enumerate_amounts": ",".join(format(a, "f") for a in then_try)} if then_try else {}
        fields = orders.rebill_fields(
            cardrefid, outcome=outcome, amount=amount, operation=operation, **extra, **self._callback()
        )
        return self._send(operation, dict(fields))

    def transfer_by_ref(
        self, destination: str, source: str | None, amount: Decimal | None = None, outcome: str = "approved"
    ) -> Order:
        """transfer-by-ref (v2): from the stored card ``source`` (None: from the merchant) to ``destination``."""
        fields = orders.transfer_by_ref_fields(destination, source, outcome, amount, **self._callback())
        return self._send("transfer_by_ref", dict(fields))

    def deposit(self, card: Card, amount: Decimal | None = None, outcome: str = "approved") -> Order:
        """transfer-by-ref (v4): a deposit to the card number of ``card`` (the deposit-to-card example)."""
        fields = orders.deposit_fields(outcome, amount, destination=card.number, **self._callback())
        return self._send("transfer_by_ref_v4", dict(fields), card)

    def recurring(self, cardrefid: str, amount: Decimal, period: str, interval: int = 1) -> RecurringPaymentResponse:
        fields = orders.recurring_fields(cardrefid, amount=amount, period=period, interval=interval, **self._callback())
        response = self.client.call("create_recurring_payment", dict(fields))
        assert isinstance(response, RecurringPaymentResponse)
        return response

    def payout(
        self, operation: str, amount: Decimal | None, card: Card | None = None, outcome: str = "approved"
    ) -> Order:
        """``payout`` (v2, HMAC-SHA1), ``payout_check`` (v4 two-step) or ``payout_v4`` (v4 one-step, RSA-SHA256)
        to a destination card."""
        fields = orders.payout_fields(
            outcome=outcome, amount=amount, operation=operation, card=card, **self._callback()
        )
        return self._send(operation, dict(fields), card)

    def payout_pay(self, check: Order) -> Order:
        return self._follow_up("payout_pay", check, None)

    def _callback(self) -> dict[str, str]:
        """Where the gateway calls back: the initial transaction (``server_callback_url``) and every later
        one of the order (``notify_url``, behaviour section 10); the simulator calls one address once.
        """
        return {"server_callback_url": self.callback_url, "notify_url": self.callback_url} if self.callback_url else {}

    # --- waiting ----------------------------------------------------------------------------------

    def _waiting(self, order: Order) -> dict[str, Any]:
        """How every wait polls: reported through ``on_poll``, ended early by a callback for the order."""
        waker: OrderWaker | None = None
        if self.receiver is not None and self.callback_url and order.orderid:
            waker = self.receiver.waker(orderid=order.orderid)
        return {"waker": waker, "on_attempt": self.on_poll}

    def _wait(self, order: Order, until: Callable[[StatusResponse], bool], awaiting: str) -> StatusResponse:
        """Poll the order's status until ``until`` holds: ``status_v4`` for a Hosted Fields order, else ``status``."""
        if isinstance(order.ack, HostedSaleResponse):
            return self.client.wait_for_status_v4(order.ack, until=until, awaiting=awaiting, **self._waiting(order))
        return self.client.wait_for_status(order.ack, until=until, awaiting=awaiting, **self._waiting(order))

    def final_status(self, order: Order) -> StatusResponse:
        """Poll status on the profile's schedule; a callback for the order ends the wait early."""
        return self._wait(order, lambda r: r.is_final, "final status")

    def approved_status(self, order: Order) -> StatusResponse:
        """The final status, which must be approved: FlowError (with the gateway's reason) otherwise."""
        status = self.final_status(order)
        if status.status is not Status.APPROVED:
            reason = f": {status.error_message}" if status.error_message else ""
            raise FlowError(f"{order} is {status.status.value}, not approved{reason}")
        return status

    def settled_status(self, order: Order) -> StatusResponse:
        """Wait for a final status, or ``unknown`` (the acquirer could not be reached)."""
        return self._wait(order, lambda r: r.status is Status.UNKNOWN or r.is_final, "unknown or final status")

    def payer_step(self, order: Order) -> StatusResponse:
        """Wait until the payer must act (3-D Secure) or the outcome is final."""
        return self._wait(order, lambda r: r.is_final or r.needs_payer, "payer step or final status")

    def current_status(self, order: Order) -> StatusResponse:
        """Wait until the order is final, waits for the payer, or is ``unknown``: where it stands for now."""
        return self._wait(
            order,
            lambda r: r.is_final or r.needs_payer or r.status is Status.UNKNOWN,
            "final, payer step or unknown status",
        )

    def status_by_client_orderid(self, order: Order) -> StatusResponse:
        return self.client.status(client_orderid=order.client_orderid)

    def order_status(self, order: Order, *, by_group: bool = False) -> StatusResponse:
        """``status`` of the order (no ``by-request-sn``): its latest transaction, whatever it is; ``by_group``
        asks at the endpoint group's address (``status/group/{id}``, as public integrations poll)."""
        return self.client.status(client_orderid=order.client_orderid, orderid=order.orderid, use_group=by_group)

    def request_status(self, order: Order) -> StatusResponse:
        """``status`` of the request that made ``order`` (``by-request-sn``: its serial-number)."""
        return self.client.status(
            client_orderid=order.client_orderid, orderid=order.orderid, by_request_sn=order.ack.serial_number
        )

    # --- 3-D Secure -------------------------------------------------------------------------------

    def report_method(self, order: Order, how: str) -> AsyncResponse:
        """upload-method-url-result: ``completed`` (Y), ``timed out`` (N) or ``absent`` (U)."""
        return self.client.upload_method_url_result(
            client_orderid=order.client_orderid, orderid=order.orderid, threeDSCompInd=METHOD_INDICATORS[how]
        )

    def redirect_for(self, order: Order, timeout: float = 10.0) -> Received:
        """The payer's browser came back to the merchant (POST to redirect_url) for this order."""
        if self.receiver is None:
            raise FlowError(f"{order}: the merchant has no callback receiver, so it cannot see the payer's redirect")
        return self.receiver.wait_for_redirect(orderid=order.orderid, timeout=timeout)

    def upload_challenge_result(self, order: Order, redirect: Received) -> AsyncResponse:
        """Take the CRes from the payer's redirect and upload it (upload-cres-result)."""
        return self.client.upload_cres_result(
            client_orderid=order.client_orderid, orderid=order.orderid, cres=redirect.params["cres"]
        )

    def own_authentication_page(self, order: Order, status: StatusResponse) -> str:
        """Merchant-run 3-D Secure 1.0.2 (behaviour 12): the merchant's own page, which posts the status html's PaReq
        and MD to the ACS with the merchant's own ``TermUrl`` (its ``redirect_url``): the ACS hands the PaRes to the
        merchant, who uploads it (``upload_authentication_result``).  Shown as is, the status html would have the
        gateway apply the PaRes itself (gateway-run)."""
        page = Page.parse(status.redirect_to or "about:blank", 200, status.html)
        form = next((form for form in page.forms if "PaReq" in form.fields), None)
        if form is None:
            raise FlowError(f"{order}: the status carries no 3-D Secure 1.0.2 PaReq form: {status.raw}")
        fields = {**form.fields, "TermUrl": order.fields.get("redirect_url", "")}
        inputs = "".join(f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">' for k, v in fields.items())
        return (
            f'<!doctype html><html><body><form id="merchant-acs" method="post" action="{escape(form.action)}">'
            f'{inputs}</form><script>document.getElementById("merchant-acs").submit();</script></body></html>'
        )

    def upload_authentication_result(self, order: Order, redirect: Received) -> AsyncResponse:
        """Take the PaRes (and MD) from the payer's redirect and upload it (upload-pares-result)."""
        params = redirect.params
        return self.client.upload_pares_result(
            client_orderid=order.client_orderid, orderid=order.orderid, pares=params["pares"], md=params.get("md", "")
        )
