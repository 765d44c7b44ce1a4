"""``gatekit proxy`` reads a request as RFC 9112 frames it, and a request never carries another (issue 34, #5).

The client here is a bare socket: what it sends is sent as written, and every answer is read as it comes, so
that a second answer, or a connection left open after a refusal, is seen.  The gateway is a recording server:
what reached it is what the proxy forwarded.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator

import pytest
import requests

from tests.proxy_wire import DEADLINE, STATUS, Output, Raw, refused, request
from tests.recording_server import RecordingServer
from toolkit.proxy import ProxyServer
from toolkit.proxy.limits import MIB

SMUGGLED = b"GET /api/v2/status/666 HTTP/1.1\r\nHost: x\r\n\r\n"  # what a body must never become: a request


@pytest.fixture
def gateway() -> Iterator[RecordingServer]:
    with RecordingServer() as server:
        server.reply("type=status-response\n&status=approved\n")
        yield server


@pytest.fixture
def proxy(gateway: RecordingServer) -> Iterator[ProxyServer]:
    with ProxyServer(gateway.base_url, out=Output()) as running:
        yield running


# --- Content-Length: 1*DIGIT, one value -----------------------------------------------------------------


@pytest.mark.parametrize(
    "length",
    ["+5", "0x5", "-1", "5x", "5 5", "1e1", "", "5, 6", "\x0b5"],
    ids=["plus", "hex", "minus", "junk-after", "two-numbers", "exponent", "empty", "two-values", "vertical-tab"],
)
def test_a_content_length_that_is_not_one_number_is_refused_and_its_body_never_read_as_a_request(
    proxy: ProxyServer, gateway: RecordingServer, length: str
) -> None:
    answer = refused(proxy, request(f"{STATUS}Content-Length: {length}\r\n", SMUGGLED))
    assert answer.status == 400, answer
    assert "Content-Length" in answer.message or "control character" in answer.message, answer.message
    assert answer.text.startswith("type=error"), answer.text  # (the gateway's form, on the gateway's path)
    assert gateway.requests == []


def test_two_content_lengths_that_differ_are_refused(proxy: ProxyServer, gateway: RecordingServer) -> None:
    answer = refused(proxy, request(f"{STATUS}Content-Length: 5\r\nContent-Length: 38\r\n", SMUGGLED))
    assert answer.status == 400 and "several lengths" in answer.message
    assert gateway.requests == []


@pytest.mark.parametrize(
    "lengths", ["Content-Length: 5 \r\n", "Content-Length:\t5\t\r\n", "Content-Length: 5\r\nContent-Length: 5\r\n",
                "Content-Length: 5, 5\r\n", "Content-Length: 005\r\n"],
    ids=["trailing-space", "tabs", "same-twice", "same-listed", "leading-zeros"],
)  # fmt: skip
def test_a_content_length_with_whitespace_around_it_or_repeated_alike_frames_the_body(
    proxy: ProxyServer, gateway: RecordingServer, lengths: str
) -> None:
    """RFC 9112 5.1: whitespace around a field value is not part of it; 6.3: the same length repeated is one."""
    with Raw(proxy.base_url) as client:
        client.send(request(f"{STATUS}{lengths}", b"a=1&b") + request(f"{STATUS}Content-Length: 3\r\n", b"c=2"))
        first, second = client.answer(), client.answer()
    assert first is not None and second is not None and (first.status, second.status) == (200, 200)
    assert [recorded.body for recorded in gateway.requests] == [b"a=1&b", b"c=2"]


# --- Transfer-Encoding ----------------------------------------------------------------------------------


def test_content_length_with_transfer_encoding_is_refused(proxy: ProxyServer, gateway: RecordingServer) -> None:
    answer = refused(proxy, request(f"{STATUS}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", b"0\r\n\r\n"
                                    + SMUGGLED))  # fmt: skip
    assert answer.status == 400 and "Content-Length and Transfer-Encoding" in answer.message
    assert gateway.requests == []


def test_a_chunked_body_is_read_whole_and_forwarded_with_its_length(
    proxy: ProxyServer, gateway: RecordingServer
) -> None:
    chunks = b"4;ext=1\r\na=1&\r\n3\r\nb=2\r\n0\r\nX-Trailer: t\r\n\r\n"
    with Raw(proxy.base_url) as client:
        client.send(request(f"{STATUS}Transfer-Encoding: chunked\r\n", chunks) + SMUGGLED)
        first, second = client.answer(), client.answer()
    assert first is not None and first.status == 200, first
    assert second is not None  # the request after the chunks: a request of its own, as it was sent
    assert [(r.path, r.body) for r in gateway.requests] == [("/paynet/api/v2/status/1", b"a=1&b=2"),
                                                            ("/paynet/api/v2/status/666", b"")]  # fmt: skip
    assert gateway.requests[0].header("Content-Length") == "7"
    assert gateway.requests[0].header("Transfer-Encoding") is None


# Node's ``http.request`` without a Content-Length, its body written in two parts (``req.write`` twice, then
# ``req.end()``): sent chunked.  Two requests on one kept-alive socket; what each got is printed as JSON.
NODE_TWO_PARTS = """
const http = require("http");
const [url, first, second] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const send = () => new Promise((resolve) => {
  const req = http.request(url, { method: "POST", agent, headers: {
    "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/vnd.pay+json" } }, (res) => {
    let body = "";
    res.on("data", (part) => { body += part; });
    res.on("end", () => resolve({ status: res.statusCode, chunked: req.chunkedEncoding, reused: req.reusedSocket,
                                  body }));
  });
  req.on("error", (error) => resolve({ error: error.message }));
  req.write(first);
  setTimeout(() => { req.write(second); req.end(); }, 50);
});
send().then((one) => send().then((two) => { console.log(JSON.stringify([one, two])); agent.destroy(); }));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_a_node_client_that_writes_its_body_in_two_parts_is_forwarded_whole(
    proxy: ProxyServer, gateway: RecordingServer
) -> None:
    """Issue 36, point 8: Node's ``http.request`` written in two parts got a 411, then its next chunk line was read
    as a request ("Parse Error" in Node).  Its chunked body is read whole and forwarded with its length, and the
    connection serves its next request."""
    url = f"{proxy.base_url}/api/v2/status/1"
    ran = subprocess.run(["node", "-e", NODE_TWO_PARTS, url, "login=m&client_orderid=", "node-1&orderid=7"],
                         capture_output=True, text=True, timeout=DEADLINE * 2, check=True)  # fmt: skip
    answers = json.loads(ran.stdout)
    assert [(a.get("status"), a.get("chunked")) for a in answers] == [(200, True), (200, True)], answers
    assert answers[1]["reused"] is True, answers  # (one connection: nothing of the first request was left on it)
    assert all(a["body"] == "type=status-response\n&status=approved\n" for a in answers), answers
    assert [r.body for r in gateway.requests] == [b"login=m&client_orderid=node-1&orderid=7"] * 2
    assert all(r.header("Content-Length") == "39" and r.header("Transfer-Encoding") is None for r in gateway.requests)


