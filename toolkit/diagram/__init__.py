"""Sequence diagrams of the gateway's flows, drawn as SVG from what the toolkit recorded.

    from toolkit.diagram import sequence_diagram
    svg = sequence_diagram(exchanges, arrivals, visits, title="3-D Secure sale")   # SVG text
    diagram = Diagram.of(recorder.records, title="3-D Secure sale")                 # the same, from a recorder

``exchanges`` are the client's ``toolkit.exchange.Exchange`` records (an observer of
``GatewayClient`` collects them), ``arrivals`` the callback receiver's ``Received`` (callbacks and the
payer's redirects), ``visits`` the payer's ``toolkit.payer.visits.Visit`` (``Payer.visits``): the records of
``toolkit.recording.records``, drawn by one adapter (``records.arrows_of``), whether live or read back from a
recording (``recording_diagram``: ``toolkit.recording.har_read``).  Lanes: merchant, gateway, ACS, payer's
browser, merchant's callback endpoint; one arrow per exchange with its operation, HTTP status or outcome, and
duration; repeated identical status polls as one arrow.  ``Diagram`` shows itself in a notebook;
``simulator_diagram`` draws an order from the simulator's own records (``SimulatorControl.diagram(orderid)``).
Pure: records in, SVG text out, card data masked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolkit.callbacks import Received
from toolkit.diagram.model import LANES, Arrow, Lane, lanes_of
from toolkit.diagram.records import arrows_of
from toolkit.diagram.simulator import JSON, arrows_from_simulator
from toolkit.diagram.svg import render
from toolkit.exchange import Exchange
from toolkit.payer.visits import Visit
from toolkit.recording import har_read
from toolkit.recording.records import Record

__all__ = [
    "LANES",
    "Arrow",
    "Diagram",
    "Lane",
    "arrows_from_har",
    "arrows_of",
    "lanes_of",
    "recording_diagram",
    "sequence_diagram",
    "simulator_diagram",
]


@dataclass(frozen=True)
class Diagram:
    """Arrows with a title; ``svg`` is the drawing (``str(diagram)`` too), shown as SVG in a notebook."""

    arrows: Sequence[Arrow]
    title: str = ""

    @property
    def svg(self) -> str:
        return render(self.arrows, self.title)

    @property
    def lanes(self) -> list[Lane]:
        return lanes_of(list(self.arrows))

    def __str__(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        return f"Diagram({self.title!r}, {len(self.arrows)} arrows)"

    def _repr_svg_(self) -> str:
        return self.svg

    def html(self) -> str:
        """The drawing in a scrolling box, for HTML panes (the explorer's timeline tab)."""
        return f'<div style="overflow-x:auto;max-width:100%">{self.svg}</div>'

    @classmethod
    def of(cls, *records: Iterable[Record], title: str = "") -> Diagram:
        """The diagram of records: ``Diagram.of(recorder.records)``, ``Diagram.of(exchanges, arrivals, visits)``."""
        return cls(arrows_of(*records), title)


def sequence_diagram(
    exchanges: Iterable[Exchange] = (),
    arrivals: Iterable[Received] = (),
    visits: Iterable[Visit] = (),
    *,
    title: str = "",
) -> str:
    """The SVG text of the sequence diagram of these records (in time order; masked)."""
    return Diagram.of(exchanges, arrivals, visits, title=title).svg


def simulator_diagram(
    journal: Iterable[JSON], deliveries: Iterable[JSON], order: JSON | None = None, *, orderid: str | None = None
) -> Diagram:
    """An order drawn from the simulator's journal, callback deliveries and order view (``/_sim/``)."""
    title = f"order {orderid} as the simulator saw it" if orderid else "as the simulator saw it"
    return Diagram(arrows_from_simulator(journal, deliveries, order, orderid=orderid), title)


def arrows_from_har(archive: Mapping[str, Any]) -> list[Arrow]:
    """The arrows of a recording (a HAR archive, read as JSON): its records read back, drawn as live ones are."""
    return arrows_of(har_read.records(archive))


def recording_diagram(archive: Mapping[str, Any], *, title: str = "") -> Diagram:
    """A scenario drawn from its recording (``toolkit.recording``: a HAR archive, read as JSON)."""
    pages = archive["log"].get("pages") or [{}]
    return Diagram(arrows_from_har(archive), title or str(pages[0].get("title", "")) or "a recording")
