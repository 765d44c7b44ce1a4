"""Request fields for the client, one builder per kind of order, checked against the catalogue.

Every builder returns a plain ``dict[str, str | Decimal]`` with wire names, holding only fields
that ``toolkit.operations`` lists for the operation, with every required one present.  Keyword
``overrides`` win (Python names such as ``destination_card_no`` are accepted); an override of
``None`` removes a field, to test what the gateway says when it is missing.

Outcomes (behaviour section 6): card orders choose by the card's CVV2 (``card_for``); payouts,
rebills and recurring charges by the amount (``outcomes.amount_for``).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from toolkit.fields import wire_name
from toolkit.operations import OPERATIONS, ResponseKind
from toolkit.testdata.cards import Card, card_for, future_expiry, random_card_number
from toolkit.testdata.outcomes import amount_for_currency
from toolkit.testdata.payers import Payer, new_client_orderid, new_payer

OrderFields = dict[str, str | Decimal]
Override = str | Decimal | int | None

DEFAULT_AMOUNT = Decimal("10.42")
DEFAULT_CURRENCY = "EUR"
DEFAULT_ORDER_DESC = "gatekit test order"
DEFAULT_REDIRECT_URL = "https://merchant.example/return"  # give CallbackReceiver.redirect_url in real flows


def build_fields(
    operation: str, candidate: Mapping[str, str | Decimal], overrides: Mapping[str, Override]
) -> OrderFields:
    """Keep the fields ``operation`` knows, then apply ``overrides`` (None removes a field)."""
    known = set(OPERATIONS[operation].fields)
    merged: dict[str, Override] = {name: value for name, value in candidate.items() if name in known}
    merged.update({wire_name(name): value for name, value in overrides.items()})
    return {name: _value(name, value) for name, value in merged.items() if value is not None}


def _value(name: str, value: object) -> str | Decimal:
    """Decimal stays Decimal, anything else becomes its string; float is refused (behaviour section 7)."""
    if isinstance(value, float):
        raise TypeError(f"{name}: pass money as Decimal or str, never float")
    return value if isinstance(value, Decimal) else str(value)


def _order(amount: Decimal, currency: str) -> OrderFields:
    """What every order starts with: a fresh ``client_orderid``, a description and the money."""
    return {
        "client_orderid": new_client_orderid(),
        "order_desc": DEFAULT_ORDER_DESC,
        "amount": amount,
        "currency": currency,
    }


def _card_order(outcome: str, amount: Decimal, currency: str, payer: Payer | None, card: Card | None) -> OrderFields:
    """The candidate fields of a card order: payer, card (its CVV2 chooses the outcome), money."""
    payer = payer or new_payer()
    card = card or card_for(outcome, holder=payer.full_name.upper())
    return {**_order(amount, currency), **payer.fields(), **card.fields()}


def _chosen_amount(outcome: str, amount: Decimal | None, currency: str) -> Decimal:
    """The given amount, or one whose minor units choose ``outcome`` (card-less orders)."""
    return amount if amount is not None else amount_for_currency(outcome, currency)


def sale_fields(
    outcome: str = "approved",
    amount: Decimal = DEFAULT_AMOUNT,
    currency: str = DEFAULT_CURRENCY,
    payer: Payer | None = None,
    card: Card | None = None,
    **overrides: Override,
) -> OrderFields:
    """A ``sale`` that ends in ``outcome`` (a card outcome name); a given ``card`` wins over ``outcome``."""
    return build_fields("sale", _card_order(outcome, amount, currency, payer, card), overrides)


def preauth_fields(
    outcome: str = "approved",
    amount: Decimal = DEFAULT_AMOUNT,
    currency: str = DEFAULT_CURRENCY,
    payer: Payer | None = None,
    card: Card | None = None,
    **overrides: Override,
) -> OrderFields:
    """A ``preauth``: the same fields as a sale."""
    return build_fields("preauth", _card_order(outcome, amount, currency, payer, card), overrides)


def verification_fields(
    outcome: str = "approved", payer: Payer | None = None, card: Card | None = None, **overrides: Override
) -> OrderFields:
    """An ``account_verification`` (zero amount: no amount, no currency)."""
    candidate = _card_order(outcome, DEFAULT_AMOUNT, DEFAULT_CURRENCY, payer, card)
    return build_fields("account_verification", candidate, overrides)


FORM_OPERATIONS = tuple(op.name for op in OPERATIONS.values() if op.response is ResponseKind.FORM)


def form_fields(
    operation: str = "sale_form",
    amount: Decimal = DEFAULT_AMOUNT,
    currency: str = DEFAULT_CURRENCY,
    payer: Payer | None = None,
    **overrides: Override,
) -> OrderFields:
    """A hosted-form order (sale_form, preauth_form, payment_form, account_verification_form, payout_form,
    transfer_form).

    No card data: the payer types it on the gateway's page, and the card's CVV2 chooses there.
    ``redirect_url`` defaults to a placeholder; pass ``redirect_url=receiver.redirect_url``.
    """
    name = operation.replace("-", "_")
    if name not in FORM_OPERATIONS:
        raise ValueError(f"{operation!r} is not a hosted-form operation; use one of {', '.join(FORM_OPERATIONS)}")
    payer = payer or new_payer()
    candidate = {**_order(amount, currency), "redirect_url": DEFAULT_REDIRECT_URL, **payer.fields()}
    return build_fields(name, candidate, overrides)


# What the examples' checkout page sends of the payer's browser beside the token (hosted-fields.md 3.3:
# ``browserInfo()``, and the page request's Accept and User-Agent headers): a desktop Chromium.
BROWSER_DATA = {
    "customer_browser_info": "true",
    "customer_browser_javascript_enabled": "true",
    "customer_browser_java_enabled": "false",
    "customer_browser_accept_language": "en-US",
    "customer_browser_color_depth": "24",
    "customer_browser_screen_width": "1280",
    "customer_browser_screen_height": "800",
    "customer_browser_time_zone": "0",
    "customer_browser_accept_header": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "customer_browser_user_agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120",
}


def hosted_sale_fields(
    token: str,
    amount: Decimal = DEFAULT_AMOUNT,
    currency: str = DEFAULT_CURRENCY,
    payer: Payer | None = None,
    **overrides: Override,
) -> OrderFields:
    """A Hosted Fields ``sale_v4``: the ``hosted_fields_token`` in place of the card (whose CVV2, typed into the
    gateway's iframes, chose the outcome), the payer and the browser data as the examples' page sends them, and the
    holder's name upper case (the token does not carry it)."""
    payer = payer or new_payer()
    candidate = {**_order(amount, currency), **payer.fields(), **BROWSER_DATA, "hosted_fields_token": token,
                 "card_printed_name": payer.full_name.upper(), "redirect_url": DEFAULT_REDIRECT_URL}  # fmt: skip
    return build_fields("sale_v4", candidate, overrides)


def payout_fields(
    outcome: str = "approved",
    amount: Decimal | None = None,
    currency: str = DEFAULT_CURRENCY,
    *,
    operation: str = "payout",
    card: Card | None = None,
    **overrides: Override,
) -> OrderFields:
    """A payout to a card (``payout``, ``payout_check`` or ``payout_v4``); the amount chooses the outcome unless
    given.

    ``outcome``: ``approved``, ``insufficient-funds`` or ``unknown`` (``outcomes.AMOUNT_RULES``).
    """
    month, year = future_expiry()
    card = card or Card(random_card_number(), month, year, cvv2="")
    card_fields = {name: value for name, value in card.fields().items() if name != "cvv2"}
    candidate = {**_order(_chosen_amount(outcome, amount, currency), currency), **card_fields}
    return build_fields(operation, candidate, overrides)


def rebill_fields(
    cardrefid: str,
    outcome: str = "approved",
    amount: Decimal | None = None,
    currency: str = DEFAULT_CURRENCY,
    *,
    operation: str = "make_rebill",
    **overrides: Override,
) -> OrderFields:
    """A rebill of a stored card (``make_rebill``, ``make_rebill_sale``, or ``make_rebill_preauth``: a hold);
    the amount chooses the outcome unless given."""
    candidate = {**_order(_chosen_amount(outcome, amount, currency), currency), "cardrefid": str(cardrefid)}
    return build_fields(operation, candidate, overrides)


def transfer_by_ref_fields(
    destination: str,
    source: str | None = None,
    outcome: str = "approved",
    amount: Decimal | None = None,
    currency: str = DEFAULT_CURRENCY,
    **overrides: Override,
) -> OrderFields:
    """A ``transfer_by_ref`` (v2) from the stored card ``source`` (None: from the merchant) to ``destination``;
    the amount chooses the outcome unless given (an expired stored card declines)."""
    candidate = {
        **_order(_chosen_amount(outcome, amount, currency), currency),
        "ipaddress": new_payer().ipaddress,
        "destination-card-ref-id": str(destination),
        **({"source-card-ref-id": str(source)} if source else {}),
    }
    return build_fields("transfer_by_ref", candidate, overrides)


def transfer_fields(
    outcome: str = "approved",
    amount: Decimal | None = None,
    currency: str = DEFAULT_CURRENCY,
    *,
    card: Card | None = None,
    source_ref: str | None = None,
    destination: str | None = None,
    **overrides: Override,
) -> OrderFields:
    """A v4 ``transfer`` from ``card`` (default: an approving test card), or from the stored card ``source_ref``
    (``card_recurring_payment_id``), to the card number ``destination`` (default: a random Luhn-valid one);
    the amount chooses the outcome unless given."""
    source = {"card_recurring_payment_id": source_ref} if source_ref else (card or card_for("approved")).fields()
    candidate = {
        **_order(_chosen_amount(outcome, amount, currency), currency),
        **source,
        "destination-card-no": destination or random_card_number(),
    }
    return build_fields("transfer", candidate, overrides)


def deposit_fields(
    outcome: str = "approved",
    amount: Decimal | None = None,
    currency: str = DEFAULT_CURRENCY,
    *,
    destination: str | None = None,
    **overrides: Override,
) -> OrderFields:
    """A v4 ``transfer_by_ref_v4``: a deposit to the card number ``destination`` (default: a random one)."""
    candidate = {
        **_order(_chosen_amount(outcome, amount, currency), currency),
        "destination-card-no": destination or random_card_number(),
    }
    return build_fields("transfer_by_ref_v4", candidate, overrides)


def recurring_fields(
    cardrefid: str,
    outcome: str = "approved",
    amount: Decimal | None = None,
    currency: str = DEFAULT_CURRENCY,
    *,
    period: str = "month",
    interval: int = 1,
    **overrides: Override,
) -> OrderFields:
    """A ``create_recurring_payment`` on a stored card; every charge's amount chooses its outcome."""
    candidate = {
        **_order(_chosen_amount(outcome, amount, currency), currency),
        "cardrefid": str(cardrefid),
        "period": period,
        "interval": str(interval),
    }
    return build_fields("create_recurring_payment", candidate, overrides)