@pytest.mark.parametrize(
    ("encoding", "chunks", "status"),
    [("chunked", b"zz\r\nab\r\n0\r\n\r\n", 400), ("chunked", b"3\r\nabcXY0\r\n\r\n", 400),
     ("gzip, chunked", b"0\r\n\r\n", 501), ("identity", b"", 400), ("chunked, identity", b"", 400),
     ("chunked", b"%x\r\n" % (MIB + 1), 413), ("chunked", b"80000\r\n" + b"a" * 0x80000 + b"\r\n80001\r\n", 413)],
    ids=["size-not-hex", "no-crlf-after-data", "gzip", "identity", "chunked-not-last", "one-chunk-too-large",
         "chunks-too-large"],
)  # fmt: skip
def test_a_transfer_encoding_the_proxy_cannot_frame_is_refused(
    proxy: ProxyServer, gateway: RecordingServer, encoding: str, chunks: bytes, status: int
) -> None:
    answer = refused(proxy, request(f"{STATUS}Transfer-Encoding: {encoding}\r\n", chunks + SMUGGLED))
    assert answer.status == status, answer
    assert gateway.requests == []


def test_transfer_encoding_in_an_http_1_0_request_is_refused(proxy: ProxyServer, gateway: RecordingServer) -> None:
    head = STATUS.replace("HTTP/1.1", "HTTP/1.0")
    answer = refused(proxy, request(f"{head}Transfer-Encoding: chunked\r\n", b"0\r\n\r\n" + SMUGGLED))
    assert answer.status == 400
    assert gateway.requests == []


