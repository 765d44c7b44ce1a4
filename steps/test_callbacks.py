"""Server callbacks: delivered, signed, matching status, retried, de-duplicated."""

from pytest_bdd import given, parsers, scenarios, then, when

from toolkit.callbacks import Received
from toolkit.certify.expect import expect, expect_fields
from toolkit.certify.shared import moves_shared_state
from toolkit.certify.target import GatewayTarget
from toolkit.flows import Merchant, Order
from toolkit.testdata.payers import made_from_now

from .conftest import Scene

scenarios("../features/callbacks")


@given(parsers.parse("the merchant's back end will fail the next {count:d} callbacks"))
def fail_callbacks(target: GatewayTarget, count: int) -> None:
    target.receiver.fail_next(count, of=made_from_now())  # (the late callback of an earlier order is answered 200)


@given("the gateway will send the next callback twice")
@moves_shared_state("plans a fault for the gateway's next callback, whoever's it is")
def duplicate_callback(target: GatewayTarget) -> None:
    target.control.add_fault("callback", "duplicate", count=1)


@then("the callback matches the status")
def callback_matches(merchant: Merchant, order: Order, callback: Received) -> None:
    status = merchant.final_status(order)
    said = {"status": callback.status, "amount": callback.params.get("amount")}
    expect_fields(
        "the callback", said, about="as the status says", status=status.status.value, amount=str(status.amount)
    )


@when("the gateway retries the callback until the merchant takes it")
@moves_shared_state("moves the gateway's clock")
def retries(target: GatewayTarget, order: Order, scene: Scene) -> None:
    for attempt in (1, 2):  # once the gateway has logged the failed attempt, move its clock to the retry
        target.control.wait_for_callbacks(order.orderid, attempts=attempt)
        target.control.advance_clock(3600)
    target.receiver.wait_for_callback(orderid=order.orderid, count=3)


@then(parsers.parse("the gateway called back {count:d} times"))
def called_back_times(target: GatewayTarget, order: Order, count: int) -> None:
    expect("the number of callbacks", count, len(target.receiver.callbacks(orderid=order.orderid)), about=order)


@then("the last callback was taken")
def last_taken(target: GatewayTarget, order: Order) -> None:
    last = target.receiver.callbacks(orderid=order.orderid)[-1]
    expect_fields("the last callback", last, about=last.summary(), answered=200, control_ok=True)


@then("the merchant recognises the second callback as a duplicate")
def recognised_duplicate(target: GatewayTarget, order: Order) -> None:
    second = target.receiver.wait_for_callback(orderid=order.orderid, count=2)
    expect_fields("the second callback", second, about=second.summary(), duplicate=True)


@then("the callback of the capture matches its status")
def capture_callback_matches(merchant: Merchant, scene: Scene, callback: Received) -> None:
    status = merchant.final_status(scene.orders[-1])
    said = {"type": callback.type, "status": callback.status, "amount": callback.params.get("amount")}
    expect_fields("the callback", said, about="as the capture's status says", type=status.transaction_type,
                  status=status.status.value, amount=str(status.amount))  # fmt: skip
