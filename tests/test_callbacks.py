"""The callback receiver over real loopback HTTP (behaviour sections 4 and 5), and ``gatekit listen``."""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from datetime import UTC
from pathlib import Path

import pytest
import requests

from toolkit.callbacks import CallbackReceiver, CallbackTimeout, Received, forwarded_callback_url
from toolkit.client import GatewayClient
from toolkit.commands import listen as listen_command
from toolkit.commands.stopping import Stop
from toolkit.config import PollSchedule, simulator_config
from toolkit.masking import Secret
from toolkit.signing import callback_control

VECTORS = json.loads((Path(__file__).parent / "vectors" / "callback.json").read_text())
KEY = VECTORS["meta"]["merchant_control_key"]
ORDER, CLIENT_ORDER = "8056020", "inv-794772"
PAN = "4538977399606732"


def callback_params(status: str = "approved", orderid: str = ORDER, key: str = KEY, **extra: str) -> dict[str, str]:
    """What the gateway sends to server_callback_url (behaviour section 4)."""
    client_orderid = extra.pop("client_orderid", CLIENT_ORDER)
    return {
        "status": status,
        "orderid": orderid,
        "merchant_order": client_orderid,
        "client_orderid": client_orderid,
        "type": "sale",
        "amount": "10.42",
        "currency": "EUR",
        "control": callback_control(status, orderid, client_orderid, key),
        **extra,
    }


def send(url: str, params: dict[str, str], method: str = "GET") -> requests.Response:
    if method == "POST":
        return requests.post(url, data=params, timeout=5)
    return requests.get(url, params=params, timeout=5)


@pytest.fixture
def receiver():
    with CallbackReceiver(KEY) as started:
        yield started


# --- recording ---------------------------------------------------------------------------------


def test_a_callback_is_recorded_as_it_arrived(receiver):
    before = time.monotonic()
    answer = send(receiver.callback_url, callback_params())
    assert (answer.status_code, answer.text) == (200, "OK")
    [record] = receiver.callbacks()
    assert (record.kind, record.method, record.path) == ("callback", "GET", "/callback")
    assert (record.orderid, record.client_orderid, record.status, record.type) == (
        ORDER,
        CLIENT_ORDER,
        "approved",
        "sale",
    )
    assert record.params["amount"] == "10.42"
    assert record.control_ok is True and record.duplicate is False and record.answered == 200
    assert before <= record.received_at <= time.monotonic()
    assert record.received_wall.tzinfo is UTC


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: v["case"])
def test_control_of_the_vectors_is_accepted(receiver, vector):
    status, orderid, client_orderid, _ = vector["parts"]
    params = {"status": status, "orderid": orderid, "client_orderid": client_orderid, "control": vector["sha1_hex"]}
    send(receiver.callback_url, params)
    assert receiver.wait_for_callback(status=status, timeout=5).control_ok is True
    assert receiver.verify(params)


@pytest.mark.parametrize(
    "params",
    [
        callback_params(key="wrong-key"),
        {**callback_params(), "status": "declined"},
        {**callback_params(), "client_orderid": "inv-other"},
        {k: v for k, v in callback_params().items() if k != "control"},
    ],
    ids=["wrong key", "tampered status", "tampered client_orderid", "no control"],
)
def test_a_bad_control_is_recorded_as_false(receiver, params):
    send(receiver.callback_url, params)
    record = receiver.wait_for_callback(timeout=5)
    assert record.control_ok is False
    assert receiver.verify(record) is False


def test_without_a_key_control_is_not_checked():
    with CallbackReceiver() as receiver:
        send(receiver.callback_url, callback_params())
        assert receiver.wait_for_callback(timeout=5).control_ok is None
        assert not receiver.verifies_control
        with pytest.raises(ValueError, match="no control key"):
            receiver.verify(callback_params())


def test_a_secret_key_works_and_never_shows(receiver):
    with CallbackReceiver(Secret(KEY)) as secret_receiver:
        send(secret_receiver.callback_url, callback_params())
        assert secret_receiver.wait_for_callback(timeout=5).control_ok is True
        assert KEY not in repr(secret_receiver)


