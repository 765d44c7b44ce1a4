"""The step phrases of ``steps/``, one writer per kind of action (``HANDLERS``).

Each writer checks that its step will do what was done (same order, same outcome) and writes the
phrase exactly as ``steps/conftest.py`` and ``steps/test_*.py`` define it; otherwise ExportError.
"""

from __future__ import annotations

from collections.abc import Callable

from toolkit.exporter.gherkin import ExportError, Writer, money
from toolkit.exporter.records import (
    GATEWAY_RUN,
    HOSTED_FIELDS,
    METHOD_LAPSED,
    PAYER_CHALLENGE,
    PAYER_HOSTED,
    PAYER_METHOD,
    PAYER_STATUS_PAGE,
    PAYER_TOKENIZE,
    Action,
    Tracked,
)
from toolkit.flows import METHOD_INDICATORS, METHOD_WINDOW
from toolkit.models import Status
from toolkit.testdata.orders import DEFAULT_AMOUNT
from toolkit.testdata.outcomes import amount_for_currency, outcome_for_amount, outcome_for_cvv

# Outcome names of toolkit.testdata.outcomes -> "Given a card that ..." (steps/conftest.py, CARDS).
CARD_PHRASES = {
    "approved": "is approved",
    "3ds-challenge": "requires a 3-D Secure challenge",
    "not-enrolled": "is not enrolled in 3-D Secure",
    "unknown": "is unknown",
    "expired-card": "is expired",
    "insufficient-funds": "is insufficient-funds",
    "not-permitted": "is not-permitted",
    "stolen-card": "is stolen",
    "declined": "is declined",
}
REBILL_PHRASES = {"approved": "is approved", "insufficient-funds": "gives insufficient funds"}
METHOD_HOW = {indicator: how for how, indicator in METHOD_INDICATORS.items()}  # "Y" -> "completed"
EXPRESSIBLE = (
    "sale (any card outcome), account verification, an approved preauth, capture, return, void, "
    "card reference + rebill, v2 payout, payout check + pay, hosted forms paid with an approved card, "
    "3-D Secure as the payer (run by the gateway, or by the merchant with the uploads), status by client_orderid, "
    "a Hosted Fields checkout (ticket, the card typed by the payer, sale_v4, 3-D Secure by redirect-to; a ticket "
    "typed into twice, a token charged twice)"
)


def _card_given(writer: Writer, action: Action, created: Tracked) -> None:
    card = created.order.card
    if card is None:
        raise ExportError(f"{action.operation} {created.orderid} carried no card the steps can describe")
    if created.three_ds_v1:
        writer.add("Given", "a 3-D Secure 1.0.2 test card")
        return
    _outcome_given(writer, outcome_for_cvv(card.cvv2).name)


def _outcome_given(writer: Writer, outcome: str) -> None:
    if outcome not in CARD_PHRASES:
        known = ", ".join(CARD_PHRASES)
        raise ExportError(f"no step gives a card with outcome {outcome!r} (the steps know: {known})")
    writer.add("Given", f"a card that {CARD_PHRASES[outcome]}")


def _created(action: Action) -> Tracked:
    if action.created is None:
        raise ExportError(f"{action.operation}: the gateway created no order to follow")
    return action.created


def _sale(w: Writer, a: Action) -> None:
    created = _created(a)
    _card_given(w, a, created)
    w.add("When", f"the merchant sends a sale of {a.amount} {a.currency}")
    w.order, w.pending = created, [("order", created)]


def _verification(w: Writer, a: Action) -> None:
    created = _created(a)
    _card_given(w, a, created)
    w.add("When", "the merchant verifies the card account")
    w.order, w.pending = created, [("order", created)]


def _preauth(w: Writer, a: Action) -> None:
    created = _created(a)
    card = created.order.card
    if card is None or outcome_for_cvv(card.cvv2).name != "approved" or created.state is not Status.APPROVED:
        raise ExportError(
            f"{created.label}: the suite sends preauths only as 'Given an approved preauth of ...' "
            "(an approved card, approved): choose the outcome 'approved' for a preauth"
        )
    w.add("Given", f"an approved preauth of {a.amount} {a.currency}")
    w.order = created


