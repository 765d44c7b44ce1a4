"""The client's transport: one HTTP exchange with a total deadline and a bounded answer.

``requests``' ``timeout`` bounds each socket operation, not the call: a gateway that sends one
byte a second never lets a read time out.  Here the call has a deadline that covers connect,
request, response head and body: a watchdog shuts the connection's socket down when it passes,
which ends any read in progress.  The body is read in chunks up to ``max_bytes``; a bigger answer
is refused without reading the rest.

    answer = exchange(session, prepared, deadline=10.0, max_bytes=1 << 20)

Raises ``NoAnswer`` (connection failed, deadline passed) or ``TooLarge``; the caller maps them to
``TransportError`` and ``ProtocolError``.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import itertools
import os
import socket
import threading
import time
import urllib.request
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from requests.hooks import default_hooks
from requests.utils import resolve_proxies

MAX_RESPONSE_BYTES = 1 << 20  # 1 MiB: a gateway answer is a few hundred bytes, a 3-D Secure page a few KB
_CHUNK = 64 * 1024
_GRACE = 0.1
_TICK = 0.05  # the watchdog wakes at most this often: deadlines are kept to within 50 ms


class NoAnswer(Exception):
    """No complete HTTP answer: connection refused or reset, a timeout, or the call's deadline passed.

    The message completes "no answer from URL": `` within 3s: ReadTimeout``, ``: ConnectionError``.
    """


class TooLarge(Exception):
    """The answer is larger than the limit."""


class _Watch:
    """The sockets of one call, shut down together when its deadline passes."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def attach(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            fired = self.fired
        if fired:
            _shutdown(sock)

    def disarm(self) -> None:
        """The call is over: when the deadline comes there is nothing left to shut down."""
        with self._lock:
            self._sockets = []

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    """End every read and write on ``sock`` at once (the plain socket's method: safe on a TLS socket too)."""
    with contextlib.suppress(OSError):  # already closed
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Watchdog:
    """One daemon thread that fires watches at their deadlines (a heap; no thread per call)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Watch]] = []
        self._counter = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, seconds: float) -> _Watch:
        watch = _Watch(time.monotonic() + seconds)
        with self._cond:
            earliest = not self._heap or watch.deadline < self._heap[0][0]
            heapq.heappush(self._heap, (watch.deadline, next(self._counter), watch))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="gatekit-deadlines", daemon=True)
                self._thread.start()
            if earliest:  # otherwise the thread already wakes in time: no wake-up per call
                self._cond.notify()
        return watch

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cond.wait(None if wait is None else max(wait, _TICK))
                due = []
                while self._heap and self._heap[0][0] <= time.monotonic():
                    due.append(heapq.heappop(self._heap)[2])
            for watch in due:
                watch.fire()


_WATCHDOG = _Watchdog()
_CURRENT = threading.local()  # the watch of the call this thread is making


def _attach_current(sock: socket.socket | None) -> None:
    watch: _Watch | None = getattr(_CURRENT, "watch", None)
    if watch is not None:
        watch.attach(sock)


@functools.cache
def _watched(base: type[Any]) -> type[Any]:
    """A urllib3 connection class whose sockets join the current call's watch (new ones and reused ones)."""

    class Watched(base):  # type: ignore[misc]
        _gatekit_watched = True

        def _new_conn(self) -> socket.socket:
            sock: socket.socket = super()._new_conn()
            _attach_current(sock)
            return sock

        def request(self, *args: Any, **kwargs: Any) -> None:
            _attach_current(self.sock)
            super().request(*args, **kwargs)

    Watched.__name__ = f"Watched{base.__name__}"
    return Watched


class DeadlineAdapter(HTTPAdapter):
    """requests' adapter, with connections whose sockets the call's deadline can shut down."""

    def get_connection_with_tls_context(self, *args: Any, **kwargs: Any) -> Any:
        pool: Any = super().get_connection_with_tls_context(*args, **kwargs)
        if not getattr(pool.ConnectionCls, "_gatekit_watched", False):  # once per pool
            pool.ConnectionCls = _watched(pool.ConnectionCls)
        return pool


class _Unsigned(requests.auth.AuthBase):
    """The place of the signing hook in a template: prepared like any auth (no ``.netrc`` look-up), changes nothing."""

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        return request


_UNSIGNED = _Unsigned()
_PLAIN_PREPARE = requests.Session.prepare_request


def _plain(session: requests.Session) -> bool:
    """A session that adds nothing but headers to a request: no cookies, auth, params or hooks of its own."""
    return (
        type(session).prepare_request is _PLAIN_PREPARE
        and session.auth is None
        and not session.params
        and not any(session.hooks.values())
        and not session.cookies
    )


def prepare(
    session: requests.Session, url: str, headers: dict[str, str], auth: requests.auth.AuthBase
) -> requests.PreparedRequest:
    """``session.prepare_request`` of a form POST whose body the signing hook ``auth`` writes (``data=None``).

    requests merges the session's settings and checks the URL and every header on each request (about
    half of the client's CPU per call).  For a session that adds only headers, the request up to its
    signature is the same each time for a URL and a set of headers: it is prepared once (the signing
    hook's place held by a hook that changes nothing), copied, and signed.  Any other session: requests' way.
    """
    if not _plain(session):
        return session.prepare_request(requests.Request("POST", url, data=None, headers=headers, auth=auth))
    key = (url, tuple(headers.items()), tuple(session.headers.items()), session.trust_env)
    try:
        template = _TEMPLATES[key]
    except KeyError:
        if len(_TEMPLATES) > 256:
            _TEMPLATES.clear()
        unsigned = requests.Request("POST", url, data=None, headers=headers, auth=_UNSIGNED)
        template = _TEMPLATES[key] = session.prepare_request(unsigned)
    prepared = template.copy()
    prepared.hooks = default_hooks()  # not the template's: a hook registered on one request stays there
    prepared.prepare_auth(auth, url)
    return prepared


