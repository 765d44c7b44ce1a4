"""The gateway-run road through 3-D Secure (behaviour 12): the gateway's own steps between the payer's pages.

The status ``html`` of a gateway-run order goes on by itself after the method step: the payer's browser comes to
the gateway's 3-D Secure return address (``continue_after_method``), and the gateway applies the method result
itself (``Y`` when the browser loaded the method URL, ``N`` when it did not) and takes the payer on.  The ACS
returns the payer to the same address with the CRes (2.x) or the PaRes (1.0.2) (``apply_returned``), and the
gateway applies it: the order becomes final without any upload.  ``next_step`` says where the payer goes from
there; the pages (``web.pages_threeds``) draw it.  A merchant-run order (``threeds.merchant_runs``) is left to the
merchant's uploads.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from toolkit.models import Status
from toolkit.simulator.rules import threeds
from toolkit.simulator.rules.engine import Engine
from toolkit.simulator.storage import Row

# The names an ACS posts its result under (3-D Secure 2: ``cres``; 1.0.2: ``PaRes``), read case-insensitively.
RESULT_NAMES = {"challenge": "cres", "pares": "pares"}


class Next(Enum):
    """Where the gateway sends the payer from its return address."""

    ACS = "acs"  # the challenge (2.x) or the 1.0.2 ACS page, still to be answered
    MERCHANT = "merchant"  # the order is final (or unknown): back to redirect_url with the signed outcome
    WAIT = "wait"  # the decision is being taken (latency) or the merchant runs the rest: the page looks again


def continue_after_method(engine: Engine, token: str) -> Row | None:
    """The payer's page went on after the method step: the gateway applies the method result itself.

    ``Y`` when the payer's browser loaded the method URL, ``N`` when it did not (the page went on without it).
    Only an order still at its method step changes; any other is returned as it stands (None: unknown token).
    """
    with engine.store.transaction():
        tx = threeds.by_token(engine, token)
        if tx is None:
            return None
        tx = engine.current(tx)  # (a window that has passed is applied first: N)
        if tx["tds_state"] != "method" or tx["status"] != Status.PROCESSING.value:
            return tx
        indicator = "Y" if engine.extra(tx).get("method_loaded") else "N"
        tx = engine.set_extra(tx, gateway_continued_at=engine.clock.now())
        return threeds.apply_method_result(engine, tx, indicator)


def apply_returned(engine: Engine, token: str, entries: Mapping[str, str]) -> Row | None:
    """The ACS returned the payer to the gateway with its result: applied, unless the merchant runs the order or
    it was applied already (a second post, or the merchant uploaded it): then the order as it stands.

    A CRes / PaRes that is not the simulator ACS's own, or another order's, is refused (``SimError``)."""
    lowered = {name.lower(): value for name, value in entries.items()}
    with engine.store.transaction():
        tx = threeds.by_token(engine, token)
        if tx is None:
            return None
        tx = engine.current(tx)
        name = RESULT_NAMES.get(tx["tds_state"])
        if name is None or not lowered.get(name) or not threeds.was_answered(engine, tx):
            return tx
        if threeds.merchant_runs(engine, tx):
            return tx
        tx = engine.set_extra(tx, gateway_applied_at=engine.clock.now())
        apply = threeds.apply_cres if tx["tds_state"] == "challenge" else threeds.apply_pares
        return apply(engine, tx, lowered[name])


def next_step(engine: Engine, tx: Row) -> Next:
    """Where the payer goes from the gateway's return address, for the order as it stands."""
    status = Status.parse(tx["status"])
    if status.is_final or status is Status.UNKNOWN:
        return Next.MERCHANT
    if tx["tds_state"] in RESULT_NAMES and not threeds.was_answered(engine, tx):
        return Next.ACS
    return Next.WAIT


def result_fields(engine: Engine, tx: Row, message: str) -> dict[str, str]:
    """What the ACS posts back to the gateway: ``cres`` and ``threeDSSessionData`` (2.x), ``PaRes`` and ``MD``."""
    if tx["tds_state"] == "challenge":
        return {"cres": message, "threeDSSessionData": str(tx["orderid"])}
    return {"PaRes": message, "MD": str(tx["orderid"])}


__all__ = ["RESULT_NAMES", "Next", "apply_returned", "continue_after_method", "next_step", "result_fields"]
