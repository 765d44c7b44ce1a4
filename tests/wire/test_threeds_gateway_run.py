"""Behaviour section 12 by hand-built requests (issue 36, points 1 and 4): the gateway runs 3-D Secure itself, and
the method window runs from the method step.

Requests come from ``tests/wire/table.py`` and are signed by ``tests/independent.py``; the payer's browser is
``tests/wire/browser.py`` (plain ``requests``: frames loaded, self-submitting forms submitted, nothing of gatekit's
payer).  The merchant does what the family's shop plugins do: show the status answer's ``html``, poll ``status``,
upload nothing.  The clock is moved through the control API (``POST /_sim/clock/advance``).

- [S12] "Gateway-run (the default): the merchant shows the status answer's html (or sends the payer to
  redirect-to) and does nothing else.  That page runs the 3-D Secure 2 method step by itself (a hidden frame, then
  it goes on without the merchant, within the 10 s window) and takes the payer to the challenge when there is one;
  the access-control server returns the payer to the gateway, which applies the result itself.  The order becomes
  final (approved or declined) with no upload call, and the payer's browser is POSTed to redirect_url with the
  final status and control (section 5).  Callbacks go out as for any sale."
- [S12] "Merchant-run (spec 4.2): ... reports each step with the upload operations; the gateway then waits for them.
  [sim] an order on which the merchant has uploaded a step result is merchant-run from then on."
- [S12] "The 3-D Secure method window (10 s, spec 4.2) runs from the moment the method step starts (the payer's
  browser loads the method URL), not from the sale.  An upload of N when that window has passed agrees with what
  the gateway applied: it is answered, not refused."
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import pytest
import requests

from tests import independent
from tests.wire.browser import Browser, Shown
from tests.wire.gateway import CONTROL_KEY, Answer, Gateway
from tests.wire.orders import CHALLENGE_PASSWORD, FINAL, SAMPLE, V1_CARD, Order, Orders
from toolkit.callbacks import CallbackReceiver
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import default_settings

METHOD_WINDOW = 10  # seconds (spec 4.2: threeDSCompInd N is "not completed within 10 seconds")


@pytest.fixture(scope="module")
def receiver() -> Iterator[CallbackReceiver]:
    """The merchant's callback endpoint (it only receives; nothing of it signs or sends a request)."""
    with CallbackReceiver(CONTROL_KEY) as running:
        yield running


def advance(simulator: SimulatorServer, seconds: float) -> None:
    """The control API moves the simulator's clock; what falls due is done before it answers."""
    answer = requests.post(simulator.root_url + "/_sim/clock/advance", json={"seconds": seconds}, timeout=30)
    assert answer.status_code == 200, answer.text


def shop_sale(orders: Orders, receiver: CallbackReceiver, kind: str = "sale", **card: str) -> Order:
    """What a shop plugin sends: a sale (or preauth) with the card, its redirect_url and server_callback_url."""
    fields = {"redirect_url": receiver.redirect_url, "server_callback_url": receiver.callback_url, **card}
    return orders.payment(kind, **fields)


def shown_html(orders: Orders, order: Order) -> Answer:
    """Poll status (as the plugins do) until it hands the payer something to show, or is final."""
    return orders.wait(order, lambda s: s["status"] != "processing" or bool(s.fields.get("html")))


def signed(fields: dict[str, str]) -> bool:
    """Behaviour 5: control = SHA-1(status + orderid + client_orderid + merchant_control_key)."""
    expected = independent.sha1_hex(fields["status"] + fields["orderid"] + fields["client_orderid"] + CONTROL_KEY)
    return fields.get("control") == expected


def through_three_ds(orders: Orders, order: Order, receiver: CallbackReceiver, password: str | None) -> Shown:
    """The payer's browser shows the status html, answers the ACS if it asks, and is about to go back."""
    status = shown_html(orders, order)
    assert status["status"] == "processing" and status.fields.get("html"), status.describe()
    browser = Browser(receiver.redirect_url)
    shown = browser.show(status["html"])
    if shown.challenge is not None:
        assert password is not None, f"a challenge was shown: {shown.url}"
        shown = browser.answer(shown, password)
    assert shown.to_merchant is not None, f"the payer did not come back: {shown.url}\n{shown.html[:800]}"
    return shown


def uploads(simulator: SimulatorServer, order: Order) -> list[str]:
    """The 3-D Secure uploads the simulator's journal holds for the order (the merchant sent none)."""
    answer = requests.get(simulator.root_url + "/_sim/journal", params={"limit": 500}, timeout=30)
    entries = answer.json()["entries"]
    return [
        e["operation"]
        for e in entries
        if e["operation"].startswith("upload") and str(e.get("orderid")) == order.orderid
    ]