def test_card_data_is_masked_before_it_is_stored(receiver):
    luhn_valid_orderid = "4444555566661111"  # an identifier is not free text: it stays as sent
    params = callback_params(
        orderid=luhn_valid_orderid,
        credit_card_number=PAN,
        cvv2="123",
        error_message=f"card {PAN} refused",
        bin="453897",
        **{"last-four-digits": "6732"},
    )
    send(receiver.callback_url, params)
    record = receiver.wait_for_callback(timeout=5)
    assert record.params["credit_card_number"] == "453897******6732"
    assert record.params["cvv2"] == "***"
    assert record.params["error_message"] == "card 453897******6732 refused"
    assert (record.params["bin"], record.params["last-four-digits"]) == ("453897", "6732")
    assert record.orderid == luhn_valid_orderid and record.control_ok is True
    for shown in (repr(record), json.dumps(record.to_dict())):
        assert PAN not in shown and "cvv2': '123" not in shown and '"cvv2": "123"' not in shown


# --- redirects and addresses -------------------------------------------------------------------


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_a_payer_redirect_is_recorded_and_answered_with_a_page(receiver, method):
    params = callback_params(status="declined")
    params.pop("type")
    answer = send(receiver.redirect_url, params, method)
    assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("text/html")
    assert "Payment declined" in answer.text
    record = receiver.wait_for_redirect(orderid=ORDER, timeout=5)
    assert (record.kind, record.method, record.control_ok) == ("redirect", method, True)
    assert receiver.callbacks() == []


def test_the_redirect_page_escapes_what_it_shows(receiver):
    answer = send(receiver.redirect_url, {"status": "<script>x</script>"}, "POST")
    assert "<script>" not in answer.text and "&lt;script&gt;" in answer.text


@pytest.mark.parametrize(
    ("path", "method", "kind"),
    [
        ("/callback/order-1", "GET", "callback"),
        ("/callback/order-1", "POST", "callback"),
        ("/redirect/order-1", "GET", "redirect"),
        ("/anything/else", "GET", "callback"),
        ("/anything/else", "POST", "redirect"),
    ],
)
def test_any_path_under_the_base_is_an_arrival(receiver, path, method, kind):
    send(receiver.base_url + path, callback_params(), method)
    [record] = receiver.received
    assert (record.kind, record.path) == (kind, path)


def test_per_order_addresses(receiver):
    assert receiver.callback_url_for("order 1/2") == receiver.base_url + "/callback/order%201%2F2"
    assert receiver.redirect_url_for("a") == receiver.base_url + "/redirect/a"
    send(receiver.callback_url_for("a"), callback_params(client_orderid="a"))
    send(receiver.callback_url_for("b"), callback_params(client_orderid="b"))
    assert [r.path for r in receiver.callbacks(client_orderid="b")] == ["/callback/b"]


def test_browser_extras_are_not_arrivals(receiver):
    assert requests.get(receiver.base_url + "/favicon.ico", timeout=5).status_code == 404
    assert receiver.received == []


# --- duplicates and answers --------------------------------------------------------------------


def test_duplicates_are_marked_on_orderid_type_and_status(receiver):
    send(receiver.callback_url, callback_params())
    send(receiver.callback_url, callback_params())
    send(receiver.callback_url, callback_params(status="declined"))
    send(receiver.callback_url, callback_params(type="capture"))
    assert [r.duplicate for r in receiver.callbacks()] == [False, True, False, False]


def test_fail_next_answers_non_200_and_the_retry_is_not_a_duplicate(receiver):
    receiver.fail_next(2, status=503)
    codes = [send(receiver.callback_url, callback_params()).status_code for _ in range(4)]
    assert codes == [503, 503, 200, 200]
    records = receiver.callbacks(orderid=ORDER)
    assert [(r.answered, r.duplicate) for r in records] == [(503, False), (503, False), (200, False), (200, True)]
    assert receiver.wait_for_callback(orderid=ORDER, count=3, timeout=5) is records[2]


