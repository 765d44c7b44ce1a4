"""The safety cap of a load run, applied: a token bucket every request of a Locust process takes from.

The merchant's calls take it in ``LoadClient.send``; the payer's page loads through ``paced_session`` (each
request and each redirect it follows). No Locust here: in a Locust process ``time.sleep`` and the lock are
gevent's (Locust patches them), so a user waiting for its turn lets the others run.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import requests
from requests.adapters import HTTPAdapter


class RateLimit:
    """At most ``rate`` requests a second from this process (a token bucket; waiting yields to other users)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.interval = 1.0 / rate
        self._next = time.monotonic()
        self._lock = threading.Lock()

    def take(self) -> None:
        with self._lock:
            now = time.monotonic()
            at = max(self._next, now)
            self._next = at + self.interval
        if at > now:
            time.sleep(at - now)


class PacedAdapter(HTTPAdapter):
    """requests' adapter taking a turn of ``limit`` before each request it sends."""

    def __init__(self, limit: RateLimit) -> None:
        super().__init__()
        self.limit = limit

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        self.limit.take()
        return super().send(request, *args, **kwargs)


def paced_session(limit: RateLimit | None) -> requests.Session:
    """A session whose requests (redirects included) take turns of ``limit``; a plain one without a limit."""
    session = requests.Session()
    if limit is not None:
        for prefix in ("http://", "https://"):
            session.mount(prefix, PacedAdapter(limit))
    return session
