"""The notebooks' entry points: a gateway in the kernel, and masked HTML views of what it did.

    from toolkit import notebook as nb
    sim = nb.start_simulator()        # the embedded simulator on a free port, in this kernel
    order = sim.merchant.pay("sale", card_for("approved"), Decimal("10.42"))
    nb.show(sim.merchant.final_status(order))
    sim.timeline_of(order)            # requests, status polls, callbacks, payer redirects
    sim.diagram_of(order)             # the same as a sequence diagram (SVG)
    nb.screenshot(page)               # a page the payer was shown, drawn by headless Chromium

The handle (``toolkit.explorer.GatewaySession``) carries ``.client``, ``.merchant`` (a
``toolkit.flows.Merchant`` wired to a ``CallbackReceiver``), ``.payer``, ``.control`` (the simulator's
control API, or None), ``.receiver``, ``.timeline`` and ``.stop()``; it is stopped at interpreter
exit too.  Every view masks card data; none is ever given the control key.
"""

from __future__ import annotations

import atexit
import os
from typing import Any

from toolkit.debugger import Diagnosis, diagnose
from toolkit.diagram import Diagram
from toolkit.display.pages import PageView, Screenshot, safe_html
from toolkit.explorer.session import GatewaySession
from toolkit.explorer.views import ExchangeView, FieldsView, Note, SignatureView, TimelineView, show
from toolkit.payer.browser import BrowserUnavailable, screenshot_html
from toolkit.payer.forms import Page

__all__ = [
    "Diagnosis",
    "Diagram",
    "ExchangeView",
    "FieldsView",
    "GatewaySession",
    "Note",
    "PageView",
    "Screenshot",
    "SignatureView",
    "TimelineView",
    "connect",
    "diagnose",
    "screenshot",
    "show",
    "start_simulator",
]


def _stopped_at_exit(session: GatewaySession) -> GatewaySession:
    atexit.register(session.stop)
    return session


def start_simulator(**options: Any) -> GatewaySession:
    """Start the simulator in this kernel (``SimulatorServer(**options)``: settings, db, port...), with a
    callback receiver, a client of its demo merchant, a merchant, a payer and the control API."""
    return _stopped_at_exit(GatewaySession.embedded(**options))


def connect(profile: str | None = None, **overrides: Any) -> GatewaySession:
    """Use a profile (``simulator``, ``sandbox``, or one of ``gatekit.toml``); ``overrides`` win.

    ``control`` is set when the gateway is a simulator on this machine; callbacks reach the receiver
    from a local gateway, or through the profile's ``callback_url`` (else status polling only).
    """
    return _stopped_at_exit(GatewaySession.connect(profile, **overrides))


def screenshot(page: Page, *, width: int = 760, height: int = 560) -> Screenshot | PageView:
    """The page as the payer saw it: a PNG drawn by headless Chromium from its (masked, script-free) HTML.

    Without Chromium (or with ``GATEKIT_BROWSER=off``) the page is shown in a sandboxed frame instead.
    """
    if os.environ.get("GATEKIT_BROWSER") == "off":
        return PageView(page)
    try:
        png = screenshot_html(safe_html(page.html), width=width, height=height)
    except BrowserUnavailable:
        return PageView(page)
    return Screenshot(png, page.url)