def test_fail_next_of_some_orders_leaves_a_late_callback_of_another_order_alone(receiver):
    """The retry scenario plans its failures for its own orders: a late callback of an earlier scenario's order,
    arriving first, used to take one of them (the third try never came: test-long failed 1 run in 3)."""
    from toolkit.testdata.payers import made_from_now, new_client_orderid

    earlier = new_client_orderid()
    receiver.fail_next(2, of=made_from_now())
    mine = new_client_orderid()
    late = send(receiver.callback_url, callback_params(client_orderid=earlier, orderid="71"))
    codes = [send(receiver.callback_url, callback_params(client_orderid=mine)).status_code for _ in range(3)]
    assert (late.status_code, codes) == (200, [500, 500, 200])


def test_fail_next_does_not_touch_redirects(receiver):
    receiver.fail_next(1)
    assert send(receiver.redirect_url, callback_params(), "POST").status_code == 200
    assert send(receiver.callback_url, callback_params()).status_code == 500


@pytest.mark.parametrize(("n", "status"), [(1, 200), (-1, 500), (1, 99)])
def test_fail_next_refuses_nonsense(receiver, n, status):
    with pytest.raises(ValueError, match="non-200"):
        receiver.fail_next(n, status)


def test_delay_next_answers_slowly_but_records_at_once(receiver):
    receiver.delay_next(1, 0.3)
    recorded = threading.Event()
    receiver.observers.append(lambda record: recorded.set())
    started = time.monotonic()
    answer = send(receiver.callback_url, callback_params())
    assert answer.status_code == 200 and time.monotonic() - started >= 0.3
    assert recorded.is_set() and receiver.callbacks()[0].delayed == 0.3
    started = time.monotonic()
    send(receiver.callback_url, callback_params())
    assert time.monotonic() - started < 0.3


def test_stop_cuts_a_delay_short_and_joins():
    receiver = CallbackReceiver().start()
    receiver.delay_next(1, 60)
    answers: list[int] = []
    client = threading.Thread(target=lambda: answers.append(send(receiver.callback_url, {}).status_code))
    client.start()
    receiver.wait_for_callback(timeout=5)
    started = time.monotonic()
    receiver.stop()
    client.join(5)
    assert time.monotonic() - started < 5 and answers == [200]


# --- waiting -----------------------------------------------------------------------------------


def test_wait_for_callback_wakes_within_milliseconds(receiver):
    woken: dict[str, object] = {}

    def wait() -> None:
        woken["record"] = receiver.wait_for_callback(orderid=ORDER, timeout=5)
        woken["at"] = time.monotonic()

    waiter = threading.Thread(target=wait)
    waiter.start()
    send(receiver.callback_url, callback_params(orderid="other"))
    send(receiver.callback_url, callback_params())
    waiter.join(5)
    record = woken["record"]
    assert isinstance(record, Received) and record.orderid == ORDER
    assert woken["at"] - record.received_at < 0.1  # type: ignore[operator]


def test_wait_filters_on_client_orderid_and_status(receiver):
    send(receiver.callback_url, callback_params(status="processing"))
    send(receiver.callback_url, callback_params(status="approved"))
    assert receiver.wait_for_callback(client_orderid=CLIENT_ORDER, status="APPROVED", timeout=5).status == "approved"
    assert receiver.callbacks(status="processing")[0].status == "processing"


def test_timeout_names_the_order_and_what_came(receiver):
    send(receiver.callback_url, callback_params())
    send(receiver.redirect_url, callback_params(status="declined"), "POST")
    started = time.monotonic()
    with pytest.raises(TimeoutError) as caught:
        receiver.wait_for_callback(orderid="999", status="approved", timeout=0.05)
    assert 0.05 <= time.monotonic() - started < 1
    message = str(caught.value)
    assert message.startswith("no callback for orderid=999 status=approved within 0.05s; received so far (2): ")
    assert f"callback orderid={ORDER} client_orderid={CLIENT_ORDER} type=sale status=approved" in message
    assert "redirect orderid=8056020" in message
    assert isinstance(caught.value, CallbackTimeout) and len(caught.value.received) == 2


def test_timeout_with_nothing_received(receiver):
    with pytest.raises(CallbackTimeout, match="no redirect for client_orderid=inv-1 within 0s; nothing was received"):
        receiver.wait_for_redirect(client_orderid="inv-1", timeout=0)


def test_clear_forgets_arrivals_and_duplicates(receiver):
    send(receiver.callback_url, callback_params())
    receiver.clear()
    assert receiver.received == []
    send(receiver.callback_url, callback_params())
    assert receiver.callbacks()[0].duplicate is False