def _follow_up(verb: str, group: str) -> Callable[[Writer, Action], None]:
    """capture and return: 'the merchant captures 10.00 EUR' / 'captures the rest' / 'tries to capture ...'."""

    def write(w: Writer, a: Action) -> None:
        w.on_order(a, a.target)
        amount = money(a, group)
        if a.refusal:
            if not amount:
                raise ExportError(f"a refused {group} of the whole amount has no step ('tries to {verb}' needs one)")
            w.flush()
            w.add("When", f"the merchant tries to {verb} {amount} EUR")
            w.refused(a)
            return
        if w.pending != [(group, None)]:
            w.flush()
            w.pending = [(group, None)]
        created = _created(a)
        if created.state is not Status.APPROVED:
            raise ExportError(f"{created.label}: the suite checks that every {group} is approved")
        w.add("When", f"the merchant {verb}s {amount} EUR" if amount else f"the merchant {verb}s the rest")

    return write


def _void(w: Writer, a: Action) -> None:
    w.on_order(a, a.target)
    if a.refusal:
        amount = money(a, "void")
        attempt = (
            f"the merchant tries to void {amount} EUR of the order"
            if amount
            else "the merchant tries to void the order"
        )
        w.add("When", attempt)
        w.refused(a)
        return
    created = _created(a)
    if created.state is not Status.APPROVED:
        raise ExportError(f"{created.label}: the suite checks that the void is approved")
    w.add("When", "the merchant voids the order")
    w.pending = [("void", None)]


def _card_ref(version: str) -> Callable[[Writer, Action], None]:
    def write(w: Writer, a: Action) -> None:
        tracked = w.on_order(a, a.target)
        if a.refusal or not tracked.card_ref_id:
            raise ExportError(f"create_card_ref on {tracked.label} was refused: no step tries a card reference")
        w.add("When", f"the merchant creates a card reference with {version}")
        w.add("Then", "the card information shows the holder, BIN, last four digits and expiry of the card")
        w.card_ref = tracked.card_ref_id

    return write


def _rebill(w: Writer, a: Action) -> None:
    cardrefid = a.fields.get("cardrefid", "")
    if a.refusal:
        w.add("When", f"the merchant tries to rebill card reference {cardrefid}")
        w.refused(a)
        return
    if not w.card_ref or cardrefid != w.card_ref:
        raise ExportError(f"the rebill of card reference {cardrefid} needs the card reference created in the scenario")
    outcome = outcome_for_amount(a.amount, a.currency or "EUR").name
    if outcome not in REBILL_PHRASES:
        known = ", ".join(REBILL_PHRASES)
        raise ExportError(f"no step rebills an amount that gives {outcome!r} (the steps know: {known})")
    if a.currency != "EUR" or a.amount != str(amount_for_currency(outcome, "EUR")):
        w.add("#", f"the explorer rebilled {a.amount} {a.currency}; the step rebills its own amount, also {outcome}")
    w.add("When", f"the merchant rebills an amount that {REBILL_PHRASES[outcome]}")
    w.order = _created(a)
    w.pending = [("order", w.order)]


def _payout(w: Writer, a: Action) -> None:
    if a.refusal:
        raise ExportError(f"the gateway refused the payout ({a.refusal}): no step sends a refused payout")
    w.add("When", f"the merchant sends a v2 payout of {money(a, 'payout')} EUR to an approved card")
    w.order = _created(a)
    w.pending = [("order", w.order)]


def _payout_check(w: Writer, a: Action) -> None:
    if a.refusal:
        raise ExportError(f"the gateway refused the payout check ({a.refusal}): no step sends a refused check")
    w.add("When", f"the merchant checks a payout of {money(a, 'payout check')} EUR to an approved card")
    w.check = _created(a)
    w.pending = [("check", w.check)]


def _payout_pay(w: Writer, a: Action) -> None:
    target = a.target
    if a.refusal:
        if target is not None and target is w.check and id(target) in w.paid:
            w.add("When", "the merchant tries to pay the checked payout again")
        elif target is not None and target is w.order and target.operation != "payout_check":
            w.add("When", "the merchant tries to pay out that order")
        else:
            raise ExportError(f"payout-pay refused ({a.refusal}): no step tries this payout-pay")
        w.refused(a)
        return
    if target is None or target is not w.check:
        raise ExportError("payout-pay must pay the payout check sent in the scenario ('the checked payout')")
    w.add("When", "the merchant pays the checked payout")
    w.paid.add(id(target))
    w.order = _created(a)
    w.pending = [("order", w.order)]


