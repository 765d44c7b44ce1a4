"""The merchant's callback address during a load run: arrivals counted per order, duplicates told apart.

``toolkit.callbacks.CallbackReceiver`` keeps every arrival in a list and scans it (what a test wants); under
load an order's callbacks are found by its orderid, and only counts and first-arrival times are kept. The
payer's redirects arrive here too (answered 200, not kept: the load payer reads its CRes from the page).
A callback is a duplicate when the same (orderid, type, status) was answered before.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from toolkit.callbacks.server import Answer, Arrival, ReceiverServer
from toolkit.hosts import url_host

ANSWER = Answer(200, "text/plain; charset=utf-8", b"OK")


KEPT_ORDERS = 200_000  # orders whose callbacks are remembered (the oldest forgotten first): a bounded memory


class LoadReceiver:
    """An HTTP server on ``host:port`` (0: a free port) counting callbacks by orderid."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, public_url: str | None = None,
                 on_duplicate: Callable[[str, str, str], None] | None = None) -> None:  # fmt: skip
        self._orders: dict[str, dict[tuple[str, str], int]] = {}  # orderid -> (type, status) -> arrivals
        self._changed = threading.Condition()
        self.on_duplicate = on_duplicate
        self.duplicates = 0
        self.arrivals = 0
        self._server = ReceiverServer((host, port), self._handle)
        self.port = self._server.server_address[1]
        self.base_url = (public_url or f"http://{url_host(host)}:{self.port}").rstrip("/")
        self._thread = threading.Thread(target=self._server.serve_forever, name="gatekit-load-receiver", daemon=True)

    @property
    def callback_url(self) -> str:
        return f"{self.base_url}/callback"

    @property
    def redirect_url(self) -> str:
        return f"{self.base_url}/redirect"

    def start(self) -> LoadReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handle(self, arrival: Arrival) -> Answer:
        if arrival.kind != "callback":
            return ANSWER
        params = arrival.params
        orderid, key = params.get("orderid", ""), (params.get("type", ""), params.get("status", ""))
        duplicate = False
        with self._changed:
            self.arrivals += 1
            order = self._orders.get(orderid)
            if order is None:
                if len(self._orders) >= KEPT_ORDERS:
                    del self._orders[next(iter(self._orders))]
                order = self._orders[orderid] = {}
            order[key] = order.get(key, 0) + 1
            if order[key] > 1:
                self.duplicates += 1
                duplicate = True
            self._changed.notify_all()
        if duplicate and self.on_duplicate is not None:
            self.on_duplicate(orderid, *key)
        return ANSWER

    def count(self, orderid: str) -> int:
        """Distinct callbacks (by type and status) that arrived for the order."""
        with self._changed:
            return len(self._orders.get(orderid, ()))

    def wait_for(self, orderid: str, count: int, timeout: float) -> int:
        """Wait until ``count`` distinct callbacks of the order arrived (or ``timeout``); how many did."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                arrived = len(self._orders.get(orderid, ()))
                left = deadline - time.monotonic()
                if arrived >= count or left <= 0:
                    return arrived
                self._changed.wait(left)
