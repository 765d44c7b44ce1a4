"""Waiting for a final status: polls on a schedule, a deadline, and a waker that ends a wait early."""

from __future__ import annotations

import threading
import time

import pytest

from tests.recording_server import Reply
from toolkit.config import PollSchedule
from toolkit.errors import InvalidRequestError, ValidationError, WaitTimeout
from toolkit.models import AsyncResponse, HostedSaleResponse, HostedStatusResponse, Status, StatusResponse
from toolkit.waiting import PollAttempt, wait_for_status

ORDER = AsyncResponse.from_mapping({"paynet-order-id": "8056020", "merchant-order-id": "inv-794772"})
FAST = PollSchedule((0.001,), deadline=5.0)


def status(value: str, **extra: str) -> dict[str, str]:
    return {"type": "status-response", "status": value, "paynet-order-id": "8056020", **extra}


def test_polls_until_final_and_reports_every_attempt(server, client):
    server.reply(status("processing"), status("processing"), status("approved"))
    attempts: list[PollAttempt] = []
    final = client.wait_for_final_status(ORDER, schedule=FAST, on_attempt=attempts.append)
    assert final.status is Status.APPROVED
    assert [(a.number, a.status) for a in attempts] == [
        (1, Status.PROCESSING),
        (2, Status.PROCESSING),
        (3, Status.APPROVED),
    ]
    assert attempts[-1].response is final
    assert [r.path for r in server.requests] == ["/paynet/api/v2/status/1001"] * 3
    assert all(r.fields["orderid"] == "8056020" and "control" in r.fields for r in server.requests)


def test_deadline_exceeded_raises_with_every_attempt(server, client):
    server.reply(status("processing"))
    attempts: list[PollAttempt] = []
    with pytest.raises(WaitTimeout) as timed_out:
        client.wait_for_final_status(ORDER, schedule=PollSchedule((0.01,), deadline=0.1), on_attempt=attempts.append)
    error = timed_out.value
    assert len(error.attempts) >= 2 and error.attempts == attempts
    assert all(a.status is Status.PROCESSING for a in error.attempts)
    assert len(server.requests) == len(error.attempts)
    assert f"order 8056020: no final status within 0.1s after {len(attempts)} polls (last: processing)" in str(error)


def test_a_timeout_names_what_the_wait_was_for(server, client):
    server.reply(status("processing"))
    quick = PollSchedule((0.01,), deadline=0.05)
    with pytest.raises(WaitTimeout, match=r"order 8056020: no unknown or final status within 0.05s"):
        client.wait_for(Status.UNKNOWN, ORDER, schedule=quick)
    with pytest.raises(WaitTimeout, match=r"order 8056020: no payer step or final status within 0.05s"):
        client.wait_for_payer_or_final(ORDER, schedule=quick)


def test_a_waker_ends_a_long_wait_early(server, client):
    server.reply(status("processing"), status("approved"))
    waker = threading.Event()
    timer = threading.Timer(0.05, waker.set)
    attempts: list[PollAttempt] = []
    started = time.monotonic()
    timer.start()
    try:
        final = client.wait_for_final_status(
            ORDER, schedule=PollSchedule((5.0,), deadline=30.0), waker=waker, on_attempt=attempts.append
        )
    finally:
        timer.cancel()
        timer.join()
    elapsed = time.monotonic() - started
    assert final.status is Status.APPROVED
    assert elapsed < 2.0, f"the wait took {elapsed:.2f}s; the schedule's delay is 5s"
    assert [a.woken for a in attempts] == [False, True]
    assert "(woken by callback)" in str(attempts[1])


def test_server_errors_during_a_wait_are_polled_through(server, client):
    server.reply(Reply({"type": "error", "error-message": "Internal error"}, 500), status("declined"))
    attempts: list[PollAttempt] = []
    final = client.wait_for_final_status(ORDER, schedule=FAST, on_attempt=attempts.append)
    assert final.status is Status.DECLINED
    assert attempts[0].status is None and "Internal error" in (attempts[0].error or "")
    assert "error: status: Internal error" in str(attempts[0])


def test_a_validation_error_stops_the_wait(server, client):
    server.reply(Reply({"type": "validation-error", "error-message": "orderid is unknown"}, 400))
    with pytest.raises(ValidationError, match="orderid is unknown"):
        client.wait_for_final_status(ORDER, schedule=FAST)
    assert len(server.requests) == 1


def test_wait_for_payer_stops_when_the_payer_must_act(server, client):
    server.reply(status("processing"), status("processing", **{"redirect-to": "https://acs.example/challenge"}))
    found = client.wait_for_payer_or_final(ORDER, schedule=FAST)
    assert found.needs_payer and found.redirect_to == "https://acs.example/challenge"


def test_wait_for_a_particular_status(server, client):
    server.reply(status("processing"), status("unknown"))
    assert client.wait_for(Status.UNKNOWN, ORDER, schedule=FAST).status is Status.UNKNOWN


def test_waiting_by_client_orderid_alone(server, client):
    server.reply(status("approved"))
    client.wait_for_final_status(client_orderid="inv-794772", schedule=FAST)
    assert "orderid" not in server.last.fields