# --- a body over the limit ------------------------------------------------------------------------------


def test_a_body_over_the_limit_gets_413_and_the_rest_is_never_read_as_a_request(
    proxy: ProxyServer, gateway: RecordingServer
) -> None:
    answer = refused(proxy, request(f"{STATUS}Content-Length: {2 * MIB}\r\n", SMUGGLED))
    assert answer.status == 413 and "at most 1048576" in answer.message, answer
    assert gateway.requests == []


def test_a_client_that_sends_a_body_over_the_limit_whole_reads_the_413(proxy: ProxyServer) -> None:
    """The proxy reads and drops what the client still sends before closing: the client sees the 413, not a
    reset in the middle of its sending."""
    answer = requests.post(f"{proxy.base_url}/api/v2/sale/1", data=b"a" * (2 * MIB), timeout=DEADLINE)
    assert answer.status_code == 413 and answer.headers["Connection"] == "close"


def test_expect_100_continue_is_answered_and_an_over_long_body_refused_before_it_is_sent(
    proxy: ProxyServer, gateway: RecordingServer
) -> None:
    with Raw(proxy.base_url) as client:
        client.send(request(f"{STATUS}Content-Length: 3\r\nExpect: 100-continue\r\n"))
        interim = client.answer()
        assert interim is not None and interim.status == 100
        client.send(b"a=1")
        final = client.answer()
        assert final is not None and final.status == 200
    assert gateway.requests[0].body == b"a=1"
    answer = refused(proxy, request(f"{STATUS}Content-Length: {2 * MIB}\r\nExpect: 100-continue\r\n"))
    assert answer.status == 413


# --- the request line and the header fields --------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "status"),
    [(request(f"{STATUS}Content-Length : 5\r\n", b"a=1&b"), 400),
     (request(f"{STATUS}X-Folded: a\r\n b\r\n"), 400),
     (request(f"{STATUS}Host: y\r\n"), 400),
     (request(STATUS.replace("Host: x\r\n", "")), 400),
     (request("POST /api/v2/status/1 HTTP/2.0\r\nHost: x\r\n"), 505),
     (request("POST /api/v2/status/1\r\nHost: x\r\n"), 400),
     (request(f"{STATUS}X-Bare: a\rb\r\n"), 400),
     (request(STATUS + "".join(f"X-{i}: {'v' * 1000}\r\n" for i in range(70))), 431),
     (request(f"{STATUS}Expect: something\r\n"), 417)],
    ids=["space-before-colon", "folded", "two-hosts", "no-host", "http-2", "http-0.9", "bare-cr", "fields-too-large",
         "unknown-expectation"],
)  # fmt: skip
def test_a_malformed_request_head_is_refused(
    proxy: ProxyServer, gateway: RecordingServer, data: bytes, status: int
) -> None:
    answer = refused(proxy, data + SMUGGLED)
    assert answer.status == status, answer
    assert gateway.requests == []


def test_a_refusal_is_one_masked_line_of_the_proxy_s_output(gateway: RecordingServer) -> None:
    out = Output()
    with ProxyServer(gateway.base_url, out=out) as proxy:
        refused(proxy, request(f"{STATUS}Content-Length: +5\r\n", b"card=4444555566661111"))
        refused(proxy, request("GET /x?pan=4444555566661111&x=%zz HTTP/1.1\r\nHost: x\r\n"))
    lines = out.text.splitlines()
    assert lines[0].endswith("400 (refused by the proxy, not forwarded)  0 ms  1 problem"), lines
    assert lines[1] == "  ! Content-Length '+5': not a number of bytes (1*DIGIT, RFC 9112 6.3)", lines
    assert "4444555566661111" not in out.text and "444455******1111" in out.text, out.text
    assert proxy.with_problems == 2