def _form(w: Writer, a: Action) -> None:
    created = _created(a)
    amount = money(a, "hosted form") or "10.00"
    if not a.amount:
        w.add("#", f"{a.operation} takes no amount; the step's amount is not sent")
    w.add("When", f"the merchant opens a {a.operation.replace('_', '-')} for {amount} EUR")
    w.order, w.pending = created, [("order", created)]


def _hosted(w: Writer, a: Action) -> None:
    tracked = w.on_order(a, a.target)
    w.add("When", "the payer enters an approved card on the payment page")
    w.challenged.add(id(tracked))


def _method(w: Writer, a: Action) -> None:
    w.on_order(a, a.target)
    w.add("When", "the payer's browser completes the 3-D Secure method step")


def _report_method(w: Writer, a: Action) -> None:
    tracked = w.on_order(a, a.target)
    if a.refusal:
        raise ExportError(f"the method-step report was refused ({a.refusal}): no step reports a refused method step")
    how = a.detail.get("how") or METHOD_HOW.get(a.fields.get("threeDSCompInd", ""), "")
    if how not in METHOD_HOW.values():
        raise ExportError(f"no step reports the method step as {a.fields.get('threeDSCompInd')!r}")
    w.add("When", f"the merchant reports the method step as {how}")
    w.methods.add(id(tracked))


def _method_lapsed(w: Writer, a: Action) -> None:
    """A comment: what the steps that follow do reaches the same state at once (a report of N, or the status page)."""
    w.on_order(a, a.target)
    w.add(
        "#",
        f"in the explorer nobody reported the method step within {METHOD_WINDOW} s of the load: the gateway timed it "
        "out (N)",
    )


def _status_page(w: Writer, a: Action) -> None:
    """Gateway-run (behaviour 12): the status html shown to the payer's browser; it goes on by itself."""
    tracked = w.on_order(a, a.target)
    if tracked.operation != "sale":
        raise ExportError(f"3-D Secure on a {tracked.operation}: the suite shows the status page of a sale")
    w.add("When", "the merchant shows the 3-D Secure page of the status to the payer's browser")
    w.gateway_run.add(id(tracked))


def _challenge(w: Writer, a: Action) -> None:
    tracked = w.on_order(a, a.target)
    right = a.detail.get("password") == "right"
    if a.detail.get("road") == HOSTED_FIELDS:  # the v4 status's redirect-to, followed once
        password = "the right" if right else "a wrong"
        w.add("When", f"the payer's browser follows redirect-to and answers the challenge with {password} password")
        w.redirected.add(id(tracked))
        return
    if tracked.operation != "sale":
        raise ExportError(f"3-D Secure on a {tracked.operation}: the suite's challenge steps follow a sale")
    if a.detail.get("road") == GATEWAY_RUN:  # the page the status html went on to, either version
        if id(tracked) not in w.gateway_run:
            raise ExportError("the payer answered a challenge the status page was not shown for")
        w.add("When", f"the payer answers the challenge with {'the right' if right else 'a wrong'} password")
    elif a.detail.get("version") == "1.0.2":
        if not right:
            raise ExportError("no step answers the 3-D Secure 1.0.2 page with a wrong password")
        w.add("When", "the payer authenticates on the issuer's 3-D Secure 1.0.2 page")
    else:
        w.add("When", f"the payer answers the challenge with {'the right' if right else 'a wrong'} password")
    w.challenged.add(id(tracked))


def _upload(what: str) -> Callable[[Writer, Action], None]:
    def write(w: Writer, a: Action) -> None:
        tracked = w.on_order(a, a.target)
        if a.refusal or id(tracked) not in w.challenged:
            raise ExportError(f"upload of the {what} result: the steps upload only what the payer brought back")
        w.add("When", f"the merchant uploads the {what} result the payer brought back")

    return write


def _status(w: Writer, a: Action) -> None:
    tracked = w.order
    by_own_id = "orderid" not in a.fields and tracked is not None
    if not by_own_id or tracked is None or a.fields.get("client_orderid") != tracked.client_orderid:
        w.add("#", "a status request (polls are not steps)")
        return
    w.flush()
    status = tracked.status
    if status is None or status.status is not Status.APPROVED or status.currency != "EUR":
        raise ExportError("the status step checks an approved EUR order: 'Then the status is approved for ... EUR'")
    w.add("When", "the merchant asks for the status by its own order id only")
    w.add("Then", f"the status is approved for {status.amount} EUR")


# --- Hosted Fields: a checkout page (its ticket, the card typed), the token charged --------------------------------