def test_a_client_orderid_is_needed(server, client):
    with pytest.raises(InvalidRequestError, match="client_orderid"):
        client.wait_for_final_status(orderid="8056020", schedule=FAST)
    assert server.requests == []


class FakeTime:
    """A clock and a waker in one: waiting moves the clock instead of sleeping."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    def wait(self, timeout: float) -> bool:
        self.waits.append(timeout)
        self.now += timeout
        return False


def test_schedule_delays_are_followed_and_the_last_one_is_cut_to_the_deadline():
    fake = FakeTime()
    processing = StatusResponse.from_mapping({"status": "processing"})
    with pytest.raises(WaitTimeout) as timed_out:
        wait_for_status(
            lambda: processing,
            PollSchedule((0.1, 0.2), deadline=0.65),
            until=lambda r: r.is_final,
            waker=fake,
            clock=fake.clock,
        )
    assert fake.waits == pytest.approx([0.1, 0.2, 0.2, 0.15])
    assert [round(a.elapsed, 2) for a in timed_out.value.attempts] == [0.0, 0.1, 0.3, 0.5, 0.65]


@pytest.mark.parametrize(
    ("extra", "carries"),
    [({"html": "<iframe src='https://acs.example/method'></iframe>"}, "html"),
     ({"redirect-to": "https://acs.example/challenge/1"}, "redirect-to https://acs.example/challenge/1")],
    ids=["method step html", "challenge redirect-to"],
)  # fmt: skip
def test_a_timeout_while_the_payer_must_act_says_so(server, client, extra, carries):
    server.reply(status("processing", **extra))
    with pytest.raises(WaitTimeout) as timed_out:
        client.wait_for_final_status(ORDER, schedule=PollSchedule((0.01,), deadline=0.05))
    assert f"(last: processing); the payer must act: the status carries {carries} for the payer's browser" in str(
        timed_out.value
    )


def test_a_timeout_without_a_payer_step_says_nothing_of_the_payer(server, client):
    server.reply(status("processing"))
    with pytest.raises(WaitTimeout) as timed_out:
        client.wait_for_final_status(ORDER, schedule=PollSchedule((0.01,), deadline=0.05))
    assert "payer" not in str(timed_out.value)


# --- a Hosted Fields order: status_v4 (JSON with its types) ----------------------------------------------------

SALE_V4 = HostedSaleResponse.from_mapping({"paynet-order-id": "8056020", "merchant-order-id": "hf-794772"})


def test_a_hosted_fields_order_is_polled_with_status_v4_until_final(server, client):
    server.reply(status("processing"), status("approved", **{"approval-code": "242424"}))
    attempts: list[PollAttempt] = []
    final = client.wait_for_status_v4(SALE_V4, schedule=FAST, on_attempt=attempts.append)
    assert isinstance(final, HostedStatusResponse)
    assert (final.status, final.approval_code) == (Status.APPROVED, "242424")
    assert [a.status for a in attempts] == [Status.PROCESSING, Status.APPROVED]
    assert [r.path for r in server.requests] == ["/paynet/api/v4/status/1001"] * 2
    sent = server.last.fields
    assert (sent["orderid"], sent["client_orderid"], sent["login"]) == ("8056020", "hf-794772", "gatekit-demo")
    assert "RSA-SHA256" in (server.last.header("Authorization") or "") and "control" not in sent


def test_a_hosted_fields_wait_stops_at_redirect_to_when_asked_and_polls_through_it_otherwise(server, client):
    asks = status("processing", **{"redirect-to": "https://acs.example/challenge/1"})
    server.reply(status("processing"), asks, asks, status("declined", **{"error-code": 5}))
    found = client.wait_for_payer_or_final_v4(SALE_V4, schedule=FAST)
    assert found.needs_payer and found.redirect_to == "https://acs.example/challenge/1"
    final = client.wait_for_status_v4(orderid="8056020", client_orderid="hf-794772", schedule=FAST)
    assert final.status is Status.DECLINED and final.raw["error-code"] == "5"


def test_a_hosted_fields_timeout_names_status_v4_and_the_payer_step(server, client):
    server.reply(status("processing", **{"redirect-to": "https://acs.example/challenge/1"}))
    with pytest.raises(WaitTimeout) as timed_out:
        client.wait_for_status_v4(SALE_V4, schedule=PollSchedule((0.01,), deadline=0.05))
    assert timed_out.value.operation == "status_v4"
    assert "order 8056020: no final status within 0.05s" in str(timed_out.value)
    assert "the status carries redirect-to https://acs.example/challenge/1" in str(timed_out.value)


def test_a_hosted_fields_refusal_ends_the_wait_and_an_orderid_is_needed(server, client):
    server.reply(Reply({"error-message": "Unknown order 8056020.", "error-code": 3}, 400))
    with pytest.raises(ValidationError, match="Unknown order 8056020"):
        client.wait_for_status_v4(SALE_V4, schedule=FAST)
    assert len(server.requests) == 1
    for named, given in (("orderid", {"client_orderid": "hf-794772"}), ("client_orderid", {"orderid": "8056020"})):
        with pytest.raises(InvalidRequestError, match=f"status_v4: .*{named}: is needed to wait"):
            client.wait_for_status_v4(schedule=FAST, **given)
    assert len(server.requests) == 1
