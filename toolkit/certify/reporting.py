"""Allure wiring for the suite: what a scenario exchanged, as steps with masked attachments.

epic = the flow (the feature's name), feature = the operation (the scenario's operation tag; the
flow's name again for a scenario tagged with none, as a merchant's own are), story = the scenario
(``toolkit.certify.plugin`` labels every scenario when it is collected).
Every HTTP exchange of the merchant is attached masked, with a curl command that reproduces it
with placeholders for card data and signatures; every request of the payer's browser likewise
(the method URL, the hosted page, the challenge form, the ACS answer, the redirect to the
merchant); the pages the real-browser payer shows as screenshots; polls, callbacks and the
payer's redirect as the merchant received them.

Each scenario's exchanges are also collected (``ScenarioTrace``) and handed at its end to
``attach_diagram``, the hook for the sequence diagram (``toolkit.diagram``, not yet merged).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import allure

from toolkit._version import __version__
from toolkit.callbacks import Received
from toolkit.certify import categories
from toolkit.exchange import Exchange
from toolkit.masking import mask_html, mask_text
from toolkit.payer.forms import Page
from toolkit.payer.visits import Visit as PageVisit
from toolkit.waiting import PollAttempt

TEXT = allure.attachment_type.TEXT


@dataclass
class ScenarioTrace:
    """What one scenario exchanged, in order: the merchant's requests, the payer's, and what arrived."""

    exchanges: list[Exchange] = field(default_factory=list)
    payer: list[PageVisit] = field(default_factory=list)
    arrivals: list[Received] = field(default_factory=list)
    finishers: list[Callable[[], object]] = field(default_factory=list)  # called before the diagram is drawn


_TRACE: ContextVar[ScenarioTrace | None] = ContextVar("gatekit_scenario_trace", default=None)


def begin_scenario() -> ScenarioTrace:
    trace = ScenarioTrace()
    _TRACE.set(trace)
    return trace


def end_scenario() -> ScenarioTrace | None:
    """The scenario is over: its diagram is attached (see ``attach_diagram``) and the trace returned."""
    trace = _TRACE.get()
    if trace is not None:
        for finish in trace.finishers:
            finish()
        attach_diagram(trace.exchanges, trace.arrivals, payer=trace.payer)
    _TRACE.set(None)
    return trace


def before_diagram(finish: Callable[[], object]) -> None:
    """Call ``finish`` when the scenario ends, before its diagram is drawn (a browser's last visits)."""
    trace = _TRACE.get()
    if trace is not None:
        trace.finishers.append(finish)


def attach_diagram(
    exchanges: Sequence[Exchange], arrivals: Sequence[Received], *, payer: Sequence[PageVisit] = ()
) -> None:
    """The sequence diagram of a scenario (``toolkit.diagram``), attached once at its end.

    ``exchanges`` are the merchant's HTTP exchanges with the gateway, ``payer`` the requests of
    the payer's browser (method URL, hosted page, ACS, redirect to the merchant), ``arrivals`` the
    callbacks and redirects the merchant's receiver saw.  Nothing is attached when nothing happened.
    """
    if not (exchanges or arrivals or payer):
        return
    from toolkit.diagram import sequence_diagram

    svg = sequence_diagram(exchanges, arrivals, payer, title="what went where")
    allure.attach(svg, "sequence diagram", allure.attachment_type.SVG)


def _record(kind: str, item: Any) -> None:
    trace = _TRACE.get()
    if trace is not None:
        getattr(trace, kind).append(item)


def attach_exchange(exchange: Exchange) -> None:
    """One HTTP exchange as a step with the masked request, the answer and a curl command."""
    _record("exchanges", exchange)
    status = exchange.status_code if exchange.status_code is not None else "no answer"
    with allure.step(f"HTTP {exchange.operation}: {status} in {exchange.elapsed * 1000:.0f} ms"):
        request = "\n".join(f"{name}={value}" for name, value in exchange.request_fields)
        allure.attach(f"POST {exchange.url}\n\n{request}", "request (masked)", TEXT)
        allure.attach(exchange.response_body or (exchange.error or ""), "response", TEXT)
        allure.attach(exchange.as_curl(wrap=True), "curl (card data and signatures as placeholders)", TEXT)
        if exchange.signature and exchange.signature.base_string:
            allure.attach(mask_text(exchange.signature.base_string), "OAuth base string", TEXT)


def attach_page_visit(visit: PageVisit) -> None:
    """One request of the payer's browser as a step: what it sent (masked) and the page it got."""
    _record("payer", visit)
    path = urlsplit(visit.url).path or visit.url
    title = f"Payer: {visit.step}: {visit.method} {path} -> {visit.status_code} in {visit.elapsed * 1000:.0f} ms"
    with allure.step(title):
        sent = "\n".join(f"{name}={value}" for name, value in visit.fields)
        hops = f"\n(redirected {', '.join(map(str, visit.redirects))} to {visit.final_url})" if visit.redirects else ""
        allure.attach(f"{visit.method} {visit.url}{hops}\n\n{sent}".rstrip(), "payer's request (masked)", TEXT)
        allure.attach(visit.body, "page (HTML, masked)", TEXT)


def attach_lost_page(page: Page, message: str) -> None:
    """The page the payer could not find its way on: why, and the page itself (HTML, masked)."""
    with allure.step(f"Payer could not find its way on {mask_text(page.url)}"):
        allure.attach(mask_text(message), "what the payer looked for, and what the page has", TEXT)
        allure.attach(mask_html(page.html), "the page the payer could not read (HTML, masked)", TEXT)


def attach_screenshot(what: str, png: bytes) -> None:
    """A page the real-browser payer shows, as a step with its screenshot."""
    with allure.step(what):
        allure.attach(png, "screenshot", allure.attachment_type.PNG)


def record_poll(attempt: PollAttempt) -> None:
    with allure.step(str(attempt)):
        pass


def record_arrival(received: Received) -> None:
    """A callback, or the payer's redirect, as the merchant's back end received it (masked)."""
    _record("arrivals", received)
    control = {True: "control verified", False: "control DOES NOT verify", None: "control not checked"}
    with allure.step(f"Merchant received {received.summary()} ({control[received.control_ok]})"):
        allure.attach(json.dumps(received.params, indent=2), "parameters (masked)", allure.attachment_type.JSON)


def write_environment(results_dir: Path, values: dict[str, Any]) -> None:
    """``environment.properties`` and ``categories.json`` in the Allure results directory."""
    results_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"{key}={value}" for key, value in {**values, "toolkit.version": __version__}.items()]
    (results_dir / "environment.properties").write_text("\n".join(lines) + "\n")
    categories.write(results_dir)
