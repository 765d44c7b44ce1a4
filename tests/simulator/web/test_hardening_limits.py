"""The simulator as a network service (issue 9, items 2, 3 and 8): what one request may cost.

A body limit with a 413 in the gateway's format, field count and length limits, work off the
event loop, separate pools for gateway traffic, pages and control long-polls, deadlines for idle,
slowloris and slow-body connections (the bounded journal: ``test_hardening_journal.py``).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from toolkit.client import GatewayClient
from toolkit.errors import ApiError
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import default_settings
from toolkit.simulator.web.connections import GuardedH11Protocol
from toolkit.testdata import form_fields, sale_fields
from toolkit.wire import FORM_TYPE, MEDIA_TYPE, decode_response

MILLION_PAIRS = "&".join(f"f{i}=1" for i in range(1_000_000)).encode()  # 9.9 MB, the issue's body


def status_latency(client: GatewayClient) -> float:
    started = time.monotonic()
    with contextlib.suppress(ApiError):  # a refusal is an answer too: the timing is what counts
        client.status(client_orderid="no-such-order-yet")
    return time.monotonic() - started


def _post(url: str, body: bytes, *, accept: bool = True) -> requests.Response:
    headers = {"Content-Type": FORM_TYPE, **({"Accept": MEDIA_TYPE} if accept else {})}
    return requests.post(url, data=body, headers=headers, timeout=30)


# --- the body limit ----------------------------------------------------------------------------------


@pytest.mark.parametrize("accept", [True, False], ids=["json", "legacy"])
def test_a_ten_megabyte_body_is_refused_with_413_in_the_gateways_format(server: SimulatorServer, accept):
    answer = _post(server.base_url + "/api/v2/sale/1001", MILLION_PAIRS, accept=accept)
    assert answer.status_code == 413
    body = decode_response(answer.content)
    assert (body["type"], body["error-code"]) == ("validation-error", "6")
    assert body["error-message"] == (
        f"a request body of {len(MILLION_PAIRS)} bytes is refused: "
        "the simulator takes at most 65536 bytes (max_body_bytes)"
    )
    assert answer.headers["Content-Type"].startswith(MEDIA_TYPE if accept else "text/html")


def test_a_streamed_body_is_cut_at_the_limit(server: SimulatorServer):
    chunks = (b"f=" + b"1" * 8190 for _ in range(100))  # no Content-Length: chunked, 800 KB
    answer = requests.post(server.base_url + "/api/v2/sale/1001", data=chunks, headers={"Accept": MEDIA_TYPE})
    assert answer.status_code == 413
    assert "a request body of more than 65536 bytes is refused" in answer.json()["error-message"]


def test_the_control_api_and_the_pages_refuse_big_bodies_in_their_own_formats(server: SimulatorServer):
    control = _post(server.root_url + "/_sim/reset", b"x" * 70_000)
    assert control.status_code == 413 and control.json()["field"] == "body"
    page = _post(server.base_url + "/form/any-token", b"x" * 70_000)
    assert page.status_code == 413 and "id='page-error'" in page.text and "max_body_bytes" in page.text


def test_the_limit_is_a_setting():
    with SimulatorServer(default_settings(max_body_bytes=1000)) as small:
        assert _post(small.base_url + "/api/v2/status/1001", b"a=" + b"1" * 1000).status_code == 413
        assert _post(small.base_url + "/api/v2/status/1001", b"a=1").status_code == 400  # read, then refused


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("&".join(f"f{i}=1" for i in range(201)), "the request body has more than 200 fields"),
        ("order_desc=" + "d" * 16_385, "order_desc: a value of 16385 characters; at most 16384"),
        ("n" * 65 + "=1", "a field name of 65 characters"),
    ],
    ids=["fields", "value", "name"],
)
def test_field_count_and_length_limits(post, body, message):
    answer = post("/api/v2/sale/1001", body)
    assert answer.status_code == 400 and message in answer.json()["error-message"]


# --- the event loop and the pools ----------------------------------------------------------------------


def test_the_issues_big_body_does_not_hold_up_a_status_request(server: SimulatorServer, client: GatewayClient):
    with ThreadPoolExecutor(4) as pool:
        bodies = [pool.submit(_post, server.base_url + "/api/v2/sale/1001", MILLION_PAIRS) for _ in range(4)]
        latencies = [status_latency(client) for _ in range(20)]
        assert all(body.result().status_code == 413 for body in bodies)
    assert max(latencies) < 0.5, latencies


def test_gateway_work_waits_in_a_thread_not_in_the_event_loop(server: SimulatorServer, client: GatewayClient):
    """While the store is busy (held here for 1 s), a gateway call waits in its thread; /_sim/clock answers."""
    with ThreadPoolExecutor(1) as pool:
        with server.store.transaction():
            sale = pool.submit(client.sale, sale_fields())
            time.sleep(0.1)  # the sale is on its way and blocks on the store (a state to create, not awaited)
            started = time.monotonic()
            assert requests.get(server.root_url + "/_sim/clock", timeout=5).status_code == 200
            clock_latency = time.monotonic() - started
            time.sleep(0.5)
            assert not sale.done()
        assert sale.result(timeout=10).orderid
    assert clock_latency < 0.3


def test_long_polls_of_the_control_api_do_not_starve_the_pages(server: SimulatorServer, client: GatewayClient):
    ack = client.sale(sale_fields())  # no callback url: a long-poll on it waits its whole timeout
    form = client.sale_form(form_fields())
    url = f"{server.root_url}/_sim/callbacks?orderid={ack.orderid}&attempts=1&timeout=4"
    with ThreadPoolExecutor(45) as pool:
        polls = [pool.submit(requests.get, url, timeout=30) for _ in range(45)]
        time.sleep(0.5)  # the 45 long-polls are waiting
        started = time.monotonic()
        page = requests.get(form.redirect_url, timeout=30)
        page_latency = time.monotonic() - started
        status = status_latency(client)
        assert all(poll.result().json()["timed_out"] for poll in polls)
    assert page.status_code == 200 and 'id="payment-form"' in page.text
    assert page_latency < 1.0 and status < 1.0, (page_latency, status)


# --- connections that take too long ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def impatient() -> Iterator[SimulatorServer]:
    with SimulatorServer(default_settings(request_timeout=0.5)) as running:
        yield running


def _connect(server: SimulatorServer) -> socket.socket:
    sock = socket.create_connection((server.host, server.port), timeout=5)
    sock.settimeout(5)
    return sock


def _closed_after(sock: socket.socket) -> tuple[float, bytes]:
    """Seconds until the server closes the connection, and what it sent before."""
    started, received = time.monotonic(), b""
    while chunk := sock.recv(4096):
        received += chunk
    return time.monotonic() - started, received


def test_an_idle_connection_is_closed(impatient: SimulatorServer):
    with _connect(impatient) as sock:
        waited, received = _closed_after(sock)
    assert 0.3 < waited < 2 and received == b""


def test_slowloris_headers_get_408_and_a_closed_connection(impatient: SimulatorServer):
    with _connect(impatient) as sock:
        started = time.monotonic()
        sock.sendall(b"POST /paynet/api/v2/status/1001 HTTP/1.1\r\nHost: x\r\n")
        stop = threading.Event()

        def drip() -> None:
            while not stop.wait(0.1):
                try:
                    sock.sendall(b"X")
                except OSError:
                    return

        threading.Thread(target=drip, daemon=True).start()
        _, received = _closed_after(sock)
        stop.set()
    assert received.startswith(b"HTTP/1.1 408 Request Timeout") and time.monotonic() - started < 2


def test_a_slow_body_gets_408_and_a_closed_connection(impatient: SimulatorServer):
    with _connect(impatient) as sock:
        head = b"POST /paynet/api/v2/status/1001 HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
        sock.sendall(head + b"client_orderid=1")
        waited, received = _closed_after(sock)
    assert received.startswith(b"HTTP/1.1 408 Request Timeout") and waited < 2


def test_time_spent_answering_does_not_count(impatient: SimulatorServer):
    with impatient.control() as control:
        waited = control.callbacks()  # a quick call first: the connection is reused below
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            control.wait_for_callbacks(8056020, attempts=1, timeout=1.5)
    assert waited == [] and time.monotonic() - started >= 1.4


# --- second round (issue 19, #2): chunked bodies past the limit, connections per client ----------------------


@pytest.mark.parametrize("path", ["/paynet/api/v2/sale/1001", "/_sim/health", "/paynet/form/none"])
@pytest.mark.parametrize("over", [1, 5000])
def test_a_chunked_body_that_ends_just_past_the_limit_gets_413_at_once(server: SimulatorServer, path: str, over: int):
    """The whole body came (the last chunk too): the 413 must not wait for more of it."""
    body = b"f=" + b"1" * (65536 - 2 + over)
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    with _connect(server) as sock:
        started = time.monotonic()
        sock.sendall(head + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")
        waited, received = _closed_after(sock)
    assert received.startswith(b"HTTP/1.1 413 "), received[:80]
    assert time.monotonic() - started < 1 and waited < 1


@pytest.fixture(scope="module")
def crowded() -> Iterator[SimulatorServer]:
    """At most 40 connections per client address (1024 by default)."""
    with SimulatorServer(default_settings(connections_per_client=40)) as running:
        yield running


def test_idle_connections_are_closed_first_and_others_are_still_served(crowded: SimulatorServer):
    """A client holding idle connections at its cap: the next connection closes the oldest idle one, so a
    status request still gets its answer (uvicorn answered 503 to everyone until idle ones timed out)."""
    idle = [_connect(crowded) for _ in range(60)]
    try:
        with GatewayClient(crowded.client_config()) as client:
            latencies = [status_latency(client) for _ in range(20)]
        assert max(latencies) < 0.5, latencies
        closed = 0
        for sock in idle[:20]:  # the oldest: closed to make room
            sock.settimeout(2)
            with contextlib.suppress(ConnectionResetError):
                closed += sock.recv(1) == b""
        assert closed == 20
    finally:
        for sock in idle:
            sock.close()


def busy_connections(server: SimulatorServer) -> int:
    """The server's connections in the middle of a request (what the guard will not close to make room)."""
    connections = server._server.server_state.connections
    return sum(1 for c in list(connections) if isinstance(c, GuardedH11Protocol) and not c.idle)


def test_a_client_at_its_cap_with_every_connection_busy_is_told_to_come_back():
    """40 connections each in the middle of a request (not idle): the 41st from that address gets 503; a
    connection of the same address opened once those end is served."""
    with SimulatorServer(default_settings(connections_per_client=40)) as crowded:
        busy = [_connect(crowded) for _ in range(40)]
        try:
            for sock in busy:
                sock.sendall(b"POST /paynet/api/v2/status/1001 HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nx")
            deadline = time.monotonic() + 5
            while busy_connections(crowded) < 40:  # (the server reads the 40 partial requests)
                assert time.monotonic() < deadline, busy_connections(crowded)
                time.sleep(0.01)
            with _connect(crowded) as extra:
                _, received = _closed_after(extra)
            assert received.startswith(b"HTTP/1.1 503 Service Unavailable"), received[:80]
            assert b"too many connections from this address" in received
        finally:
            for sock in busy:
                sock.close()
        with GatewayClient(crowded.client_config()) as client:
            deadline = time.monotonic() + 5
            while busy_connections(crowded):  # the server learns of the 40 closed connections as it reads them
                assert time.monotonic() < deadline
                time.sleep(0.01)
            assert status_latency(client) < 1
