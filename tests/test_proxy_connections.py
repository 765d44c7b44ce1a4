"""``gatekit proxy``'s connections: an idle or slow client is closed at its deadline and frees its thread, the
connections at once are bounded, and a client that leaves early is no traceback (issue 34, #5: idle and
slowloris connections held 350 threads; 50 clients leaving early printed 50 BrokenPipeError tracebacks).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import requests

from tests.hostile_server import HostileServer
from tests.proxy_wire import DEADLINE, STATUS, Raw, request
from tests.recording_server import RecordingServer
from tests.test_proxy import ProxyProcess
from toolkit.proxy import ProxyServer
from toolkit.proxy.limits import MIB, Limits

SHORT = 0.5  # seconds: the deadlines of these proxies (the test waits for what happens at them, up to DEADLINE)


def until(condition: Callable[[], bool], what: str) -> None:
    """Wait for ``condition`` up to ``DEADLINE`` (a deadline poll: it looks again every 20 ms)."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"not within {DEADLINE} s: {what}"
        threading.Event().wait(0.02)


def proxy_threads() -> int:
    return threading.active_count()


@pytest.fixture
def gateway() -> Iterator[RecordingServer]:
    with RecordingServer() as server:
        server.reply("type=status-response\n&status=approved\n")
        yield server


def test_a_kept_alive_connection_left_idle_is_closed_at_the_idle_timeout(gateway: RecordingServer) -> None:
    limits = Limits(idle_timeout=SHORT)
    with ProxyServer(gateway.base_url, limits=limits) as proxy, Raw(proxy.base_url) as client:
        for _ in range(2):  # (kept alive: a second request on it is served)
            client.send(request(f"{STATUS}Content-Length: 3\r\n", b"a=1"))
            answer = client.answer()
            assert answer is not None and answer.status == 200 and answer.headers["connection"] == "keep-alive"
        assert client.closed(), f"the idle connection is still open after {DEADLINE} s"
        assert client.buffer == b""  # (closed silently: an idle client asked nothing)
        until(lambda: proxy.open_connections == 0, "the connection's thread ended")


def test_a_connection_that_sends_nothing_is_closed_at_the_request_timeout(gateway: RecordingServer) -> None:
    with ProxyServer(gateway.base_url, limits=Limits(request_timeout=SHORT)) as proxy, Raw(proxy.base_url) as client:
        assert client.closed()
        assert client.buffer == b""


def test_slowloris_clients_get_408_at_the_request_deadline_and_those_over_the_cap_a_503(
    gateway: RecordingServer,
) -> None:
    """Four clients trickle header fields forever (each byte well within any read timeout); the fifth finds
    the proxy full.  At the request deadline the four are answered 408 and closed; their threads end."""
    before = proxy_threads()
    limits = Limits(request_timeout=3.0, max_connections=4)  # (time for the fifth to come before the deadline)
    stop = threading.Event()
    with ProxyServer(gateway.base_url, limits=limits) as proxy:
        slow = [Raw(proxy.base_url) for _ in range(4)]
        for client in slow:
            client.send(STATUS.encode())
        trickle = threading.Thread(target=_trickle, args=(slow, stop), daemon=True)
        trickle.start()
        until(lambda: proxy.open_connections == 4, "four connections served")
        with Raw(proxy.base_url) as extra:
            busy = extra.answer()
            assert busy is not None and busy.status == 503 and busy.headers["retry-after"] == "1", busy
            assert "--max-connections" in busy.text and extra.closed()
        try:
            for client in slow:
                answer = client.answer()
                assert answer is not None and answer.status == 408, answer
                assert "--request-timeout" in answer.text
                assert client.closed()
        finally:
            stop.set()
            trickle.join(DEADLINE)
            for client in slow:
                client.sock.close()
        until(lambda: proxy.open_connections == 0, "every slow connection's thread ended")
        answer = requests.post(f"{proxy.base_url}/api/v2/status/1", data={"a": "1"}, timeout=DEADLINE)
        assert answer.status_code == 200  # (served again)
        summary = proxy.summary()
        assert "4 request(s) not received in time" in summary and "1 connection(s) turned away" in summary, summary
    assert gateway.requests[-1].body == b"a=1" and len(gateway.requests) == 1
    until(lambda: proxy_threads() <= before, f"the proxy's threads ended ({threading.enumerate()})")


def _trickle(clients: list[Raw], stop: threading.Event) -> None:
    """A slowloris: one more header field every 50 ms, never the empty line that ends them."""
    number = 0
    while not stop.wait(0.05):
        number += 1
        for client in clients:
            with contextlib.suppress(OSError):  # (closed by the proxy)
                client.send(f"X-{number}: a\r\n".encode())


def test_a_stopped_proxy_closes_its_idle_connections_and_ends_its_threads(gateway: RecordingServer) -> None:
    before = proxy_threads()
    proxy = ProxyServer(gateway.base_url).start()
    clients = [Raw(proxy.base_url) for _ in range(5)]
    try:
        for client in clients:
            client.send(request(f"{STATUS}Content-Length: 3\r\n", b"a=1"))
            assert client.answer() is not None
        proxy.stop()
        assert all(client.closed() for client in clients)
    finally:
        for client in clients:
            client.sock.close()
    until(lambda: proxy_threads() <= before, "the proxy's threads ended")


# --- clients that leave early -----------------------------------------------------------------------------


def test_clients_that_leave_before_their_answer_print_no_traceback(tmp_path: object) -> None:
    """``gatekit proxy`` as users start it; 20 clients read the status line of an 8 MiB answer and close."""
    body = b"x" * (8 * MIB)
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {len(body)}\r\n\r\n"
    with HostileServer([(head.encode() + body, 0.0)]) as hostile:
        proxy = ProxyProcess("--to", hostile.base_url)
        try:
            for _ in range(20):
                _leave_early(proxy.url)
            heads = [proxy.exchange()[0] for _ in range(20)]
            assert all(" 200 " in line for line in heads), heads
            assert requests.get(f"{proxy.url}/last", timeout=DEADLINE).status_code == 200
            proxy.exchange()
        finally:
            code, stderr = proxy.stop()
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    assert stderr.splitlines() == ["gatekit proxy: 21 exchange(s), 0 with problems"], stderr
    assert code == 0


def _leave_early(url: str) -> None:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=DEADLINE) as sock:
        sock.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(12).startswith(b"HTTP/1.1 200")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # (closed with a reset)