def _ticket(w: Writer, a: Action) -> None:
    """A new load of the checkout page: written with the card typed into it and the sale that charges it."""
    if a.refusal:
        raise ExportError(f"the gateway refused the ephemeral ticket ({a.refusal}): no step asks for a refused one")
    w.page = {"typed": ""}


def _page_steps(w: Writer, amount: str, currency: str) -> None:
    """Given the card, When the page gets its ticket, And the payer types the card: once per page."""
    page = w.page
    assert page is not None
    if page.get("written"):
        return
    _outcome_given(w, page["typed"])
    w.add("When", f"the merchant's checkout page for {amount} {currency} gets a fresh ephemeral ticket")
    w.add("When", "the payer types the card into the Hosted Fields")
    page["written"] = "yes"


def _tokenize(w: Writer, a: Action) -> None:
    page = w.page
    if page is None:
        raise ExportError("the payer typed a card with no checkout page of the scenario: send create_ephemeral_ticket")
    if not a.refusal:
        if page["typed"]:
            raise ExportError("the payer typed a second card into one page: the steps type one card per page load")
        page["typed"] = a.detail.get("outcome", "")
        return
    code = a.detail.get("code", "")
    if not page["typed"] or code != "4003":
        raise ExportError(f"the gateway refused the card typed into the Hosted Fields ({a.refusal}): the steps "
                          "refuse only a second card typed on the same page (4003)")  # fmt: skip
    if not page.get("written"):
        w.add("#", "the page's amount: no sale was sent for it")
        _page_steps(w, str(DEFAULT_AMOUNT), "EUR")
    w.add("When", "the payer types the card into the Hosted Fields again on the same page")
    w.add("Then", f"the gateway refuses the card typed into the Hosted Fields with code {code}")


def _hosted_sale(w: Writer, a: Action) -> None:
    token = a.fields.get("hosted_fields_token", "")
    if a.refusal:
        if token not in w.charged:
            raise ExportError(f"the gateway refused the sale_v4 ({a.refusal}): the steps charge a token twice, "
                              "nothing else that is refused")  # fmt: skip
        w.add("When", "the merchant charges the same hosted fields token for another order")
        w.refused(a)
        return
    page, created = w.page, _created(a)
    if page is None or not page["typed"] or created.order.card is None:
        raise ExportError("sale_v4 charged a token the payer did not type in the scenario: send create_ephemeral_"
                          "ticket, tokenize as the payer, then send sale_v4")  # fmt: skip
    _page_steps(w, a.amount, a.currency)
    w.add("When", "the merchant charges the hosted fields token")
    w.charged.add(token)
    w.order, w.pending = created, [("order", created)]


def _comment(text: str) -> Callable[[Writer, Action], None]:
    return lambda w, a: w.add("#", text)


HANDLERS: dict[str, Callable[[Writer, Action], None]] = {
    "sale": _sale,
    "preauth": _preauth,
    "account_verification": _verification,
    "capture": _follow_up("capture", "capture"),
    "return": _follow_up("return", "return"),
    "void": _void,
    "create_card_ref": _card_ref("v2"),
    "create_card_ref_v4": _card_ref("v4"),
    "make_rebill": _rebill,
    "payout": _payout,
    "payout_check": _payout_check,
    "payout_pay": _payout_pay,
    **dict.fromkeys(("sale_form", "preauth_form", "payment_form", "account_verification_form", "payout_form"), _form),
    PAYER_HOSTED: _hosted,
    PAYER_METHOD: _method,
    PAYER_STATUS_PAGE: _status_page,
    "upload_method_url_result": _report_method,
    METHOD_LAPSED: _method_lapsed,
    PAYER_CHALLENGE: _challenge,
    "upload_cres_result": _upload("challenge"),
    "upload_pares_result": _upload("authentication"),
    "status": _status,
    "get_card_info": _comment("card information asked (not a step of its own)"),
    "create_ephemeral_ticket": _ticket,
    PAYER_TOKENIZE: _tokenize,
    "sale_v4": _hosted_sale,
    "status_v4": _comment("a v4 status request (polls are not steps)"),
}
CONTINUATIONS = frozenset({PAYER_METHOD, PAYER_STATUS_PAGE, PAYER_CHALLENGE, PAYER_HOSTED, METHOD_LAPSED,
                           "upload_method_url_result", "upload_cres_result", "upload_pares_result",
                           "status_v4"})  # fmt: skip
