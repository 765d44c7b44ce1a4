"""The simulator's 3-D Secure pages: the 2.x method URL, the 2.x ACS challenge, the 1.0.2 ACS, and the gateway's
own 3-D Secure return address.

The model is ``threeds`` (and ``threeds_gateway`` for the gateway's own steps).  On the gateway-run road (the
default, and every hosted form) the ACS returns the payer to the gateway's return address with the CRes / PaRes,
and the gateway applies it and sends the payer back to ``redirect_url`` with the final status; the same address
takes the payer on after the method step, and keeps the payer (a page that looks again) while the decision is
taken.  On the merchant-run road (behaviour 12: the merchant has uploaded a step result, or named its own 1.0.2
``TermUrl``) the merchant's back end receives ``cres`` (or ``pares`` and ``md``) with the redirect and uploads it
(upload-cres-result / upload-pares-result).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from toolkit.models import Status
from toolkit.simulator.rules import threeds, threeds_gateway
from toolkit.simulator.rules.engine import Engine
from toolkit.simulator.rules.threeds_gateway import Next
from toolkit.simulator.storage import Row
from toolkit.simulator.web import urls
from toolkit.simulator.web.pages_common import (
    PageError,
    base_of,
    engine_of,
    merchant_redirect,
    not_found,
    order_summary,
    styled,
)
from toolkit.testdata.outcomes import CHALLENGE_PASSWORD, THREE_DS_V1_AMOUNTS

Entries = dict[str, str]  # the form's fields (``pages_common.form_entries``, read by ``pages.PageRoute``)
UPLOADS = {"challenge": "upload-cres-result", "pares": "upload-pares-result"}
WHAT = {"challenge": "3-D Secure challenge", "pares": "3-D Secure 1.0.2 authentication"}


def _waiting_tx(engine: Engine, token: str, state: str, versions: tuple[str, ...]) -> Row:
    """The order whose ACS page this is, while it waits for the payer (404 unknown, 409 over)."""
    tx = threeds.by_token(engine, token)
    if tx is None or tx["three_ds"] not in versions:
        raise not_found(f"This {WHAT[state]} page")
    tx = engine.current(tx)  # (a challenge past its time limit is over, even if the scheduler has not run yet)
    if tx["tds_state"] == state and not threeds.was_answered(engine, tx):
        return tx
    raise PageError(409, _why_over(engine, tx, state))


def _why_over(engine: Engine, tx: Row, state: str) -> str:
    what, orderid = WHAT[state], tx["orderid"]
    if tx["tds_state"] == "method":
        return (
            f"The 3-D Secure method step of order {orderid} is not finished yet: the challenge opens once the "
            "payer's page has gone on to the gateway, or the merchant has uploaded the method result "
            "(upload-method-url-result)."
        )
    if tx["tds_state"] == state and threeds.merchant_runs(engine, tx):
        return (
            f"The {what} of order {orderid} has already been answered: the merchant's server now uploads "
            f"the result ({UPLOADS[state]})."
        )
    if tx["tds_state"] == state:
        return (
            f"The {what} of order {orderid} has already been answered: the payer's browser takes the result back "
            "to the gateway."
        )
    if Status.parse(tx["status"]).is_final:
        return f"The {what} of order {orderid} is over: the order is {tx['status']}."
    return f"The {what} of order {orderid} is over: the order is being decided."


def _check_echo(entries: dict[str, str], name: str, token: str) -> None:
    """The auto-submitted ``creq`` / ``PaReq`` must be the one the status handed out for this page."""
    value = entries.get(name, "").strip()
    if value and value != token:
        raise PageError(400, f"The {name} posted to this page belongs to another 3-D Secure authentication.")


# --- 3-D Secure 2.x ----------------------------------------------------------------------------


def method(request: Request, token: str) -> Response:
    """The method URL, loaded in a hidden frame: the ACS has fingerprinted the browser."""
    tx = threeds.method_loaded(engine_of(request), token)
    if tx is None:
        raise not_found("This 3-D Secure method address")
    return styled(engine_of(request), "method_done.html", orderid=str(tx["orderid"]))


def challenge(request: Request, token: str, entries: Entries) -> Response:
    engine = engine_of(request)
    tx = _waiting_tx(engine, token, "challenge", (threeds.V2_CHALLENGE,))
    _check_echo(entries, "creq", token)
    return styled(
        engine,
        "challenge.html",
        action=urls.challenge_url(base_of(request), token) + "/answer",
        summary=order_summary(engine, tx),
        password=CHALLENGE_PASSWORD,
    )


def challenge_answer(request: Request, token: str, entries: Entries) -> Response:
    return _answer(engine_of(request), token, entries, ACS_V2, base_of(request))


# --- 3-D Secure 1.0.2 --------------------------------------------------------------------------


def acs_v1(request: Request, token: str, entries: Entries) -> Response:
    """The 1.0.2 ACS page.  A ``TermUrl`` posted with the PaReq that is not the gateway's own return address is
    the merchant's own page running the step: the order is merchant-run, and the PaRes goes to that TermUrl."""
    engine = engine_of(request)
    tx = _waiting_tx(engine, token, "pares", (threeds.V1,))
    _check_echo(entries, "PaReq", token)
    term = entries.get("TermUrl", "").strip()
    if term and term != urls.return_url(base_of(request), token):
        with engine.store.transaction():
            tx = threeds.run_by_merchant(engine, tx, term)
    return styled(
        engine,
        "acs_v1.html",
        action=urls.acs_v1_url(base_of(request), token) + "/answer",
        summary=order_summary(engine, tx),
        password=CHALLENGE_PASSWORD,
        amounts=THREE_DS_V1_AMOUNTS,
    )


