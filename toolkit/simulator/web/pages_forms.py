"""The hosted payment page of the form operations (sale-form, preauth-form, payment-form,
account-verification-form, payout-form, transfer-form): show, check the payer's entries, hand over to 3-D Secure
or send the payer back to the merchant (or, without a ``redirect_url``, show the result: behaviour section 12).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from toolkit.simulator.rules import payments
from toolkit.simulator.rules.engine import Engine
from toolkit.simulator.storage import Row
from toolkit.simulator.web import urls
from toolkit.simulator.web.pages_common import (
    NO_STORE,
    PageError,
    base_of,
    engine_of,
    merchant_redirect,
    not_found,
    order_summary,
    styled,
)
from toolkit.validation import Problem

TITLES = {
    "sale_form": "Payment",
    "preauth_form": "Payment (authorisation)",
    "payment_form": "Payment",
    "account_verification_form": "Card verification",
    "payout_form": "Receive a payout",
    "transfer_form": "Card-to-card transfer",
}
BUTTONS = {"account_verification_form": "Verify card", "payout_form": "Receive payout", "transfer_form": "Transfer"}
# Shown again after a field error; the card number and the CVV2 never are.
KEPT = ("card_printed_name", "expire_month", "expire_year")


@dataclass(frozen=True)
class Input:
    """One text input of the page: ``id`` and ``name`` are the field name."""

    name: str
    label: str
    autocomplete: str
    placeholder: str = ""
    numeric: bool = False


INPUTS = {
    "credit_card_number": Input("credit_card_number", "Card number", "cc-number", "digits only", True),
    "card_printed_name": Input("card_printed_name", "Name on card", "cc-name", "JOHN SMITH"),
    "expire_month": Input("expire_month", "Expiry month", "cc-exp-month", "MM", True),
    "expire_year": Input("expire_year", "Expiry year", "cc-exp-year", "YYYY", True),
    "cvv2": Input("cvv2", "CVV2", "cc-csc", "123", True),
    # the transfer page's second card: not the payer's own (no cc-* autocomplete), it only receives the money
    "destination-card-no": Input("destination-card-no", "Card number to receive the money", "off", "digits only", True),
}
PAYOUT_LABELS = {"credit_card_number": "Card number to receive the payout", "card_printed_name": "Cardholder name"}


def field_message(label: str, rule: str) -> str:
    """``Card number fails the Luhn check``; the rule never repeats the value entered."""
    if rule.startswith("longer than"):
        rule = f"is {rule}"
    return f"{label} {rule}" if rule.startswith(("is ", "must ", "fails ", "goes ")) else f"{label}: {rule}"


def _inputs(form: str) -> list[Input]:
    inputs = [INPUTS[name] for name in payments.form_fields(form)]
    if form != "payout_form":
        return inputs
    return [Input(i.name, PAYOUT_LABELS.get(i.name, i.label), i.autocomplete, i.placeholder, i.numeric) for i in inputs]


def _errors(inputs: Sequence[Input], problems: Sequence[Problem]) -> dict[str, str]:
    labels = {i.name: i.label for i in inputs}
    errors: dict[str, list[str]] = {}
    for problem in problems:
        errors.setdefault(problem.field, []).append(
            field_message(labels.get(problem.field, problem.field), problem.rule)
        )
    return {name: "; ".join(messages) for name, messages in errors.items()}


def _form_tx(engine: Engine, token: str, base: str) -> Row:
    """The order waiting on this page; 404 for an unknown page, 409 for one already used."""
    tx = payments.form_by_token(engine, token)
    if tx is None:
        raise not_found("This payment page")
    tx = engine.current(tx)  # (a page past its deadline has expired, even if the scheduler has not run yet)
    if tx["tds_state"] == "form":
        return tx
    orderid = tx["orderid"]
    if tx["tds_state"] in ("challenge", "pares"):
        make_url = urls.challenge_url if tx["tds_state"] == "challenge" else urls.acs_v1_url
        raise PageError(
            409,
            f"This payment page has already been submitted: order {orderid} waits for the payer's 3-D Secure step.",
            link=(make_url(base, tx["tds_token"]), "Continue to 3-D Secure"),
        )
    if engine.extra(tx).get("form_expired"):
        raise PageError(410, f"This payment page has expired: order {orderid} was declined.")
    raise PageError(409, f"This payment page has already been used: order {orderid} is {tx['status']}.")


# The alternate page style's names (``[simulator] page_style = "alternate"``) -> the payer's entries, read the same.
ALTERNATE_NAMES = {
    "pan": "credit_card_number",
    "csc": "cvv2",
    "holder": "card_printed_name",
    "to_pan": "destination-card-no",
}
_EXPIRY = re.compile(r"^\s*(\d{1,2})\s*[/ .-]\s*(\d{2}|\d{4})\s*$")


def canonical_entries(entries: Mapping[str, str], style: str) -> dict[str, str]:
    """What the payer entered, by the sale's field names: the alternate page's ``pan``, ``exp`` (``MM / YY``),
    ``csc`` and ``holder`` read as ``credit_card_number``, ``expire_month``/``expire_year``, ``cvv2``..."""
    if style == "standard":
        return dict(entries)
    canonical = {ALTERNATE_NAMES.get(name, name): value for name, value in entries.items()}
    expiry = entries.get("exp", "")
    match = _EXPIRY.match(expiry)
    month, year = (match.group(1), match.group(2)) if match else (expiry, "")
    canonical.update(expire_month=month, expire_year=year)  # (a bad expiry is the month's problem: "exp" below)
    return canonical


def _form_page(
    engine: Engine, tx: Row, action: str, entries: Mapping[str, str] | None = None, problems: Sequence[Problem] = ()
) -> Response:
    form = engine.extra(tx)["form"]
    inputs = _inputs(form)
    values = {name: (entries or {}).get(name, "").strip() for name in KEPT}
    if entries is not None and engine.settings.page_style != "standard":
        values.update(exp=str(entries.get("exp", "")).strip(), holder=str(entries.get("holder", "")).strip())
    return styled(
        engine,
        "payment_form.html",
        title=TITLES.get(form, "Payment"),
        button=BUTTONS.get(form, "Pay"),
        action=action,
        summary=order_summary(engine, tx),
        inputs=inputs,
        values=values,
        errors=_errors(inputs, problems),
        payout=form == "payout_form",
        transfer=form == "transfer_form",
    )


def show_form(request: Request, token: str) -> Response:
    engine, base = engine_of(request), base_of(request)
    tx = _form_tx(engine, token, base)
    return _form_page(engine, tx, urls.form_url(base, token))


def submit_form(request: Request, token: str, entries: dict[str, str]) -> Response:
    engine, base = engine_of(request), base_of(request)
    tx = _form_tx(engine, token, base)
    style = engine.settings.page_style
    try:
        tx = payments.submit_form(engine, token, canonical_entries(entries, style))
    except payments.FormProblems as exc:
        return _form_page(engine, tx, urls.form_url(base, token), entries, exc.problems)
    if tx["tds_state"] in ("challenge", "pares"):
        return _to_acs(engine, tx, base)
    return merchant_redirect(engine, tx)


def _to_acs(engine: Engine, tx: Row, base: str) -> Response:
    """To the issuer's page: a 303 (standard pages), or a page that posts the CReq / PaReq itself (alternate)."""
    challenge = tx["tds_state"] == "challenge"
    url = (urls.challenge_url if challenge else urls.acs_v1_url)(base, tx["tds_token"])
    if engine.settings.page_style == "standard":
        return RedirectResponse(url, status_code=303, headers=NO_STORE)
    fields = {"creq": tx["tds_token"]} if challenge else {"PaReq": tx["tds_token"], "MD": str(tx["orderid"])}
    return styled(engine, "redirect_post.html", action=url, fields=fields)


def pages() -> list[tuple[str, Callable[..., Response], list[str]]]:
    """(path, page function, methods) of the hosted payment form (``pages.routes`` makes them routes)."""
    path = urls.form_url(urls.PAGE_ROOT, "{token}")
    return [(path, show_form, ["GET"]), (path, submit_form, ["POST"])]
