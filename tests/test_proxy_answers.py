"""``gatekit proxy`` and the gateway's answers: ``--timeout`` holds the whole exchange, and a large answer is passed
on as it comes, with a bounded part of it recorded (issue 34, #5: a trickling gateway held an exchange 19 s
with ``--timeout`` per read; a 300 MB answer was held whole, 862 MB of memory, and written to a 314 MB HAR).

The gateways here are hostile ones (``tests/hostile_server.py``): they answer at the pace they are told.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.hostile_server import HostileServer, Step, drip
from tests.leaks import har_errors, leaks
from tests.proxy_wire import DEADLINE, Output, Raw, request
from tests.test_proxy import ProxyProcess
from toolkit.proxy import ProxyServer, bodies
from toolkit.proxy.bodies import Body
from toolkit.proxy.exchange import Exchange as Proxied
from toolkit.proxy.limits import MIB, Limits
from toolkit.proxy.recording import OrderRecording
from toolkit.recording import har
from toolkit.wire import MEDIA_TYPE

TIMEOUT = 1.0  # --timeout of these proxies; the hostile gateways take 20 s or more
CARD = b"4444555566661111"


def head(length: int | None, content_type: str = "text/plain; charset=utf-8", extra: str = "") -> bytes:
    framing = f"Content-Length: {length}\r\n" if length is not None else ""
    return f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n{framing}{extra}\r\n".encode()


def entries(folder: Path) -> list[dict[str, Any]]:
    index = json.loads((folder / "index.json").read_text())
    return [entry for scenario in index["scenarios"] for entry in
            json.loads((folder / scenario["file"]).read_text())["log"]["entries"]]  # fmt: skip


# --- --timeout: the whole exchange ----------------------------------------------------------------------

ANSWER = b'{"type": "status-response", "status": "approved", "serial-number": "s-1", "paynet-order-id": "7"}'
TRICKLES = {
    "the body": [(head(len(ANSWER), MEDIA_TYPE), 0.0), *drip(ANSWER, 0.2)],
    "the head": [*drip(head(len(ANSWER), MEDIA_TYPE), 0.2), (ANSWER, 0.0)],
}


@pytest.mark.parametrize("script", TRICKLES.values(), ids=TRICKLES.keys())
def test_a_gateway_that_trickles_its_answer_is_cut_at_the_timeout_and_the_client_gets_a_504(
    script: list[Step], tmp_path: Path
) -> None:
    out = Output()
    limits = Limits(timeout=TIMEOUT)
    with HostileServer(script) as hostile, ProxyServer(hostile.base_url, limits=limits, out=out, record=tmp_path) as p:
        # (the gateway would take 20 s; the client waits DEADLINE, 10 s, at most)
        answer = requests.post(
            f"{p.base_url}/api/v2/status/1", data={"login": "m"}, headers={"Accept": MEDIA_TYPE}, timeout=DEADLINE
        )
    assert answer.status_code == 504, answer.text
    assert answer.json()["type"] == "error", answer.text
    assert "no whole answer within 1 s (--timeout)" in answer.json()["error-message"]
    assert "status 1  no answer: no whole answer within 1 s (--timeout)" in out.text, out.text
    [entry] = entries(tmp_path)
    assert entry["response"]["status"] == 0 and "within 1 s (--timeout)" in entry["_error"], entry


def test_a_gateway_that_never_answers_is_a_504_at_the_timeout() -> None:
    with HostileServer([(b"", 30.0)]) as hostile, ProxyServer(hostile.base_url, limits=Limits(timeout=TIMEOUT)) as p:
        answer = requests.get(f"{p.base_url}/x", timeout=DEADLINE)
    assert answer.status_code == 504 and "--timeout" in answer.text


def test_a_gateway_that_is_not_there_is_a_502(unused_port: int) -> None:
    with ProxyServer(f"http://127.0.0.1:{unused_port}") as proxy:
        answer = requests.get(f"{proxy.base_url}/x", timeout=DEADLINE)
    assert answer.status_code == 502 and "ConnectionRefusedError" in answer.text, answer.text


@pytest.fixture
def unused_port() -> Iterator[int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        yield probe.getsockname()[1]  # (bound, not listening: a connection is refused)


# --- large answers ---------------------------------------------------------------------------------------


def test_a_large_answer_reaches_the_client_before_the_gateway_has_sent_it_all(tmp_path: Path) -> None:
    """2 MiB come, then the gateway waits 30 s: the client has them at once.  Cut there, the answer's
    connection is closed short of its Content-Length, and the line and the recording say so."""
    out = Output()
    script = [(head(3 * MIB) + b"a" * (2 * MIB), 30.0), (b"b" * MIB, 0.0)]
    with contextlib.ExitStack() as stack:
        hostile = HostileServer(script)  # (its address is known before it starts)
        proxy = stack.enter_context(ProxyServer(hostile.base_url, out=out, record=tmp_path))
        client = stack.enter_context(Raw(proxy.base_url))
        with hostile:
            client.send(request("GET /files/big HTTP/1.1\r\nHost: x\r\n"))
            while len(client.buffer.partition(b"\r\n\r\n")[2]) < 2 * MIB:
                assert client.receive(), "the connection ended early"
        assert client.closed()  # the gateway went away: the client is told by the end of the connection
        answer_head, _, body = client.buffer.partition(b"\r\n\r\n")
        assert b"Content-Length: 3145728" in answer_head and body == b"a" * (2 * MIB), len(body)
    line = out.text.splitlines()[-1]
    assert "GET /files/big  200 (the gateway closed the connection 1048576 bytes before the end" in line, line
    assert "the answer was cut after 2097152 bytes" in line
    [entry] = entries(tmp_path)
    assert entry["response"]["content"]["size"] == 2 * MIB and "cut after" in entry["_error"]


FRAMINGS = {
    "content-length": lambda body: [(head(len(body)) + body, 0.0)],
    "chunked": lambda body: [(head(None, extra="Transfer-Encoding: chunked\r\n"), 0.0),
                             *((b"%x\r\n%b\r\n" % (len(part), part), 0.0) for part in _parts(body)),
                             (b"0\r\n\r\n", 0.0)],
    "closed": lambda body: [(head(None, extra="Connection: close\r\n") + body, 0.0)],
}  # fmt: skip


def _parts(body: bytes, size: int = 300_000) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


@pytest.mark.parametrize("framing", FRAMINGS.values(), ids=FRAMINGS.keys())
def test_a_large_answer_is_passed_on_whole_however_the_gateway_frames_it(
    framing: Callable[[bytes], list[Step]],
) -> None:
    body = bytes(range(256)) * (3 * MIB // 256) + b"end"
    with HostileServer(framing(body)) as hostile, ProxyServer(hostile.base_url, out=Output()) as proxy:
        answer = requests.get(f"{proxy.base_url}/files/big", timeout=DEADLINE)
        again = requests.get(f"{proxy.base_url}/files/big", timeout=DEADLINE)  # (the connection served another)
    assert answer.status_code == 200 and hashlib.sha256(answer.content).digest() == hashlib.sha256(body).digest()
    assert again.content == answer.content


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak memory read from /proc")
def test_a_large_answer_costs_the_proxy_little_memory_and_its_recording_keeps_a_megabyte(tmp_path: Path) -> None:
    """96 MiB through ``gatekit proxy`` as users start it: its peak memory grows by far less than the answer,
    and the HAR keeps the first MiB (a card number cut at its end left out) with the true sizes."""
    first = b"a" * (MIB - 8) + CARD + b"a" * (64 * 1024 - 8)
    chunk = b"x" * (64 * 1024)
    rest = 96 * 16 - 1
    size = len(first) + rest * len(chunk)
    with HostileServer([(head(size) + first, 0.0), *[(chunk, 0.0)] * rest]) as hostile:
        proxy = ProxyProcess("--to", hostile.base_url, "--record", str(tmp_path))
        try:
            before = _peak_kib(proxy.process.pid)
            digest = hashlib.sha256()
            with requests.get(f"{proxy.url}/files/big", stream=True, timeout=DEADLINE) as answer:
                received = 0
                for part in answer.iter_content(1 << 16):
                    digest.update(part)
                    received += len(part)
            assert proxy.exchange()[0].endswith("ok")
            grown = (_peak_kib(proxy.process.pid) - before) / 1024
        finally:
            code, _ = proxy.stop()
    assert received == size and digest.digest() == hashlib.sha256(first + chunk * rest).digest()
    assert grown < 32, f"the proxy's peak memory grew by {grown:.0f} MiB for a {size // MIB} MiB answer"
    har = tmp_path / "other-requests.har"
    assert har.stat().st_size < 2 * MIB and har_errors(har) == [], har.stat().st_size
    [entry] = entries(tmp_path)
    content = entry["response"]["content"]
    assert (content["size"], entry["response"]["bodySize"]) == (size, size)
    assert content["text"] == "a" * (MIB - 8) and content["_truncated"] == size - (MIB - 8)
    assert f"{size - (MIB - 8)} of {size} bytes left out" in content["comment"]
    assert leaks(har.read_text()) == [] and "44445555" not in har.read_text()
    assert code == 0


def _peak_kib(pid: int) -> int:
    """The process's peak resident memory (``VmHWM``), in KiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))


