"""The proxy's way to the gateway: ``Upstream``, the one origin of ``--to``, HTTPS verified with the system's CA store.

- The request target never changes where a request goes: the URL is always ``--to``'s origin and path, then
  the client's path (``framing.origin_form`` has made sure it is one); ``url_for`` checks it once more.
- ``--timeout`` is the whole exchange's deadline: connecting, sending, the status line, the header fields and
  every byte of the body, held by a ``Watchdog`` (a gateway that trickles its answer is cut at the deadline).
- The answer comes in parts (``Answer.read``): the proxy passes a large one on as it comes, never whole.
- A few connections are kept alive between exchanges (``KEPT_FOR`` seconds at most); one found closed by the
  gateway is dropped before it is used.  One the gateway closes as it is used fails before any byte of the
  answer: an idempotent request is then sent again on a new connection, a POST never (it may be a payment).

``truststore`` makes Python's TLS use the operating system's certificates (Debian's ``ca-certificates``, a
company's own CA added there), as the merchant's other HTTP clients do, rather than a bundled CA list.
"""

from __future__ import annotations

import http.client
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from urllib.parse import urlsplit

import truststore

from toolkit.masking import mask_text
from toolkit.proxy.deadline import Deadline, Watch, Watchdog

# Hop-by-hop headers (RFC 9110 7.6.1), and what the proxy sets itself on the way to the gateway.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
                        "te", "trailer", "transfer-encoding", "upgrade"})  # fmt: skip
_SET_BY_THE_PROXY = frozenset({"host", "content-length", "accept-encoding", "expect"})
_BODILESS = frozenset({"GET", "HEAD", "DELETE", "OPTIONS", "TRACE"})
_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})  # (RFC 9110 9.2.2: sent again safely)
_GONE_BEFORE_ANSWER = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)
KEPT_ALIVE = 8  # idle connections to the gateway kept for the next exchanges
KEPT_FOR = 4.0  # seconds one is kept idle (servers often close theirs after 5: not used as they close it)


class UpstreamError(Exception):
    """No (whole) answer from the gateway: the message says why, masked."""


class UpstreamTimeout(UpstreamError):
    """The exchange ran past ``--timeout``."""


def forwarded(headers: Iterable[tuple[str, str]], *, request: bool) -> list[tuple[str, str]]:
    """The end-to-end header fields of a message: hop-by-hop ones left out, and those its ``Connection`` names;
    for a request, also those the proxy sets itself (``Host``, ``Content-Length``...)."""
    items = list(headers)
    named = {token.strip().lower() for name, value in items if name.lower() == "connection"
             for token in value.split(",")}  # fmt: skip
    dropped = HOP_BY_HOP | named | (_SET_BY_THE_PROXY if request else frozenset())
    return [(name, value) for name, value in items if name.lower() not in dropped]


class Upstream:
    """The gateway at ``url`` (``https://sandbox.example/paynet``): ``send`` a request, read its ``Answer``."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{mask_text(url)}: the gateway's URL starts with http:// or https:// and names a host")
        if parts.username is not None or parts.query or parts.fragment:
            raise ValueError(f"{mask_text(url)}: the gateway's URL has no user, query or fragment")
        self.url = url.rstrip("/")
        self.scheme, self.netloc = parts.scheme, parts.netloc
        self.host, self.port = parts.hostname, parts.port
        self.base_path = parts.path.rstrip("/")
        self._context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT) if parts.scheme == "https" else None
        self._idle: list[tuple[http.client.HTTPConnection, float]] = []  # (and since when it is idle)
        self._lock = threading.Lock()
        self.watchdog = Watchdog()

    def url_for(self, target: str) -> str:
        """``--to`` and the client's path: the URL the request goes to (ValueError for another origin)."""
        url = self.url + target
        parts = urlsplit(url)
        if not target.startswith("/") or (parts.scheme, parts.netloc) != (self.scheme, self.netloc):
            raise ValueError(f"{mask_text(target)[:100]!r} would leave {self.url}")
        return url

    def send(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes, deadline: Deadline) -> Answer:
        """The request to ``url_for(target)``; its answer once its status line and header fields have come."""
        self.url_for(target)
        while True:
            connection, watch, reused = self._connection(deadline)
            try:
                self._request(connection, method, target, headers, body)
                return Answer(self, connection, connection.getresponse(), watch, deadline)
            except (OSError, http.client.HTTPException, ValueError) as exc:
                watch.cancel()
                connection.close()
                again = reused and method.upper() in _IDEMPOTENT and isinstance(exc, _GONE_BEFORE_ANSWER)
                if not again or watch.fired:
                    raise _failure(exc, watch, deadline) from None

    def _request(
        self, connection: http.client.HTTPConnection, method: str, target: str, headers: list[tuple[str, str]],
        body: bytes,
    ) -> None:  # fmt: skip
        connection.putrequest(method, self.base_path + target, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", self.netloc)
        for name, value in headers:
            connection.putheader(name, value)
        connection.putheader("Accept-Encoding", "identity")  # (the answer is passed on as it comes)
        if body or method.upper() not in _BODILESS:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body or None)

    def _connection(self, deadline: Deadline) -> tuple[http.client.HTTPConnection, Watch, bool]:
        """A kept connection (``True``: reused) or a new one, watched until ``deadline``."""
        with self._lock:
            while self._idle:
                connection, since = self._idle.pop()
                sock = connection.sock
                fresh = time.monotonic() - since < KEPT_FOR
                if fresh and sock is not None and not _readable(sock):
                    sock.settimeout(deadline.remaining())
                    return connection, self.watchdog.watch(sock, deadline), True
                connection.close()
        if self._context is not None:
            connection = http.client.HTTPSConnection(self.host, self.port, timeout=deadline.remaining(),
                                                     context=self._context)  # fmt: skip
        else:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=deadline.remaining())
        try:
            connection.connect()  # (the TCP connection and the TLS handshake each end by the deadline)
        except OSError as exc:
            connection.close()
            raise (UpstreamTimeout if deadline.expired or isinstance(exc, TimeoutError) else UpstreamError)(
                _said(exc, deadline)
            ) from None
        assert connection.sock is not None
        return connection, self.watchdog.watch(connection.sock, deadline), False

    def keep(self, connection: http.client.HTTPConnection) -> None:
        """A connection whose answer was read to its end, for a next exchange."""
        with self._lock:
            if len(self._idle) < KEPT_ALIVE and connection.sock is not None:
                self._idle.append((connection, time.monotonic()))
                return
        connection.close()

    def close(self) -> None:
        """Every exchange under way cut (the proxy stops), every kept connection closed."""
        self.watchdog.close()
        with self._lock:
            for connection, _ in self._idle:
                connection.close()
            self._idle.clear()


