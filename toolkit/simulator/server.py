"""Run the simulator in-process on a free loopback port (tests, notebooks, ``make certify``).

with SimulatorServer() as sim:
    client = GatewayClient(sim.client_config())

The app (``web.app``: the gateway API, the pages, the control API, ``openapi.json``) is made with the server and
its middleware stack built as it starts, before it listens: a failure is seen there.  ``server.app`` is that app.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn

from toolkit.hosts import url_host
from toolkit.simulator.core import build_state
from toolkit.simulator.destinations import is_loopback
from toolkit.simulator.journal import Journal
from toolkit.simulator.settings import SimulatorSettings, default_settings
from toolkit.simulator.storage import open_store
from toolkit.simulator.web.app import build, create_app
from toolkit.simulator.web.connections import uvicorn_config

if TYPE_CHECKING:  # the client side (requests, the client's configuration): imported when asked for
    from starlette.applications import Starlette

    from toolkit.config import GatewayConfig
    from toolkit.simcontrol import SimulatorControl

log = logging.getLogger("gatekit.simulator")


def exposed_warning(host: str, port: int, settings: SimulatorSettings) -> str:
    """What binding a non-loopback address means, for the person who started the simulator."""
    control = (
        "the control API (/_sim/) needs the control token"
        if settings.control_token
        else "the control API (/_sim/) still answers this machine only (--control-token opens it)"
    )
    public = settings.public_url or "the address each client connected to (set --public-url behind NAT or a proxy)"
    return (
        f"the simulator listens on {host}:{port}, reachable from other machines: anyone who can reach it "
        f"can use the demo merchant's published keys; {control}; addresses handed out use {public}"
    )


class _Server(uvicorn.Server):
    """uvicorn's server, telling an Event when it has started (no polling for readiness)."""

    def __init__(self, config: uvicorn.Config, ready: threading.Event) -> None:
        super().__init__(config)
        self._ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self._ready.set()

    def install_signal_handlers(self) -> None:  # run in a thread: leave signals to the host
        return None


def _bind_address(host: str, port: int) -> tuple[socket.AddressFamily, tuple[Any, ...]]:
    """The socket family and address of ``host`` (an IPv4 or IPv6 address, or a name: its first address)."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise OSError(exc.errno, f"{host}: {exc.strerror}") from None
    family, _, _, _, address = infos[0]
    return family, address


def bind(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """A TCP socket bound to ``host:port`` (port 0: a free one), not yet listening; OSError when it cannot be.

    ``reuse_port``: other sockets may bind the same port (``SO_REUSEPORT``): the worker processes of
    ``gatekit simulate --workers`` each listen on one, and the kernel spreads new connections over them evenly.
    """
    # IPPROTO_TCP explicitly: asyncio then sets TCP_NODELAY on accepted connections (no 40 ms stalls)
    family, address = _bind_address(host, port)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


def root_url(host: str, port: int) -> str:
    """``http://HOST:PORT`` where this machine reaches a simulator bound to ``host`` (0.0.0.0: loopback)."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else url_host(host)
    return f"http://{shown}:{port}"


class SimulatorServer:
    """A simulator on ``host:port`` (port 0: a free port) in a background thread."""

    def __init__(
        self,
        settings: SimulatorSettings | None = None,
        *,
        db: str | Path = ":memory:",
        host: str = "127.0.0.1",
        port: int = 0,
        log_level: str = "warning",
        sock: socket.socket | None = None,
        reuse_port: bool = False,
        **app_options: Any,
    ) -> None:
        """``sock``: a socket to serve instead of binding ``host:port``; ``reuse_port``: bind with ``SO_REUSEPORT``
        (a worker of ``gatekit simulate --workers``: each binds the port the command reserved)."""
        self.settings = settings or default_settings()
        self.store = open_store(db)
        self.state = build_state(self.settings, self.store, **app_options)
        self.app: Starlette = create_app(state=self.state)
        self.host = host
        self._socket = sock if sock is not None else bind(host, port, reuse_port=reuse_port)
        self.port = self._socket.getsockname()[1]
        self._ready = threading.Event()
        self._server = _Server(uvicorn_config(self.app, self.settings, log_level=log_level), self._ready)
        self.state.transport_finder = self._transport_of
        self.state.destinations.own_ports.add(self.port)  # a callback to the simulator itself is refused
        self._thread: threading.Thread | None = None
        if not is_loopback(host):
            log.warning(exposed_warning(host, self.port, self.settings))

    def add_middleware(self, factory: Callable[..., Any], **options: Any) -> None:
        """ASGI middleware around everything the server answers (before ``start``; outermost last)."""
        self.app.add_middleware(factory, **options)

    @property
    def journal(self) -> Journal:
        """The request journal (``entries(login=..., limit=...)``)."""
        journal: Journal = self.state.journal
        return journal

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/paynet"

    @property
    def root_url(self) -> str:
        """Where this process reaches the simulator (``public_url`` is what it hands out to others)."""
        return root_url(self.host, self.port)

    def client_config(self, **overrides: Any) -> GatewayConfig:
        """The demo merchant's client configuration for this simulator."""
        from toolkit.config import simulator_config

        return simulator_config(self.base_url).with_overrides(**overrides)

    def control(self, **options: Any) -> SimulatorControl:
        """A client of this simulator's control API (``/_sim/``), with its control token if it has one."""
        from toolkit.simcontrol import SimulatorControl

        token = self.settings.control_token
        return SimulatorControl(self.root_url, **{"token": token.reveal() if token else None, **options})

    def _transport_of(self, client: tuple[str, int]) -> asyncio.BaseTransport | None:
        """The connection of a client address, for the ``drop`` fault (ASGI itself cannot abort one)."""
        for connection in list(self._server.server_state.connections):
            if getattr(connection, "client", None) == client:
                transport: asyncio.BaseTransport | None = getattr(connection, "transport", None)
                return transport
        return None

    def start(self, timeout: float = 10.0) -> SimulatorServer:
        build(self.app)  # (here, in the caller's thread: a failure is the caller's to see)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, name="gatekit-simulator", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError(f"the simulator did not start within {timeout} s on {self.root_url}")
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._socket.close()
        self.store.close()

    def __enter__(self) -> SimulatorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