_TEMPLATES: dict[tuple[object, ...], requests.PreparedRequest] = {}


def guard(session: requests.Session) -> None:
    """Give ``session`` deadline-aware adapters where it has requests' plain ones (custom ones are kept)."""
    for prefix, adapter in list(session.adapters.items()):
        if type(adapter) is HTTPAdapter:
            replacement = DeadlineAdapter(max_retries=adapter.max_retries)
            session.mount(prefix, replacement)


def exchange(
    session: requests.Session,
    request: requests.PreparedRequest,
    *,
    deadline: float,
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> requests.Response:
    """Send ``request`` and read the whole answer within ``deadline`` seconds; ``content`` is filled."""
    guard(session)
    proxies = _proxies(session, request)
    watch = _WATCHDOG.watch(deadline + _GRACE)  # a plain stall is requests' own timeout, named as such
    _CURRENT.watch = watch
    try:
        answer = session.send(request, timeout=deadline, allow_redirects=False, stream=True, proxies=proxies)
        watch.attach(_socket_of(answer))  # a custom adapter's connection: at least the body is bounded
        if answer.raw is not None:  # (an adapter may hand over a response already read)
            try:
                answer._content = _read(answer, max_bytes)
                answer._content_consumed = True  # type: ignore[attr-defined]
            finally:
                answer.close()
        return answer
    except TooLarge:
        raise
    except Exception as exc:  # after a shutdown, TLS and http.client raise more than RequestException
        if isinstance(exc, requests.Timeout):
            raise NoAnswer(f" within {deadline:g}s: {exc.__class__.__name__}") from exc
        if watch.fired:
            raise NoAnswer(f" within {deadline:g}s (the call's deadline: connect, request and whole answer)") from exc
        if not isinstance(exc, requests.RequestException):
            raise
        raise NoAnswer(f": {exc.__class__.__name__}") from exc
    finally:
        _CURRENT.watch = None
        watch.disarm()


# requests reads the proxies from the environment for every request (``resolve_proxies``: three scans of
# ``os.environ``, a third of the client's own CPU per call).  Where the environment is their only source
# (Linux; not macOS or Windows, which also ask the system), the answer is kept per origin, session
# settings and the environment's proxy variables: a change to any of them is seen on the next call.
_ENVIRONMENT_ONLY = urllib.request.getproxies is urllib.request.getproxies_environment
_PROXIES: dict[tuple[object, ...], dict[str, str]] = {}


def _proxies(session: requests.Session, request: requests.PreparedRequest) -> dict[str, str]:
    """``requests.utils.resolve_proxies`` for this request, as ``Session.send`` would compute it."""
    data: dict[Any, Any] | None = getattr(os.environ, "_data", None)
    proxies = session.proxies
    if not _ENVIRONMENT_ONLY or data is None or not isinstance(proxies, dict):
        return resolve_proxies(request, dict(proxies), session.trust_env)
    scheme, _, rest = (request.url or "").partition("://")
    origin = scheme + "://" + rest.partition("/")[0].partition("?")[0].partition("#")[0]
    key = (origin, session.trust_env, tuple(proxies.items()), _proxy_variables(data))
    try:
        found = _PROXIES.get(key)
    except TypeError:  # an unhashable value in session.proxies
        return resolve_proxies(request, proxies, session.trust_env)
    if found is None:
        if len(_PROXIES) > 256:
            _PROXIES.clear()
        found = _PROXIES[key] = resolve_proxies(request, proxies, session.trust_env)
    return dict(found)


# urllib.request.getproxies_environment reads every ``*_proxy`` variable, any case, and REQUEST_METHOD (CGI).
# (``os.environ._data`` holds bytes on POSIX, the only place where the answers are kept.)
_PROXY_WORD = b"proxy"
_CGI = b"REQUEST_METHOD"
_ENVIRONMENT_SEEN: tuple[dict[Any, Any], tuple[tuple[Any, Any], ...]] = ({}, ())


def _proxy_variables(data: dict[Any, Any]) -> tuple[tuple[Any, Any], ...]:
    """The proxy variables of the environment; looked for again only when the environment changed."""
    global _ENVIRONMENT_SEEN
    seen, variables = _ENVIRONMENT_SEEN
    if data != seen:  # one comparison in C; a scan in Python costs ten times more
        variables = tuple((name, value) for name, value in data.items() if _PROXY_WORD in name.lower() or name == _CGI)
        _ENVIRONMENT_SEEN = (dict(data), variables)
    return variables


def _socket_of(answer: requests.Response) -> socket.socket | None:
    connection = getattr(answer.raw, "connection", None)
    return getattr(connection, "sock", None)


def _read(answer: requests.Response, max_bytes: int) -> bytes:
    declared = answer.headers.get("Content-Length", "")
    if declared.isascii() and declared.isdigit() and len(declared) < 20 and int(declared) > max_bytes:
        raise TooLarge(f"the answer announces {int(declared)} bytes, more than the limit of {max_bytes} bytes")
    body = bytearray()
    for chunk in answer.iter_content(_CHUNK):
        body += chunk
        if len(body) > max_bytes:
            raise TooLarge(f"the answer is larger than the limit of {max_bytes} bytes")
    return bytes(body)