# --- point 1: the gateway runs 3-D Secure itself ------------------------------------------------------------


@pytest.mark.parametrize(
    ("password", "final"), [(CHALLENGE_PASSWORD, "approved"), ("not-the-password", "declined")], ids=["right", "wrong"]
)
def test_a_shop_that_shows_the_html_and_polls_gets_a_final_sale_without_any_upload(
    simulator: SimulatorServer, orders: Orders, receiver: CallbackReceiver, password: str, final: str
) -> None:
    order = shop_sale(orders, receiver, cvv2="321")
    shown = through_three_ds(orders, order, receiver, password)
    back = shown.to_merchant
    assert back is not None and back.method == "post"
    assert (back.fields["status"], back.fields["orderid"]) == (final, order.orderid), back.fields
    assert signed(back.fields), back.fields
    assert all(name not in {k.lower() for k in back.fields} for name in ("cres", "pares")), back.fields
    status = orders.wait(order, lambda s: True)  # one status: already final, nothing uploaded
    assert status["status"] == final, status.describe()
    assert uploads(simulator, order) == []
    callback = receiver.wait_for_callback(orderid=order.orderid, timeout=10)
    assert (callback.params["status"], callback.control_ok) == (final, True), callback.summary()


def test_the_gateway_s_own_hops_are_on_the_payer_s_way(orders: Orders, receiver: CallbackReceiver) -> None:
    """Method URL in a frame, the page goes on to the gateway, the gateway sends the payer to the ACS, the ACS
    returns the payer to the gateway, the gateway sends the payer back to the merchant."""
    order = shop_sale(orders, receiver, cvv2="321")
    shown = through_three_ds(orders, order, receiver, CHALLENGE_PASSWORD)
    paths = [url.split("/paynet", 1)[-1].rsplit("/", 1)[0] for _, url, _ in shown.visited]
    assert paths[0] == "/3ds/v2/method", paths  # the hidden frame
    gateway_hops = [path for path in paths if path == "/3ds/return"]
    assert len(gateway_hops) == 2, paths  # after the method step, after the ACS
    assert paths.index("/3ds/v2/acs") < len(paths) - 1, paths


@pytest.mark.parametrize(("cvv2", "final"), [("331", "approved"), ("332", "declined"), ("111", "approved")])
def test_frictionless_outcomes_end_without_a_challenge_or_an_upload(
    simulator: SimulatorServer, orders: Orders, receiver: CallbackReceiver, cvv2: str, final: str
) -> None:
    order = shop_sale(orders, receiver, cvv2=cvv2)
    status = shown_html(orders, order)
    if cvv2 == "111":  # not enrolled: final at once, nothing for the payer to show (behaviour 6)
        assert status["status"] == final and "html" not in status.fields, status.describe()
    else:
        shown = through_three_ds(orders, order, receiver, None)
        assert shown.to_merchant is not None and shown.to_merchant.fields["status"] == final
        assert signed(shown.to_merchant.fields)
        assert not any("/3ds/v2/acs/" in url for _, url, _ in shown.visited), shown.visited
    assert orders.wait(order, lambda s: True)["status"] == final
    assert uploads(simulator, order) == []


def test_a_preauth_by_card_is_run_by_the_gateway_too(orders: Orders, receiver: CallbackReceiver) -> None:
    order = shop_sale(orders, receiver, "preauth", cvv2="321")
    shown = through_three_ds(orders, order, receiver, CHALLENGE_PASSWORD)
    assert shown.to_merchant is not None and shown.to_merchant.fields["status"] == "approved"
    status = orders.wait(order, lambda s: True)
    assert (status["status"], status["transaction-type"]) == ("approved", "preauth"), status.describe()


@pytest.mark.parametrize(("amount", "final"), [("1.00", "approved"), ("1.02", "declined")])
def test_a_three_ds_1_sale_is_run_by_the_gateway(
    simulator: SimulatorServer, orders: Orders, receiver: CallbackReceiver, amount: str, final: str
) -> None:
    order = shop_sale(orders, receiver, credit_card_number=V1_CARD, amount=amount)
    shown = through_three_ds(orders, order, receiver, CHALLENGE_PASSWORD)
    assert shown.to_merchant is not None and shown.to_merchant.fields["status"] == final
    assert signed(shown.to_merchant.fields)
    assert orders.wait(order, lambda s: True)["status"] == final
    assert uploads(simulator, order) == []


