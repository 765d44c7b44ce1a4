"""Which order an exchange belongs to, so that a proxy recording keeps one archive per order.

A request names its order by ``client_orderid`` (``client-order-id`` on v4) or, for a follow-up, by the
gateway's ``orderid``; an answer links the two (``merchant-order-id``, ``paynet-order-id``).  Requests that
name no order (``get-card-info``, ``create-recurring-payment``...) go together in one archive.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

OTHER = "other requests"


class Orders:
    """The order names seen so far: ``name_of(request)`` before forwarding, ``learn(request, answer)`` after."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}  # client_orderid or orderid -> the order's name
        self._lock = threading.Lock()

    def name_of(self, fields: Mapping[str, str]) -> str:
        client_orderid = fields.get("client_orderid") or fields.get("client-order-id") or ""
        orderid = fields.get("orderid", "")
        with self._lock:
            for key in (f"orderid {orderid}" if orderid else "", f"client {client_orderid}" if client_orderid else ""):
                if key and key in self._names:
                    return self._names[key]
            if client_orderid:
                return self._names.setdefault(f"client {client_orderid}", f"order {client_orderid}")
            if orderid:
                return self._names.setdefault(f"orderid {orderid}", f"order {orderid}")
        return OTHER

    def learn(self, name: str, answer: Mapping[str, str]) -> None:
        """The gateway's orderid and the merchant's id in ``answer`` belong to the order ``name``."""
        if name == OTHER:
            return
        with self._lock:
            if answer.get("paynet-order-id"):
                self._names.setdefault(f"orderid {answer['paynet-order-id']}", name)
            if answer.get("merchant-order-id"):
                self._names.setdefault(f"client {answer['merchant-order-id']}", name)