def acs_v1_answer(request: Request, token: str, entries: Entries) -> Response:
    return _answer(engine_of(request), token, entries, ACS_V1, base_of(request))


@dataclass(frozen=True)
class Acs:
    """One ACS page's answer: sign the result, and what the merchant receives of it when it runs the order."""

    state: str
    version: str
    sign: Callable[[Engine, str, str], tuple[Row, str]]
    handed: Callable[[Row, str], dict[str, str]]


ACS_V2 = Acs("challenge", threeds.V2_CHALLENGE, threeds.challenge_cres, lambda tx, m: {"cres": m})
ACS_V1 = Acs("pares", threeds.V1, threeds.v1_pares, lambda tx, m: {"pares": m, "md": str(tx["orderid"])})


def _answer(engine: Engine, token: str, entries: dict[str, str], acs: Acs, base: str) -> Response:
    """The ACS page is used up; its signed result goes back to the gateway (gateway-run: the payer's browser
    posts it to the gateway's return address), or to the merchant, who uploads it (merchant-run)."""
    with engine.store.transaction():
        _waiting_tx(engine, token, acs.state, (acs.version,))
        typed = entries.get("password") or entries.get("otp") or entries.get("pwd") or ""  # (the page styles' names)
        tx, message = acs.sign(engine, token, typed.strip())
        tx = threeds.record_answer(engine, tx)
        runs = threeds.gateway_runs(engine, tx)
    if runs:
        fields = threeds_gateway.result_fields(engine, tx, message)
        return _post_on(engine, urls.return_url(base, token), fields, "Returning to the payment gateway")
    action = threeds.term_url(engine, tx) if acs.state == "pares" else None
    return merchant_redirect(engine, tx, acs.handed(tx, message), action=action)


# --- the gateway's own 3-D Secure return address -----------------------------------------------


def gateway_return(request: Request, token: str, entries: Entries) -> Response:
    """The gateway-run road: after the method step (the status html goes on by itself), after the ACS (with its
    CRes or PaRes, applied here), and while the decision is taken (the page looks again every second)."""
    engine, base = engine_of(request), base_of(request)
    if any(name.lower() in ("cres", "pares") for name in entries):
        tx = threeds_gateway.apply_returned(engine, token, entries)
    else:
        tx = threeds_gateway.continue_after_method(engine, token)
    if tx is None:
        raise not_found("This 3-D Secure address")
    step = threeds_gateway.next_step(engine, tx)
    if step is Next.MERCHANT:
        return merchant_redirect(engine, tx)
    if step is Next.ACS:
        return to_acs(engine, tx, base)
    return styled(engine, "threeds_wait.html", refresh=urls.return_url(base, token), summary=order_summary(engine, tx))


def to_acs(engine: Engine, tx: Row, base: str) -> Response:
    """The payer goes on to the ACS: a page that posts the CReq (2.x) or the PaReq, MD and the gateway's TermUrl."""
    token = tx["tds_token"]
    if tx["tds_state"] == "challenge":
        fields = {"creq": token, "threeDSSessionData": str(tx["orderid"])}  # (EMV 3DS: the CReq and the session)
        return _post_on(engine, urls.challenge_url(base, token), fields, "Redirecting to your bank")
    fields = {"PaReq": token, "MD": str(tx["orderid"]), "TermUrl": urls.return_url(base, token)}
    return _post_on(engine, urls.acs_v1_url(base, token), fields, "Redirecting to your bank")


def _post_on(engine: Engine, action: str, fields: dict[str, str], title: str) -> Response:
    """A page that posts ``fields`` to ``action`` by itself (a button without scripts)."""
    return styled(engine, "redirect_post.html", action=action, fields=fields, title=title)


def pages() -> list[tuple[str, Callable[..., Response], list[str]]]:
    """(path, page function, methods) of the 3-D Secure pages (``pages.routes`` makes them routes)."""
    root = urls.PAGE_ROOT
    return [
        (urls.method_url(root, "{token}"), method, ["GET", "POST"]),
        (urls.challenge_url(root, "{token}"), challenge, ["GET", "POST"]),
        (urls.challenge_url(root, "{token}") + "/answer", challenge_answer, ["POST"]),
        (urls.acs_v1_url(root, "{token}"), acs_v1, ["GET", "POST"]),
        (urls.acs_v1_url(root, "{token}") + "/answer", acs_v1_answer, ["POST"]),
        (urls.return_url(root, "{token}"), gateway_return, ["GET", "POST"]),
    ]