class Answer:
    """The gateway's answer: ``status``, ``reason``, ``headers`` (as they came), ``length`` (its Content-Length,
    None when chunked or ended by closing); then ``read()`` its body part by part, ``b""`` at its end."""

    def __init__(
        self,
        upstream: Upstream,
        connection: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        watch: Watch,
        deadline: Deadline,
    ) -> None:
        self._upstream, self._connection, self._response = upstream, connection, response
        self._watch, self._deadline = watch, deadline
        self.status, self.reason = response.status, response.reason
        self.headers: list[tuple[str, str]] = response.getheaders()
        declared = response.getheader("Content-Length", "")
        self.length = int(declared) if declared.isdigit() and len(declared) < 16 else response.length
        self.complete = False
        self._closed = False

    def read(self, size: int = 1 << 16) -> bytes:
        """The next part of the body; ``UpstreamTimeout`` past the deadline, ``UpstreamError`` for a body cut short."""
        try:
            data = self._response.read1(size)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            self.close()
            raise _failure(exc, self._watch, self._deadline) from None
        if not data and not self.complete:
            if self._watch.fired or self._deadline.expired:  # (a shut socket reads as an end of the body)
                self.close()
                raise _failure(TimeoutError(), self._watch, self._deadline)
            if self._response.length:
                self.close()
                raise UpstreamError(f"the gateway closed the connection {self._response.length} bytes before the end "
                                    "of its answer")  # fmt: skip
            self.complete = True
        return data

    def close(self) -> None:
        """Done with the answer: its connection kept for the next exchange when the answer was read whole."""
        if self._closed:
            return
        self._closed = True
        self._watch.cancel()
        reusable = self.complete and not self._watch.fired and not self._response.will_close
        self._response.close()
        if reusable:
            self._upstream.keep(self._connection)
        else:
            self._connection.close()


def _readable(sock: socket.socket) -> bool:
    """Whether an idle connection has something to read: the gateway closed it (or sent what it should not)."""
    with selectors.DefaultSelector() as selector:  # (not ``select.select``: it fails on descriptors above 1023)
        selector.register(sock, selectors.EVENT_READ)
        return bool(selector.select(0))


def _failure(exc: BaseException, watch: Watch, deadline: Deadline) -> UpstreamError:
    if watch.stopped:
        return UpstreamError("the proxy is stopping")
    if watch.fired or deadline.expired or isinstance(exc, TimeoutError):
        return UpstreamTimeout(_said(exc, deadline))
    return UpstreamError(_said(exc, deadline))


def _said(exc: BaseException, deadline: Deadline) -> str:
    if deadline.expired or isinstance(exc, TimeoutError):
        return f"no whole answer within {deadline.seconds:g} s (--timeout)"
    text = str(exc) or exc.__class__.__name__
    return mask_text(f"{exc.__class__.__name__}: {text}" if text != exc.__class__.__name__ else text)[:300]


__all__ = ["Answer", "Upstream", "UpstreamError", "UpstreamTimeout", "forwarded"]
