"""``gatekit proxy`` forwards to its ``--to`` and nowhere else: no request target changes the host, the port or
the scheme, nor leaves ``--to``'s path (issue 34, #5: ``@127.0.0.1:PORT/x`` was forwarded to that host).

Two servers listen: the gateway behind ``--to``, and another one a request target might name.  Neither may
receive what the proxy refuses.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.proxy_wire import Raw, refused, request
from tests.recording_server import RecordingServer
from toolkit.proxy import ProxyServer


@pytest.fixture
def gateway() -> Iterator[RecordingServer]:
    with RecordingServer(prefix="") as server:  # (--to without a path: the case that made the proxy an open one)
        server.reply("type=status-response\n&status=approved\n")
        yield server


@pytest.fixture
def elsewhere() -> Iterator[RecordingServer]:
    with RecordingServer(prefix="") as server:
        server.reply("type=status-response\n&status=approved\n")
        yield server


def _host(server: RecordingServer) -> str:
    return server.base_url.removeprefix("http://")


@pytest.mark.parametrize(
    "target",
    ["@{other}/api/v2/status/1", "http://{other}/api/v2/status/1", "//{other}/api/v2/status/1",
     ".{other}/api/v2/status/1", ":1@{other}/x", "{other}/x", "*", "api/v2/status/1", "/api/v2/../../x",
     "/%2e%2E/x", "/api/.%2e/x", "/a%2Fb", "/a%5cb", "/a\\b", "/a#b", "/a%zz"],
    ids=["at-sign", "absolute-form", "network-path", "host-suffix", "port-then-userinfo", "authority", "asterisk",
         "relative", "dot-segments", "escaped-dots", "half-escaped-dots", "escaped-slash", "escaped-backslash",
         "backslash", "fragment", "bad-escape"],
)  # fmt: skip
def test_a_request_target_that_is_not_a_path_under_to_is_refused(
    gateway: RecordingServer, elsewhere: RecordingServer, target: str
) -> None:
    with ProxyServer(gateway.base_url) as proxy:
        target = target.format(other=_host(elsewhere))
        answer = refused(proxy, request(f"POST {target} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n", b"a=1"))
    assert answer.status == 400, answer
    assert answer.message.startswith("gatekit proxy: request target"), answer.message
    assert gateway.requests == [] and elsewhere.requests == []


def test_a_target_naming_another_host_is_told_the_proxy_is_no_open_proxy(
    gateway: RecordingServer, elsewhere: RecordingServer
) -> None:
    with ProxyServer(gateway.base_url) as proxy:
        answer = refused(proxy, request(f"GET @{_host(elsewhere)}/x HTTP/1.1\r\nHost: x\r\n"))
    assert "it is no open proxy" in answer.message and gateway.base_url in proxy.upstream
    assert elsewhere.requests == []


@pytest.mark.parametrize(
    ("prefix", "target", "forwarded"),
    [("", "/api/v2/status/1?x=1", "/api/v2/status/1?x=1"), ("/paynet", "/api/v2/status/1", "/paynet/api/v2/status/1"),
     ("/paynet", "/", "/paynet/"), ("", "/a:b@c/d", "/a:b@c/d")],
    ids=["no-path", "a-path", "root", "colon-and-at-inside-the-path"],
)  # fmt: skip
def test_a_path_goes_to_the_origin_and_path_of_to(prefix: str, target: str, forwarded: str) -> None:
    with RecordingServer(prefix=prefix) as gateway, ProxyServer(gateway.base_url) as proxy, Raw(proxy.base_url) as c:
        gateway.reply("type=status-response\n&status=approved\n")
        c.send(request(f"POST {target} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n", b"a=1"))
        answer = c.answer()
    assert answer is not None and answer.status == 200, answer
    assert [recorded.path for recorded in gateway.requests] == [forwarded]


@pytest.mark.parametrize(
    "url",
    ["http://user@127.0.0.1:9/paynet", "http://127.0.0.1:9/paynet?x=1", "ftp://127.0.0.1/", "http:///paynet"],
    ids=["user", "query", "scheme", "no-host"],
)
def test_a_to_url_that_is_not_an_origin_and_a_path_is_a_usage_error(url: str) -> None:
    from toolkit.cli import main
    from toolkit.proxy.upstream import Upstream

    with pytest.raises(ValueError, match="the gateway's URL"):
        Upstream(url)
    assert main(["proxy", "--to", url, "--port", "0"]) == 2


def test_the_upstream_url_never_leaves_the_origin_of_to() -> None:
    from toolkit.proxy.upstream import Upstream

    upstream = Upstream("http://127.0.0.1:9")
    assert upstream.url_for("/api/v2/status/1") == "http://127.0.0.1:9/api/v2/status/1"
    for target in ("@evil.example/x", ".evil.example/x", ":80@evil.example/x"):
        with pytest.raises(ValueError, match="would leave"):
            upstream.url_for(target)
