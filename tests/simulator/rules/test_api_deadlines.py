"""Deadlines on the simulator's clock (behaviour section 11): the 3-D Secure method window, a challenge's time
limit, a 1.0.2 authentication's, a hosted page's expiry.  When one passes the order moves on and its callback
goes out, whether or not anyone asks for status: no test here sends a status request.  What the simulator
holds is read through its control API; the outcome arrives at a callback receiver.

Two ways to pass a deadline: the control API advances the clock (the scheduler is woken), or real time runs
out with short windows configured (the scheduler wakes by itself at the deadline it was given).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.models import AsyncResponse
from toolkit.simcontrol import SimulatorControl
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import default_settings
from toolkit.simulator.web import urls
from toolkit.testdata import card_for, form_fields, sale_fields, three_ds_v1_card

SETTINGS = default_settings()


def three_ds_sale(client: GatewayClient, receiver: CallbackReceiver, outcome: str = "3ds-challenge") -> AsyncResponse:
    fields = sale_fields(card=card_for(outcome), redirect_url=receiver.redirect_url)
    return client.sale(fields, server_callback_url=receiver.callback_url)


def upload_method(client: GatewayClient, ack: AsyncResponse, indicator: str) -> AsyncResponse:
    return client.upload_method_url_result(
        client_orderid=ack.client_orderid, orderid=ack.orderid, threeDSCompInd=indicator
    )


def load_method_url(client: GatewayClient, control: SimulatorControl, ack: AsyncResponse) -> None:
    """The payer's browser loads the method URL: the method step starts, and its window runs (behaviour 12)."""
    token = control.transaction(ack.orderid)["tds_token"]
    assert client.session.get(urls.method_url(client.config.base_url, token), timeout=10).status_code == 200


def tds_state(control: SimulatorControl, ack: AsyncResponse) -> tuple[str, str]:
    """(status, 3-D Secure step) as the simulator holds them (its control API, not the status operation)."""
    tx = control.transaction(ack.orderid)
    return tx["status"], tx["tds_state"]


# --- the clock advanced through the control API --------------------------------------------------------------


