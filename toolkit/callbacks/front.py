"""One port for the callback receivers of a run whose scenarios run side by side (``toolkit.certify.parallel``).

A sandbox reaches this machine through one public URL (a profile's ``callback_url``) that forwards to one port
(``GATEKIT_CALLBACK_PORT``).  When ``gatekit certify`` runs scenarios in several pytest-xdist workers, each worker
has its own receiver (its own orders, its own ``fail_next`` plans) on a free loopback port, and gives the gateway
``<callback_url>/<worker>/callback`` as its orders' callback address.  ``CallbackFront`` listens on the forwarded
port and hands each request to the receiver of the worker its first path segment names, with that segment taken
off: what the receiver sees, and answers, is what it would have seen on the port itself.

    with CallbackFront(routes_folder, port=9100):       # the run's first process
        ...                                              # each worker: register(routes_folder, "gw3", its port)

A request for a worker that has no receiver (yet, or any more) is answered 404, so the gateway retries it later
(behaviour section 4), as it would for a merchant that is down.
"""

from __future__ import annotations

import http.client
import os
import threading
from pathlib import Path
from urllib.parse import urlencode

from toolkit.callbacks.server import Answer, Arrival, ReceiverServer, text_answer

ROUTES_ENV = "GATEKIT_CALLBACK_ROUTES"  # (to each worker) the folder where it registers its receiver's port
FORWARD_TIMEOUT = 120.0  # seconds a receiver may take to answer (a test may delay its answers: ``delay_next``)


def register(routes: Path, worker: str, port: int) -> None:
    """Say that ``worker``'s receiver listens on ``port`` (written whole, then renamed into place)."""
    partial = routes / f".{worker}.{os.getpid()}"
    partial.write_text(str(port), encoding="ascii")
    os.replace(partial, routes / worker)


def worker_path(public_url: str, worker: str) -> str:
    """The public URL a worker's orders are called back at: the profile's, with the worker's segment."""
    return f"{public_url.rstrip('/')}/{worker}"


class CallbackFront:
    """Listens on ``host:port`` and forwards each request to the receiver its first path segment names."""

    def __init__(self, routes: Path, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.routes = routes
        self.host, self.port = host, port
        self._server: ReceiverServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> CallbackFront:
        self._server = ReceiverServer((self.host, self.port), self._handle)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="gatekit-callback-front", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> CallbackFront:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _port_of(self, worker: str) -> int | None:
        if not worker or worker.startswith(".") or "/" in worker:
            return None
        try:
            return int((self.routes / worker).read_text(encoding="ascii"))
        except (OSError, ValueError):
            return None

    def _handle(self, arrival: Arrival) -> Answer:
        worker, _, rest = arrival.path.lstrip("/").partition("/")
        port = self._port_of(worker)
        if port is None:
            return text_answer(404, f"no receiver of this run is called {worker!r}: the gateway may try again")
        query = urlencode(arrival.params)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=FORWARD_TIMEOUT)
        try:
            if arrival.method == "POST":
                connection.request("POST", f"/{rest}", body=query.encode(),
                                   headers={"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
            else:
                connection.request("GET", f"/{rest}?{query}" if query else f"/{rest}")
            answer = connection.getresponse()
            content_type = answer.getheader("Content-Type") or "text/plain; charset=utf-8"
            return Answer(answer.status, content_type, answer.read())
        except OSError as error:
            return text_answer(502, f"the receiver of {worker} did not answer ({type(error).__name__})")
        finally:
            connection.close()
