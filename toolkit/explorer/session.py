"""A gateway as a notebook uses it: client, merchant, payer, callback receiver, timeline (and simulator).

``GatewaySession.embedded()`` runs the simulator in this process on a free loopback port;
``GatewaySession.connect(profile)`` talks to what a profile names.  Every exchange of the client
and every callback or payer redirect lands on one ``Timeline``.  The control key stays inside the
client's configuration (a ``Secret``); nothing here prints it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolkit.callbacks import CallbackReceiver, forwarded_callback_url
from toolkit.client import GatewayClient
from toolkit.config import GatewayConfig, load_config
from toolkit.diagram import Diagram
from toolkit.exchange import Exchange
from toolkit.explorer.timeline import Event, Timeline, exchange_ids
from toolkit.explorer.views import ExchangeView, TimelineView, esc, page, section, table
from toolkit.flows import Merchant, Order
from toolkit.payer import Payer
from toolkit.recording import Recorder, RecordingRun, clear
from toolkit.recording.har import iso
from toolkit.simcontrol import SimulatorControl, SimulatorControlError
from toolkit.simulator.server import SimulatorServer

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


class GatewaySession:
    """Everything a walkthrough needs, wired together; ``stop()`` ends the receiver (and the simulator)."""

    def __init__(
        self,
        config: GatewayConfig,
        *,
        receiver: CallbackReceiver,
        callback_url: str | None,
        server: SimulatorServer | None = None,
        control: SimulatorControl | None = None,
    ) -> None:
        self.config = config
        self.server = server
        self.control = control
        self.timeline = Timeline()
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self.receiver = receiver
        receiver.observers.append(self.timeline.record_arrival)
        self.client = GatewayClient(config, observers=[self._record])
        self.merchant = Merchant(self.client, receiver, callback_url=callback_url)
        self.payer = Payer()
        self._stopped = False

    # --- life -----------------------------------------------------------------------------------

    @classmethod
    def embedded(cls, **options: Any) -> GatewaySession:
        """Start a simulator in this process (``SimulatorServer(**options)``) and a receiver beside it."""
        server = SimulatorServer(**options).start()
        try:
            config = server.client_config()
            receiver = CallbackReceiver(config.control_key).start()
        except BaseException:
            server.stop()
            raise
        return cls(
            config, receiver=receiver, callback_url=receiver.callback_url, server=server, control=server.control()
        )

    @classmethod
    def connect(cls, profile: str | None = None, **overrides: Any) -> GatewaySession:
        """Use a profile (``load_config``); ``control`` is set when the gateway has the simulator's API.

        Callbacks: a gateway on this machine calls the receiver directly; a remote one needs the
        profile's ``callback_url`` forwarding to ``GATEKIT_CALLBACK_PORT`` (else polling only).
        """
        config = load_config(profile, **overrides)
        loopback = (urlsplit(config.base_url).hostname or "") in _LOOPBACK
        port = 0 if loopback else int(os.environ.get("GATEKIT_CALLBACK_PORT", "0"))
        receiver = CallbackReceiver(config.control_key, port=port).start()
        callback_url = receiver.callback_url if loopback else forwarded_callback_url(config.callback_url)
        return cls(config, receiver=receiver, callback_url=callback_url, control=_probe_control(config, loopback))

    def stop(self) -> None:
        """Stop the receiver, the HTTP sessions and the embedded simulator; safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        self.receiver.stop()
        self.client.close()
        self.payer.session.close()
        if self.control is not None:
            self.control.close()
        if self.server is not None:
            self.server.stop()

    @property
    def stopped(self) -> bool:
        return self._stopped

    def __enter__(self) -> GatewaySession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what happened --------------------------------------------------------------------------

    def _record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)
        self.timeline.record_exchange(exchange)

    @property
    def last_exchange(self) -> ExchangeView | None:
        """The last request and its answer, masked, with what was signed."""
        with self._lock:
            return ExchangeView(self.exchanges[-1]) if self.exchanges else None

    def exchanges_since(self, mark: int) -> tuple[Exchange, ...]:
        """The exchanges after the first ``mark`` ones (``mark = len(session.exchanges)`` before an action)."""
        with self._lock:
            return tuple(self.exchanges[mark:])

    def timeline_of(self, order: Order | None = None) -> TimelineView:
        """The timeline of one order (with its follow-ups and callbacks), or of everything."""
        if order is None:
            return TimelineView(self.timeline.events())
        events: list[Event] = self.timeline.for_order(order.orderid, order.client_orderid)
        return TimelineView(events, f"timeline of order {order.orderid} ({order.client_orderid})")

    def diagram_of(self, order: Order | None = None, title: str = "") -> Diagram:
        """The sequence diagram of one order (its requests, polls, payer pages, callbacks), or of everything."""
        with self._lock:
            exchanges = list(self.exchanges)
        arrivals, visits = self.receiver.received, list(self.payer.visits)
        if order is None:
            return Diagram.of(exchanges, arrivals, visits, title=title or "everything so far")
        orderid, client_orderid = order.orderid, order.client_orderid

        def ours(ids: tuple[frozenset[str], str]) -> bool:
            return orderid in ids[0] or bool(client_orderid and ids[1] == client_orderid)

        exchanges = [e for e in exchanges if ours(exchange_ids(e))]
        arrivals = [r for r in arrivals if ours((frozenset({r.orderid}), r.client_orderid))]
        visits = [v for v in visits if v.orderid == orderid]
        return Diagram.of(exchanges, arrivals, visits, title=title or f"order {orderid} ({client_orderid})")

    # --- recordings ---------------------------------------------------------------------------------

    def record_into(self, folder: str | Path, profile: str = "") -> RecordingRun:
        """A recorded run in ``folder`` (emptied of an earlier one), as ``gatekit certify --record`` writes it;
        ``with session.recording(run, "a name"):`` adds a scenario to it."""
        clear(Path(folder))
        return RecordingRun(Path(folder), profile=profile or self.config.profile, base_url=self.config.base_url)

    @contextmanager
    def recording(self, run: RecordingRun, name: str) -> Iterator[Recorder]:
        """Record what the client, the payer and the receiver see inside the block as the scenario ``name``: the
        recorder observes them for as long as the block lasts."""
        recorder = Recorder()
        started = iso(datetime.now(UTC))
        hooks: list[list[Any]] = [self.client.observers, self.payer.observers, self.receiver.observers]
        for observers in hooks:
            observers.append(recorder)
        outcome = "failed"
        try:
            yield recorder
            outcome = "passed"
        finally:
            for observers in hooks:
                observers.remove(recorder)
            run.add(name, recorder, outcome=outcome, started=started)

    @property
    def callback_url(self) -> str | None:
        return self.merchant.callback_url

    def describe(self) -> list[tuple[str, str]]:
        """Where requests go and who the merchant is (never the control key)."""
        config = self.config
        return [
            ("profile", config.profile),
            ("gateway", config.base_url + (" (embedded simulator)" if self.server else "")),
            ("login", config.login),
            ("endpoint id", config.endpoint_id or "-"),
            ("endpoint group id", config.endpoint_group_id or "-"),
            ("callbacks to", self.callback_url or "none: status polling only"),
            ("payer redirects to", "-" if self._stopped else self.receiver.redirect_url),
            ("control API", "yes (/_sim/)" if self.control else "no"),
        ]

    def __repr__(self) -> str:
        state = "stopped" if self._stopped else "running"
        return f"GatewaySession({self.config.profile!r}, {self.config.base_url!r}, {state})"

    def _repr_html_(self) -> str:
        title = f"gatekit session ({'stopped' if self._stopped else 'running'})"
        return page(section(title, table(self.describe())), f"<p>{esc(len(self.exchanges))} requests so far</p>")


def _probe_control(config: GatewayConfig, loopback: bool) -> SimulatorControl | None:
    """A control client when the gateway on this machine answers ``/_sim/health`` (never asks a remote one)."""
    if not loopback:
        return None
    root = config.base_url.rsplit("/paynet", 1)[0]
    control = SimulatorControl(root, timeout=2)
    try:
        control.health()
    except SimulatorControlError:
        control.close()
        return None
    return control