def test_a_merchant_that_uploads_the_method_result_runs_the_rest_itself(
    orders: Orders, receiver: CallbackReceiver
) -> None:
    """Merchant-run stays as it was: after the upload the ACS hands the CRes to redirect_url, the order waits."""
    order = orders.tds_method()
    assert orders.upload_method(order, "Y").type == "async-response"
    challenge = orders.wait(order, lambda s: "redirect-to" in s.fields)
    browser = Browser(SAMPLE["redirect_url"])
    shown = browser.show(challenge["html"])
    shown = browser.answer(shown, CHALLENGE_PASSWORD)
    assert shown.to_merchant is not None, shown.html[:600]
    assert shown.to_merchant.fields["status"] == "processing" and shown.to_merchant.fields.get("cres")
    assert orders.wait(order, lambda s: True)["status"] == "processing"  # the gateway waits for the upload


def test_a_slow_decision_keeps_the_payer_at_the_gateway_until_it_is_final(receiver: CallbackReceiver) -> None:
    """With a latency the result is decided after the ACS: the gateway's page waits (it refreshes itself) and sends
    the payer back with the final status, never with ``processing``."""
    settings = dataclasses.replace(default_settings(), latency=0.3)
    with SimulatorServer(settings) as slow:
        gateway = Gateway(slow.base_url)
        try:
            orders = Orders(gateway)
            order = shop_sale(orders, receiver, cvv2="321")
            shown = through_three_ds(orders, order, receiver, CHALLENGE_PASSWORD)
        finally:
            gateway.close()
    assert shown.to_merchant is not None and shown.to_merchant.fields["status"] == "approved", shown.to_merchant


# --- point 4: the method window runs from the method step ---------------------------------------------------


def load_method(orders: Orders, order: Order) -> None:
    """Only the hidden frame of the status html: the payer's browser loads the method URL (merchant-run)."""
    status = shown_html(orders, order)
    frame = status.fields["three-ds-method-url"]
    assert orders.gateway.session.get(frame, timeout=30).status_code == 200


def until(orders: Orders, order: Order, done: Callable[[Answer], bool]) -> Answer:
    return orders.wait(order, done, timeout=10)


def test_the_method_window_does_not_run_before_the_payer_s_browser_loads_the_method_url(
    simulator: SimulatorServer, orders: Orders, receiver: CallbackReceiver
) -> None:
    order = shop_sale(orders, receiver, cvv2="321")
    shown_html(orders, order)
    advance(simulator, METHOD_WINDOW + 5)  # longer than the window, but the method step has not started
    status = orders.wait(order, lambda s: True)
    assert status["status"] == "processing" and "redirect-to" not in status.fields, status.describe()
    assert status.fields.get("three-ds-method-url"), status.describe()  # the method step still waits for the payer
    load_method(orders, order)
    advance(simulator, METHOD_WINDOW / 2)
    assert "redirect-to" not in orders.wait(order, lambda s: True).fields  # within the window
    advance(simulator, METHOD_WINDOW / 2 + 1)
    status = until(orders, order, lambda s: "redirect-to" in s.fields or s["status"] in FINAL)
    assert (status["status"], status.fields.get("three-ds-comp-ind")) == ("processing", "N"), status.describe()


def test_an_n_uploaded_after_the_window_has_passed_is_answered(simulator: SimulatorServer, orders: Orders) -> None:
    order = orders.tds_method()  # the method URL loaded: the window runs
    advance(simulator, METHOD_WINDOW + 1)
    answer = orders.upload_method(order, "N")
    assert answer.http_status == 200 and answer.type == "async-response", answer.describe()
    assert answer["paynet-order-id"] == order.orderid
    status = until(orders, order, lambda s: "redirect-to" in s.fields or s["status"] in FINAL)
    assert status.fields.get("three-ds-comp-ind") == "N", status.describe()


def test_a_y_uploaded_after_the_window_has_passed_is_still_refused(simulator: SimulatorServer, orders: Orders) -> None:
    """Only the N the gateway applied is agreed with: a Y after the window says what did not happen."""
    order = orders.tds_method()
    advance(simulator, METHOD_WINDOW + 1)
    answer = orders.upload_method(order, "Y")
    assert answer.type in ("validation-error", "error"), answer.describe()
    assert "window" in answer.message, answer.describe()


def test_a_method_step_never_started_declines_when_the_payer_s_time_is_over(
    simulator: SimulatorServer, orders: Orders, receiver: CallbackReceiver
) -> None:
    """[sim] The payer never came (nothing loaded the method URL): the order does not wait for ever."""
    order = shop_sale(orders, receiver, cvv2="321")
    advance(simulator, default_settings().challenge_timeout + 1)
    callback = receiver.wait_for_callback(orderid=order.orderid, timeout=10)
    assert callback.params["status"] == "declined" and callback.control_ok, callback.summary()