# --- the waker -----------------------------------------------------------------------------------


def test_waker_is_false_at_the_timeout_and_true_once_the_callback_came(receiver):
    waker = receiver.waker(orderid=ORDER)
    assert waker.wait(0.01) is False
    send(receiver.callback_url, callback_params(orderid="other"))
    send(receiver.redirect_url, callback_params(), "POST")  # a redirect is not the callback
    assert waker.wait(0.01) is False
    send(receiver.callback_url, callback_params())
    assert waker.wait(0) is True  # already here: at once
    later = receiver.waker(client_orderid=CLIENT_ORDER)  # an order's earlier callback does not end a later wait
    assert later.wait(0) is False
    send(receiver.callback_url, callback_params(type="capture"))
    assert later.wait(0) is True


def test_waker_wakes_a_waiting_thread(receiver):
    waker = receiver.waker(orderid=ORDER)
    sender = threading.Thread(target=lambda: send(receiver.callback_url, callback_params()))
    started = time.monotonic()
    sender.start()
    assert waker.wait(5) is True
    assert time.monotonic() - started < 1
    sender.join(5)


def test_waker_needs_an_order(receiver):
    with pytest.raises(ValueError, match="orderid or a client_orderid"):
        receiver.waker()


class FakeGateway(requests.adapters.BaseAdapter):
    """Answers ``status``: processing until it has called the receiver back, then approved."""

    def __init__(self, receiver: CallbackReceiver) -> None:
        super().__init__()
        self.receiver = receiver

    def send(self, request, **kwargs):  # type: ignore[no-untyped-def]
        status = "approved" if self.receiver.callbacks(orderid=ORDER) else "processing"
        body = {"type": "status-response", "serial-number": "s-1", "paynet-order-id": ORDER,
                "merchant-order-id": CLIENT_ORDER, "status": status}  # fmt: skip
        answer = requests.Response()
        answer.status_code, answer.url, answer.request = 200, request.url, request
        answer.headers["Content-Type"] = "application/vnd.pay+json"
        answer._content = json.dumps(body).encode()
        return answer

    def close(self) -> None:
        pass


def test_the_client_stops_polling_when_the_callback_comes(receiver):
    session = requests.Session()
    session.mount("http://", FakeGateway(receiver))
    config = replace(simulator_config("http://gateway.test/paynet"), poll=PollSchedule((30.0,), 60.0))
    first_poll = threading.Event()
    gateway_calls_back = threading.Thread(
        target=lambda: first_poll.wait(5) and send(receiver.callback_url, callback_params())
    )
    gateway_calls_back.start()
    attempts = []
    started = time.monotonic()
    with GatewayClient(config, session=session) as client:
        final = client.wait_for_final_status(
            client_orderid=CLIENT_ORDER,
            orderid=ORDER,
            waker=receiver.waker(orderid=ORDER),
            on_attempt=lambda attempt: (attempts.append(attempt), first_poll.set()),
        )
    gateway_calls_back.join(5)
    assert final.status.value == "approved"
    assert time.monotonic() - started < 5  # not the 30 s of the schedule
    assert [a.woken for a in attempts] == [False, True]


# --- life ----------------------------------------------------------------------------------------


def test_life_cycle():
    receiver = CallbackReceiver(KEY)
    assert "not started" in repr(receiver)
    with pytest.raises(RuntimeError, match="before start"):
        receiver.base_url  # noqa: B018
    with receiver:
        url = receiver.callback_url
        assert url.startswith("http://127.0.0.1:") and "control key set" in repr(receiver)
        with pytest.raises(RuntimeError, match="already started"):
            receiver.start()
    receiver.stop()  # stopping twice is harmless
    with pytest.raises(requests.ConnectionError):
        requests.get(url, timeout=5)


def test_observers_see_every_arrival(receiver):
    seen: list[Received] = []
    receiver.observers.append(seen.append)
    send(receiver.callback_url, callback_params())
    assert seen == receiver.callbacks()


# --- gatekit listen ------------------------------------------------------------------------------