def test_a_head_request_gets_the_gateway_s_content_length_and_no_body() -> None:
    with (
        HostileServer([(head(1234), 0.0)]) as hostile,
        ProxyServer(hostile.base_url, out=Output()) as proxy,
        Raw(proxy.base_url) as client,
    ):
        client.send(request("HEAD /files/big HTTP/1.1\r\nHost: x\r\n") * 2)
        while client.buffer.count(b"\r\n\r\n") < 2:
            assert client.receive(), "the connection ended early"
    answers = client.buffer.split(b"\r\n\r\n")
    assert answers[2] == b"" and all(b"Content-Length: 1234" in part for part in answers[:2]), client.buffer


class ClosingGateway:
    """Answers the first request of each connection and closes the connection on its second, unanswered (what a
    gateway closing an idle connection as the proxy reuses it does)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.requests = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def __enter__(self) -> ClosingGateway:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.listener.shutdown(socket.SHUT_RDWR)  # (wakes the accept that waits: closing alone does not)
        self.listener.close()
        self.thread.join(DEADLINE)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        with conn:
            for answered in (True, False):  # (the second request: the connection closed without an answer)
                if not _a_request_came(conn):
                    return
                self.requests += 1
                if answered:
                    conn.sendall(head(len(ANSWER), MEDIA_TYPE) + ANSWER)


def _a_request_came(conn: socket.socket) -> bool:
    """A request head (these come without a body) read whole; False when the connection ends first."""
    conn.settimeout(DEADLINE)
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            chunk = conn.recv(1 << 16)
        except OSError:
            return False
        if not chunk:
            return False
        data += chunk
    return True


@pytest.mark.parametrize(("method", "second"), [("GET", 200), ("POST", 502)])
def test_a_kept_connection_the_gateway_closes_is_retried_for_an_idempotent_request_only(
    method: str, second: int
) -> None:
    """A GET is sent again on a new connection; a POST is not (the gateway may have taken it: a payment twice)."""
    with ClosingGateway() as gateway, ProxyServer(gateway.base_url, out=Output()) as proxy:
        first = requests.request(method, f"{proxy.base_url}/x", timeout=DEADLINE)
        again = requests.request(method, f"{proxy.base_url}/x", timeout=DEADLINE)
    assert (first.status_code, again.status_code) == (200, second), again.text
    assert gateway.requests == (3 if method == "GET" else 2)
    if method == "POST":
        assert "RemoteDisconnected" in again.text or "ConnectionResetError" in again.text, again.text


@pytest.mark.parametrize(
    "cut",
    [b"4444555566", b"4444 5555 66", b"4444-5555-666", b"444455556666%2", b"4444%205555%2066", b"4444+5555+6"],
    ids=["digits", "spaces", "dashes", "half-an-escape", "escaped-spaces", "plus-signs"],
)
def test_a_body_cut_inside_a_card_number_keeps_no_digit_of_it(cut: bytes) -> None:
    body = Body(limit=len(b"pan=") + len(cut))
    assert body.add(b"pan=" + cut + b"1111&x=1") == b"1111&x=1"
    text, left_out = body.text()
    assert text == "pan=" and left_out == len(cut) + 8
    whole = Body(limit=100)
    whole.add(b"pan=" + cut)
    assert whole.text() == (f"pan={cut.decode()}", 0)  # (a body kept whole is kept as it is: masked later)


def test_a_megabyte_of_digits_cut_is_trimmed_at_once() -> None:
    body = Body(limit=MIB)
    body.add(b"7" * (2 * MIB))
    started = time.monotonic()
    text, left_out = body.text()
    assert len(text) == MIB - 256 and left_out == MIB + 256
    assert time.monotonic() - started < 5  # (a scan from each position of the run would take hours)


def test_an_order_s_recording_keeps_bodies_up_to_its_budget_then_sizes_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bodies, "ARCHIVE_BODIES", 2500)
    order = OrderRecording()
    for _ in range(4):
        body = Body(limit=1000)
        body.add(b"x" * 2000)
        order.add(Proxied("GET", "/x", None, [], status=200, body=body), "http://gw/x", {"Content-Type": "text/plain"})
    contents = [har.entry(record)["response"]["content"] for record in order.recorder.records]
    assert [len(content["text"]) for content in contents] == [1000, 1000, 500, 0]
    assert [content["size"] for content in contents] == [2000] * 4
    assert [content["_truncated"] for content in contents] == [1000, 1000, 1500, 2000]