def test_a_method_window_that_passes_moves_the_order_to_its_challenge_then_the_limit_declines_it(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    ack = three_ds_sale(client, receiver)
    assert tds_state(control, ack) == ("processing", "method")
    load_method_url(client, control, ack)
    control.advance_clock(SETTINGS.method_timeout + 0.5)
    control_wait(lambda: tds_state(control, ack) == ("processing", "challenge"))
    assert control.transaction(ack.orderid)["tds_comp_ind"] == "N"  # spec 4.2: not completed within 10 s
    assert receiver.callbacks(orderid=ack.orderid) == []  # not final yet: no callback
    control.advance_clock(SETTINGS.challenge_timeout)
    callback = receiver.wait_for_callback(orderid=ack.orderid, timeout=10)
    assert (callback.params["status"], callback.params["error_message"]) == (
        "declined",
        "3-D Secure result not received in time",
    )
    assert callback.control_ok


@pytest.mark.parametrize(
    ("outcome", "status"), [("3ds-frictionless", "approved"), ("3ds-frictionless-declined", "declined")]
)
def test_a_frictionless_order_is_decided_when_its_method_window_passes(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver, outcome: str, status: str
) -> None:
    ack = three_ds_sale(client, receiver, outcome)
    load_method_url(client, control, ack)
    control.advance_clock(SETTINGS.method_timeout + 0.5)
    callback = receiver.wait_for_callback(orderid=ack.orderid, timeout=10)
    assert callback.params["status"] == status
    assert control.transaction(ack.orderid)["tds_comp_ind"] == "N"


def test_a_1_0_2_authentication_not_uploaded_in_time_is_declined(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    fields = sale_fields(card=three_ds_v1_card(), amount="1.00", redirect_url=receiver.redirect_url)
    ack = client.sale(fields, server_callback_url=receiver.callback_url)
    assert tds_state(control, ack) == ("processing", "pares")
    control.advance_clock(SETTINGS.challenge_timeout + 1)
    assert receiver.wait_for_callback(orderid=ack.orderid, timeout=10).params["status"] == "declined"


def test_a_hosted_page_not_submitted_in_time_expires(
    server: SimulatorServer, client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    form = client.sale_form(form_fields(redirect_url=receiver.redirect_url, server_callback_url=receiver.callback_url))
    control.advance_clock(SETTINGS.form_timeout + 1)
    callback = receiver.wait_for_callback(orderid=form.orderid, timeout=10)
    assert (callback.params["status"], callback.params["error_message"]) == (
        "declined",
        "the payer did not submit the payment page in time: it expired",
    )
    page = client.session.get(form.redirect_url, timeout=10)
    assert page.status_code == 410 and "This payment page has expired" in page.text


def test_a_y_reported_after_the_window_is_refused_as_timed_out(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    """The issue's report: Y 10.5 s after the method step started was accepted.  An N then agrees with what the
    gateway applied: it is answered (behaviour 12)."""
    ack = three_ds_sale(client, receiver)
    load_method_url(client, control, ack)
    control.advance_clock(SETTINGS.method_timeout + 0.5)
    with pytest.raises(ValidationError, match=r"the method window \(10 s\) passed and the step timed out as N"):
        upload_method(client, ack, "Y")
    assert upload_method(client, ack, "N").orderid == ack.orderid
    assert tds_state(control, ack) == ("processing", "challenge")


def test_the_method_window_runs_from_the_method_step_not_from_the_sale(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    ack = three_ds_sale(client, receiver)
    control.advance_clock(SETTINGS.method_timeout * 3)
    assert tds_state(control, ack) == ("processing", "method")  # the payer's browser has not started it
    load_method_url(client, control, ack)
    control.advance_clock(SETTINGS.method_timeout + 0.5)
    control_wait(lambda: tds_state(control, ack) == ("processing", "challenge"))
    assert control.transaction(ack.orderid)["tds_comp_ind"] == "N"


def test_a_y_without_the_method_url_loaded_is_refused(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    ack = three_ds_sale(client, receiver)
    with pytest.raises(ValidationError, match=r"threeDSCompInd: Y .* never loaded the 3-D Secure method URL"):
        upload_method(client, ack, "Y")
    token = control.transaction(ack.orderid)["tds_token"]  # the payer's browser loads the method URL: Y is taken
    loaded = client.session.get(urls.method_url(client.config.base_url, token), timeout=10)
    assert loaded.status_code == 200
    assert upload_method(client, ack, "Y").orderid == ack.orderid
    assert tds_state(control, ack) == ("processing", "challenge")


def control_wait(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Until the simulator's scheduler has done what the advanced clock made due (a poll with a deadline)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the scheduler did not act on the advanced clock"
        time.sleep(0.01)


# --- real time: short windows, nobody polls ------------------------------------------------------------------


@pytest.fixture(scope="module")
def quick() -> Iterator[SimulatorServer]:
    """A simulator with the issue's windows, shortened: 0.3 s for the method step, 0.6 s for the challenge."""
    settings = default_settings(method_timeout=0.3, challenge_timeout=0.6, form_timeout=0.5)
    with SimulatorServer(settings) as running:
        yield running


def test_the_scheduler_keeps_the_deadlines_in_real_time_with_no_status_call(
    quick: SimulatorServer, receiver: CallbackReceiver
) -> None:
    with GatewayClient(quick.client_config()) as client:
        challenge = three_ds_sale(client, receiver)
        frictionless = three_ds_sale(client, receiver, "3ds-frictionless")
        with quick.control() as control:  # its window runs from the method step: then N, and the decision
            load_method_url(client, control, frictionless)
        form = client.sale_form(form_fields(server_callback_url=receiver.callback_url))
        assert receiver.wait_for_callback(orderid=frictionless.orderid, timeout=5).params["status"] == "approved"
        assert receiver.wait_for_callback(orderid=form.orderid, timeout=5).params["status"] == "declined"
        assert receiver.wait_for_callback(orderid=challenge.orderid, timeout=5).params["status"] == "declined"
        with quick.control() as control:
            journal = [entry["operation"] for entry in control.journal()]
    assert "status" not in journal and journal.count("sale") == 2