def test_listen_registers_with_argparse():
    parser = argparse.ArgumentParser(prog="gatekit")
    listen_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["listen", "--port", "8765", "--control-key", "k"])
    assert (args.handler, args.port, args.host, args.control_key) == (listen_command.run, 8765, "127.0.0.1", "k")
    defaults = parser.parse_args(["listen"])
    assert (defaults.port, defaults.control_key) == (0, None)


class Lines:
    """A text stream whose lines a test can wait for, without sleeping."""

    def __init__(self) -> None:
        self.lines: queue.Queue[str] = queue.Queue()

    def write(self, text: str) -> None:
        for line in text.splitlines():
            self.lines.put(line)

    def flush(self) -> None:
        pass

    def next(self) -> dict[str, object]:
        return json.loads(self.lines.get(timeout=5))


def test_listen_prints_addresses_then_one_masked_json_line_per_arrival():
    out, stop = Lines(), Stop()
    results: list[int] = []

    def listen() -> None:
        results.append(listen_command.listen(CallbackReceiver(KEY), stop, out=out))  # type: ignore[arg-type]

    thread = threading.Thread(target=listen)
    thread.start()
    ready = out.next()
    assert ready["control_verified"] is True
    send(str(ready["callback_url"]), callback_params(credit_card_number=PAN))
    arrival = out.next()
    assert arrival["kind"] == "callback" and arrival["control_ok"] is True
    assert arrival["params"]["credit_card_number"] == "453897******6732"  # type: ignore[index]
    send(str(ready["redirect_url"]), callback_params(), "POST")
    assert out.next()["kind"] == "redirect"
    stop.set()
    thread.join(5)
    assert out.next() == {"stopped": ready["listening"], "received": 2}
    assert results == [0]


def test_listen_says_so_when_the_port_is_taken(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        receiver = CallbackReceiver(port=taken.getsockname()[1])
        assert listen_command.listen(receiver, Stop(), out=Lines()) == 2  # type: ignore[arg-type]
    assert "cannot listen on 127.0.0.1:" in capsys.readouterr().err


SCRIPT = """
import argparse, sys
from toolkit.commands import listen
parser = argparse.ArgumentParser(prog="gatekit")
listen.register(parser.add_subparsers())
args = parser.parse_args(sys.argv[1:])
sys.exit(args.handler(args))
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_gatekit_listen_stops_cleanly_on_a_signal(signum):
    env = {**os.environ, "GATEWAY_CONTROL_KEY": KEY, "PYTHONPATH": str(Path(__file__).parent.parent)}
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, "listen", "--port", "0"], stdout=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None
    out = Lines()
    reader = threading.Thread(target=lambda: [out.write(line) for line in process.stdout or ()], daemon=True)
    reader.start()
    try:
        ready = out.next()
        send(str(ready["callback_url"]), callback_params())
        assert out.next()["control_ok"] is True
        process.send_signal(signum)
        assert process.wait(timeout=10) == 0
        assert out.next() == {"stopped": ready["listening"], "received": 1}
    finally:
        process.kill()
        process.wait()
        reader.join(5)
        process.stdout.close()


def test_a_forwarded_receiver_is_called_back_under_the_public_url():
    assert (
        forwarded_callback_url("https://hooks.acme.example/gateway/") == "https://hooks.acme.example/gateway/callback"
    )
    assert forwarded_callback_url(None) is None and forwarded_callback_url("") is None


def test_the_receiver_accepts_a_burst_of_connections():
    """A hundred connections at once (a load run's payers and callbacks) wait to be accepted: none is refused,
    reset or left unanswered (socketserver's default queue of 5 reset them)."""
    from toolkit.callbacks.server import Answer, ReceiverServer

    server = ReceiverServer(("127.0.0.1", 0), lambda arrival: Answer(200, "text/plain", b"OK"))
    port = server.server_address[1]
    sockets = [socket.create_connection(("127.0.0.1", port), timeout=0.5) for _ in range(100)]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        for sock in sockets:
            sock.sendall(b"GET /callback?orderid=1&status=approved HTTP/1.0\r\nHost: x\r\n\r\n")
        answers = [sock.recv(64) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
        server.shutdown()
        server.server_close()
    assert all(answer.startswith(b"HTTP/1.0 200") for answer in answers)
