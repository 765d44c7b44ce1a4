"""CallbackReceiver: the merchant's side of a test, a loopback server for callbacks and redirects.

    with CallbackReceiver(config.control_key) as receiver:
        ack = client.sale(fields, server_callback_url=receiver.callback_url)
        final = client.wait_for_final_status(ack, waker=receiver.waker(orderid=ack.orderid))
        callback = receiver.wait_for_callback(orderid=ack.orderid)
        assert callback.control_ok

Behaviour section 4: the gateway GETs ``server_callback_url``; "anything but HTTP 200 from the
merchant makes the gateway retry later" (``fail_next``, ``delay_next``); callbacks "can arrive
more than once" (``Received.duplicate``).  Section 5: the payer's browser POSTs to
``redirect_url``, and "the redirect is not the final word: verify control" (``control_ok``).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from urllib.parse import quote

from toolkit.callbacks.inbox import Inbox, OrderWaker
from toolkit.callbacks.records import CALLBACK, REDIRECT, Kind, Received, client_orderid_of, mask_params
from toolkit.callbacks.server import Answer, Arrival, ReceiverServer, redirect_page, text_answer
from toolkit.hosts import url_host
from toolkit.masking import Secret, mask_text
from toolkit.signing import verify_callback_control

Observer = Callable[[Received], None]


def forwarded_callback_url(public_url: str | None) -> str | None:
    """The ``server_callback_url`` for a receiver behind a public URL that forwards to its port (a
    profile's ``callback_url``), or None when there is none: the gateway then cannot call back."""
    return f"{public_url.rstrip('/')}/{CALLBACK}" if public_url else None


def _utc_now() -> datetime:
    return datetime.now(UTC)


class CallbackReceiver:
    """Records every callback and redirect; answers 200 unless told otherwise; wakes waiters at once."""

    def __init__(
        self,
        control_key: str | Secret | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        observers: Iterable[Observer] = (),
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self._control_key = Secret(control_key) if isinstance(control_key, str) else control_key
        self.host = host
        self.port = port
        self.observers = list(observers)
        self._clock = clock
        self._wall_clock = wall_clock
        self._inbox = Inbox()
        self._plan_lock = threading.Lock()
        self._failures: deque[tuple[int, Callable[[str], bool] | None]] = deque()  # (status, whose callbacks)
        self._delays: deque[float] = deque()
        self._stopping = threading.Event()
        self._server: ReceiverServer | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        where = self.base_url if self._server else "not started"
        return f"CallbackReceiver({where}, control key {'set' if self._control_key else 'not set'})"

    # --- life ---------------------------------------------------------------------------------

    def start(self) -> CallbackReceiver:
        """Bind the socket (port 0: any free port) and serve from a daemon thread."""
        if self._server is not None:
            raise RuntimeError(f"{self!r} is already started")
        self._stopping.clear()
        self._server = ReceiverServer((self.host, self.port), self._handle)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="gatekit-callbacks", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut pending delays short, close the socket and join every thread."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()  # joins the request threads
        if thread is not None:
            thread.join()
        self._server = self._thread = None

    def __enter__(self) -> CallbackReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- addresses ----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the receiver has no address before start()")
        return f"http://{url_host(self.host)}:{self._server.server_address[1]}"

    @property
    def port_number(self) -> int:
        """The port it listens on (the one the system chose for ``port=0``)."""
        if self._server is None:
            raise RuntimeError("the receiver has no port before start()")
        return int(self._server.server_address[1])

    @property
    def callback_url(self) -> str:
        """For ``server_callback_url`` (behaviour section 4)."""
        return f"{self.base_url}/{CALLBACK}"

    @property
    def redirect_url(self) -> str:
        """For ``redirect_url`` (behaviour section 5)."""
        return f"{self.base_url}/{REDIRECT}"

    def callback_url_for(self, tag: str) -> str:
        """A callback address of its own for one order (``.../callback/<tag>``)."""
        return f"{self.callback_url}/{quote(tag, safe='')}"

    def redirect_url_for(self, tag: str) -> str:
        return f"{self.redirect_url}/{quote(tag, safe='')}"

    # --- how to answer ------------------------------------------------------------------------

    def fail_next(self, n: int = 1, status: int = 500, *, of: Callable[[str], bool] | None = None) -> None:
        """Answer the next ``n`` callbacks with ``status`` (not 200), so that the gateway retries.

        ``of``: only callbacks whose ``client_orderid`` it accepts (``testdata.payers.made_from_now()``: orders made
        from now on) use up the plan; a late callback of another order is answered 200 and leaves it."""
        if n < 0 or status == 200 or not 100 <= status <= 599:
            raise ValueError(f"fail_next needs n >= 0 and a non-200 HTTP status, not n={n}, status={status}")
        with self._plan_lock:
            self._failures.extend([(status, of)] * n)

    def delay_next(self, n: int = 1, seconds: float = 1.0) -> None:
        """Answer the next ``n`` callbacks only after ``seconds`` (a slow merchant; gateway timeouts)."""
        if n < 0 or seconds < 0:
            raise ValueError(f"delay_next needs n >= 0 and seconds >= 0, not n={n}, seconds={seconds}")
        with self._plan_lock:
            self._delays.extend([seconds] * n)

    def _plan_for(self, kind: Kind, params: Mapping[str, str]) -> tuple[int, float]:
        """(status, delay) for this arrival; plans apply to callbacks only (a failure planned for some orders'
        callbacks, to theirs only)."""
        if kind != CALLBACK:
            return 200, 0.0
        client_orderid = client_orderid_of(params)
        with self._plan_lock:
            status = 200
            if self._failures and (self._failures[0][1] is None or self._failures[0][1](client_orderid)):
                status = self._failures.popleft()[0]
            delay = self._delays.popleft() if self._delays else 0.0
        return status, delay

    # --- arrivals -----------------------------------------------------------------------------

    def _handle(self, arrival: Arrival) -> Answer:
        """Record (masked), notify, wait if told to, answer: the server calls this per request."""
        kind = arrival.kind
        status, delay = self._plan_for(kind, arrival.params)
        path = mask_text(arrival.path)
        draft = Received(
            kind=kind,
            method=arrival.method,
            path=path,
            params=mask_params(arrival.params),
            control_ok=self._control_ok(arrival.params),
            received_at=self._clock(),
            received_wall=self._wall_clock(),
            answered=status,
            delayed=delay,
            url=f"{self.base_url}/{path.lstrip('/')}",
        )
        record = self._inbox.add(draft)
        for observer in self.observers:
            observer(record)
        if delay:
            self._stopping.wait(delay)
        if kind == REDIRECT:
            return redirect_page(record.params)
        return text_answer(status, "OK" if status == 200 else f"failing on purpose (fail_next): HTTP {status}")

    @property
    def verifies_control(self) -> bool:
        """True when a control key was given: every arrival's ``control_ok`` is then True or False."""
        return self._control_key is not None

    def _control_ok(self, params: Mapping[str, str]) -> bool | None:
        return None if self._control_key is None else verify_callback_control(params, self._control_key.reveal())

    def verify(self, params: Mapping[str, str] | Received) -> bool:
        """Check ``control`` = SHA-1(status + orderid + client_orderid + key) (behaviour sections 4, 5)."""
        if self._control_key is None:
            raise ValueError("the receiver has no control key: pass one to CallbackReceiver(control_key)")
        fields = params.params if isinstance(params, Received) else params
        return verify_callback_control(fields, self._control_key.reveal())

    @property
    def received(self) -> list[Received]:
        """Every arrival so far, callbacks and redirects, oldest first."""
        return self._inbox.select()

    def callbacks(
        self,
        *,
        orderid: str | None = None,
        client_orderid: str | None = None,
        status: str | None = None,
        type: str | None = None,
    ) -> list[Received]:
        """Callbacks that arrived, oldest first; ``type`` is the transaction's (sale, capture, reversal...)."""
        return self._inbox.select(CALLBACK, orderid=orderid, client_orderid=client_orderid, status=status, type=type)

    def redirects(
        self, *, orderid: str | None = None, client_orderid: str | None = None, status: str | None = None
    ) -> list[Received]:
        return self._inbox.select(REDIRECT, orderid=orderid, client_orderid=client_orderid, status=status)

    def wait_for_callback(
        self,
        *,
        orderid: str | None = None,
        client_orderid: str | None = None,
        status: str | None = None,
        type: str | None = None,
        timeout: float = 10.0,
        count: int = 1,
    ) -> Received:
        """The ``count``-th matching callback, returned the moment it arrives.

        ``type`` picks one transaction of the order (``capture``, ``reversal``, ``chargeback``...).
        After ``timeout`` seconds: CallbackTimeout (a TimeoutError) naming the order and what came.
        """
        return self._inbox.wait_for(
            CALLBACK,
            orderid=orderid,
            client_orderid=client_orderid,
            status=status,
            type=type,
            timeout=timeout,
            count=count,
        )

    def wait_for_redirect(
        self,
        *,
        orderid: str | None = None,
        client_orderid: str | None = None,
        status: str | None = None,
        timeout: float = 10.0,
        count: int = 1,
    ) -> Received:
        """Like ``wait_for_callback``, for the payer's redirect back (behaviour section 5)."""
        return self._inbox.wait_for(
            REDIRECT, orderid=orderid, client_orderid=client_orderid, status=status, timeout=timeout, count=count
        )

    def waker(self, *, orderid: str | None = None, client_orderid: str | None = None) -> OrderWaker:
        """A ``Waker`` for ``GatewayClient.wait_for_final_status``: polling stops when the callback comes."""
        return self._inbox.waker(CALLBACK, orderid=orderid, client_orderid=client_orderid)

    def clear(self) -> None:
        """Forget every arrival and de-duplication key (pending fail/delay plans stay)."""
        self._inbox.clear()
