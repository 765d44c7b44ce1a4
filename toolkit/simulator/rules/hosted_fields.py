"""Hosted Fields in the simulator (hosted-fields.md): tickets, the SDK's tokenize call, tokens, the v4 sale that
charges a token, and the payer's way back after 3-D Secure.

- ``create_ephemeral_ticket`` (section 3.2): a fresh ticket per call, single use, valid ``TICKET_LIFETIME`` on the
  simulator's clock (``POST /_sim/clock/advance`` ages it).
- ``tokenize`` (sections 6 and 7): what the SDK posts from the payer's page (``web.hosted_fields_api``): the ticket and
  the card as typed.  A refusal has a code of the 4xxx class (4001 malformed, 4002 incomplete card data, 4003 ticket
  unknown, spent or expired, 4004 card number rejected) and spends the ticket [ex]; a success spends it too and
  mints a token.  The token keeps the card as a card reference does (BIN, last four, type, expiry: never the number,
  never the CVV) and the outcome its CVV chose in the sandbox's table (behaviour section 6), so that the same test
  data drives Hosted Fields and the other flows.
- ``sale_v4`` (section 3.3): a ``sale`` of the card behind the token, decided as any card sale (``payments``,
  ``threeds``): approved, declined, or a 3-D Secure step the gateway runs itself (the token's card was typed into
  the gateway's own iframes, as on a hosted page: no method step, straight to the challenge).  Callbacks as for any
  sale.  ``status_v4`` is the status of any order (``payments.status``); its answer is drawn by the web wing.
- ``return_fields`` (section 8): what the payer's browser posts to the sale's ``redirect_url`` after the challenge.

CHOICES: what hosted-fields.md section 13 leaves open, chosen here (change them here):

- Ticket: ``tkt_`` and 32 random URL-safe characters; bound to the merchant whose endpoint asked for it (any of its
  endpoints may charge the token), not to an endpoint or an origin; ``create-ephemeral-ticket`` reads no field
  (any field sent is ignored, with a warning in the journal); it is refused only as any signed call is (an unknown
  endpoint, a bad signature).
- Tokenize: the path and body of section 6 (``POST {simulator root}/api/v4/tokenize/hosted-fields``, JSON
  ``ephemeralTicket``, ``cardNumber``, ``expiryDate``, ``cvv``); the codes of the emulator, checked in its order
  (4001, 4004, 4002, 4003), with more reasons: a card number of 12 to 19 digits that passes the Luhn check (spaces
  and dashes dropped) or 4004; an expiry ``MM/YY``, ``MM/YYYY`` or ``MMYY`` with a month 1 to 12 and a CVV of 3
  or 4 digits, or 4002 naming the field; 4003 says whether the ticket is unknown, spent or expired.  Every 4xxx
  refusal of a usable ticket spends it (section 7, [ex]).  An expired card is tokenized; the sale declines it
  ("Expired card"), as the sandbox declines a direct sale.  The body is read as JSON whatever its ``Content-Type``;
  CORS allows any origin (the request's ``Origin``, ``*`` without one).
- Token: ``hf_`` and 32 random URL-safe characters; valid ``TOKEN_LIFETIME``; single use, spent by the first sale
  that makes an order with it, whatever that order's outcome (a declined sale needs a new ticket and a new token);
  a sale refused before any order is made (a missing field, card fields beside the token) leaves it unspent.  The
  same request again (same client_orderid, amount and currency, the token it spent) is answered with the order it
  made, as any repeated sale.  Another merchant's token is unknown.
- Refusals: the codes of ``rules.errors`` (1 a field rule, 3 a state: a token unknown, spent or expired, 5 an
  unknown endpoint), written as JSON numbers; a refused signature is a 401 ``text/plain`` reason (the emulator's);
  an endpoint that is not the merchant's is a 400 JSON refusal with ``error-message`` (not the emulator's 404
  ``text/plain``: a page shows the message).  A body over ``max_body_bytes`` is refused before the operation is
  known: a 413 in the family's format (its ``error-code`` a string).
- OAuth: as every v4 operation of the simulator (``rules.checks``): the URL the request reached, the timestamp
  window (``timestamp_window``, 300 s either side) and a nonce used once; every failure is a 401.
- Sale: every field the examples send is required but the holder's names and state (``operations.sale_v4``); card
  fields beside a token are refused naming them; ``server_callback_url`` and ``notify_url`` are called as for any
  sale; the answer carries ``type`` and ``serial-number`` beside the three fields of section 3.3.
- 3-D Secure: no method step and no frictionless step of the payer's (the gateway's iframes are its own page):
  CVV 321 challenges (password ``hint`` passes), 331 and 332 are decided frictionless; the 1.0.2 test cards go to
  their ACS page.  The status gives ``redirect-to`` (the ACS page, absolute) only while the challenge waits for the
  payer: once answered it is gone, so that the return page's poll never sends the payer there again.  The return
  POST carries exactly ``status``, ``orderid``, ``merchant_order`` and ``control`` (section 8).  A challenge not
  answered within ``challenge_timeout`` declines.
- Status: the fields of section 3.4 and ``type``, ``serial-number``; a ``client_orderid`` that is not the order's
  is refused, as on every follow-up (the emulator does not check it); ``unknown`` (CVV 217) is reported as it is;
  ``error-code`` a number (ISO 8583 ``05`` is ``5``); ``approval-code`` and ``processor-rrn`` derived from the order
  id, ``bank_message`` "Approved".
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from toolkit.fields import ascii_digits, card_brand, card_expiry, luhn_ok
from toolkit.models import Status
from toolkit.money import to_minor_units
from toolkit.operations import ResponseKind
from toolkit.signing import callback_control
from toolkit.simulator.rules import payments, threeds
from toolkit.simulator.rules.engine import Call, Engine, RepeatedOrder, Result
from toolkit.simulator.rules.errors import SimError
from toolkit.simulator.storage import Row, dumps, hosted_rows
from toolkit.simulator.storage.serving import Later
from toolkit.testdata.outcomes import CardOutcome, is_three_ds_v1_card

TICKET_LIFETIME = 15 * 60.0  # seconds (section 3.2, [ex]: "valid 15 minutes")
TOKEN_LIFETIME = 15 * 60.0  # seconds (section 13: not shown; [sim])
TICKET_PREFIX, TOKEN_PREFIX = "tkt_", "hf_"
TOKEN_FIELDS = ("ephemeralTicket", "cardNumber", "expiryDate", "cvv")  # the tokenize body (section 6)
CARD_REJECTED = "That card number was not accepted."  # payerMessage of 4004 (section 6, [emu])
CHECK_EXPIRY_AND_CVV = "Check the expiry date and CVV."  # payerMessage of 4002 (section 4, [emu])
UNKNOWN_TOKEN = "Unknown or already spent hosted_fields_token."  # section 3.5, [emu]
_EXPIRY = re.compile(r"(\d{1,2})\s*[/\-]\s*(\d{2}|\d{4})|(\d{2})(\d{2}|\d{4})")


@dataclass(eq=False)
class TokenizeRefused(Exception):
    """A tokenize call refused: its code (4001-4004), a message for the log, what the payer may read, the field."""

    code: int
    message: str
    payer_message: str = ""
    field: str = ""
    login: str = ""  # the ticket's merchant, when the ticket is known

    def __post_init__(self) -> None:
        super().__init__(f"{self.code} {self.message}")

    def body(self) -> dict[str, object]:
        """The answer's JSON object (section 6): ``code``, ``message``, and ``payerMessage`` and ``field`` if any."""
        body: dict[str, object] = {"code": self.code, "message": self.message}
        if self.payer_message:
            body["payerMessage"] = self.payer_message
        if self.field:
            body["field"] = self.field
        return body


@dataclass(frozen=True)
class Tokenized:
    """A token minted for the merchant ``login``."""

    token: str
    login: str


# --- tickets (section 3.2) ---------------------------------------------------------------------------------------


def create_ephemeral_ticket(engine: Engine, call: Call) -> Result:
    """A fresh single-use ticket for the merchant, valid ``TICKET_LIFETIME``."""
    ticket = TICKET_PREFIX + secrets.token_urlsafe(24)
    now = engine.clock.now()
    with engine.store.transaction():
        hosted_rows.add_ticket(
            engine.store,
            {
                "ticket": ticket,
                "login": call.merchant.login,
                "endpoint_id": call.endpoint_id,
                "created_at": now,
                "expires_at": now + TICKET_LIFETIME,
            },
        )
    return Result(ResponseKind.TICKET, None, {"ephemeralTicket": ticket})


# --- the SDK's tokenize call (sections 6 and 7) ------------------------------------------------------------------


def tokenize(engine: Engine, body: object) -> Tokenized:
    """The card typed into the gateway's iframes, exchanged for a token; ``TokenizeRefused`` otherwise.

    Whatever the outcome, a usable ticket is spent (one tokenization per ticket; a 4xxx refusal spends it, [ex]).
    """
    ticket = body.get("ephemeralTicket") if isinstance(body, dict) else None
    ticket = ticket.strip() if isinstance(ticket, str) else ""
    refusal = _malformed(body) or _card_refusal(body)  # (a dict of strings when not malformed)
    now = engine.clock.now()
    with engine.store.transaction():
        found = hosted_rows.ticket(engine.store, ticket) if ticket else None
        login = found["login"] if found is not None else ""
        spent = hosted_rows.spend_ticket(engine.store, ticket, now, f"refused {refusal.code}" if refusal else "token")
        if refusal is None and not spent:
            refusal = TokenizeRefused(4003, _ticket_problem(found, now))
        if refusal is None:
            assert isinstance(body, dict) and found is not None
            token = TOKEN_PREFIX + secrets.token_urlsafe(24)
            hosted_rows.add_token(engine.store, _token_row(engine, token, found, body, now))
    if refusal is not None:
        refusal.login = login
        raise refusal
    return Tokenized(token, login)


def _malformed(body: object) -> TokenizeRefused | None:
    """4001: not a JSON object, or a field of section 6 that is not a string."""
    if isinstance(body, dict) and all(isinstance(body.get(name, ""), str) for name in TOKEN_FIELDS):
        return None
    return TokenizeRefused(4001, "malformed tokenize request: a JSON object of strings " + ", ".join(TOKEN_FIELDS))


def _card_refusal(body: object) -> TokenizeRefused | None:
    """4004 for a card number that cannot be one, 4002 for an expiry or a CVV missing or malformed."""
    assert isinstance(body, dict)
    number = card_number(body.get("cardNumber", ""))
    if not (ascii_digits(number) and 12 <= len(number) <= 19 and luhn_ok(number)):
        why = "not 12 to 19 digits" if not (ascii_digits(number) and 12 <= len(number) <= 19) else "fails Luhn"
        return TokenizeRefused(4004, f"card number rejected: {why}", CARD_REJECTED, "cardNumber")
    expiry, cvv = body.get("expiryDate", "").strip(), body.get("cvv", "").strip()
    if not expiry or not cvv:
        return TokenizeRefused(4002, "incomplete card data", CHECK_EXPIRY_AND_CVV, "" if not expiry and not cvv else
                               "expiryDate" if not expiry else "cvv")  # fmt: skip
    if expiry_of(expiry) is None:
        return TokenizeRefused(4002, "incomplete card data: expiryDate is not MM/YY", CHECK_EXPIRY_AND_CVV,
                               "expiryDate")  # fmt: skip
    if not (ascii_digits(cvv) and len(cvv) in (3, 4)):
        return TokenizeRefused(4002, "incomplete card data: cvv is not 3 or 4 digits", CHECK_EXPIRY_AND_CVV, "cvv")
    return None


def card_number(typed: str) -> str:
    """The card number as typed, without the spaces and dashes that group its digits."""
    return re.sub(r"[\s\-]", "", typed)


def expiry_of(typed: str) -> tuple[int, int] | None:
    """(month, four-digit year) of an expiry typed ``MM/YY``, ``MM / YYYY``, ``MM-YY`` or ``MMYY``; None otherwise."""
    match = _EXPIRY.fullmatch(typed.strip())
    if match is None:
        return None
    month, year = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
    return card_expiry(month, year)


def _ticket_problem(found: Row | None, now: float) -> str:
    """Why a ticket cannot be used (4003)."""
    if found is None:
        return "the ephemeral ticket is unknown or already spent"
    if found["spent_at"] is not None:
        return "the ephemeral ticket is already spent: one tokenization per ticket, a new page load makes a new one"
    minutes = TICKET_LIFETIME / 60
    return f"the ephemeral ticket expired: a ticket is valid {minutes:g} minutes (on the simulator's clock)"


def _token_row(engine: Engine, token: str, ticket: Row, body: Mapping[str, str], now: float) -> dict[str, Any]:
    """What a token keeps: the card as a card reference does, and the outcome its CVV chose (never the CVV)."""
    number = card_number(body["cardNumber"])
    month, year = expiry_of(body["expiryDate"]) or (0, 0)
    outcome = engine.settings.outcome_for_cvv(body["cvv"])
    return {
        "token": token,
        "login": ticket["login"],
        "endpoint_id": ticket["endpoint_id"],
        "ticket": ticket["ticket"],
        "created_at": now,
        "expires_at": now + TOKEN_LIFETIME,
        "bin": number[:6],
        "last4": number[-4:],
        "card_type": card_brand(number),
        "exp_month": f"{month:02d}",
        "exp_year": str(year),
        "outcome": outcome.name,
        "outcome_status": outcome.status.value,
        "outcome_code": outcome.error_code,
        "outcome_message": outcome.error_message,
        "three_ds": outcome.three_ds,
        "three_ds_v1": int(is_three_ds_v1_card(number)),
    }


# --- the v4 sale with a token (section 3.3) ----------------------------------------------------------------------


def sale_v4(engine: Engine, call: Call) -> Result | Later[Result]:
    """A sale of the token's card: the token is spent by the order it makes (a refused sale leaves it)."""
    token = call.fields["hosted_fields_token"]
    amount = Decimal(call.fields["amount"])

    def write() -> Result:
        with engine.store.transaction():
            row = _spend(engine, call, token)
            outcome = CardOutcome(row["outcome"], "", Status(row["outcome_status"]), row["three_ds"],
                                  row["outcome_code"], row["outcome_message"])  # fmt: skip
            card = {
                "card_bin": row["bin"],
                "card_last4": row["last4"],
                "card_type": row["card_type"],
                "card_exp_month": row["exp_month"],
                "card_exp_year": row["exp_year"],
                "cardholder": call.fields.get("card_printed_name", ""),  # the token carries no holder (section 3.3)
            }
            plan = payments.outcome_plan(engine, outcome, card, amount, managed=True, v1=bool(row["three_ds_v1"]),
                                         lenient=call.lenient, warnings=call.warnings)  # fmt: skip
            extra = dumps({"managed": True, "hosted_fields": True})
            tx = engine.insert_draft(call, engine.draft_scheduled_tx(call, "sale", **plan, extra=extra))
            hosted_rows.token_used_by(engine.store, token, tx["orderid"])
        return Result(ResponseKind.ASYNC, tx)

    return engine.write_soon(lambda: engine.answering(call, write))


def _spend(engine: Engine, call: Call, token: str) -> Row:
    """The merchant's token, spent now; the order it made already for the same request (``RepeatedOrder``); or a
    refusal (code 3) that says whether it is unknown, spent or expired."""
    login, now = call.merchant.login, engine.clock.now()
    row = hosted_rows.token(engine.store, token, login)
    if row is not None and hosted_rows.spend_token(engine.store, token, login, now):
        return row
    if row is not None and row["orderid"] is not None:
        order = engine.order_tx(login, str(row["orderid"]))
        fields = call.fields
        money = (to_minor_units(fields["amount"], fields["currency"]), fields["currency"])
        if order is not None and (order["client_orderid"], order["amount_minor"], order["currency"]) == (
            call.client_orderid,
            *money,
        ):
            raise RepeatedOrder(order)
    if row is None or row["spent_at"] is not None:
        raise SimError(UNKNOWN_TOKEN, code="3")
    minutes = TOKEN_LIFETIME / 60
    raise SimError(f"hosted_fields_token expired: a token is valid {minutes:g} minutes after tokenization", code="3")


# --- the way back (section 8) ------------------------------------------------------------------------------------


def is_hosted(engine: Engine, tx: Row) -> bool:
    """An order a Hosted Fields sale made."""
    return bool(engine.extra(tx).get("hosted_fields"))


def return_fields(engine: Engine, tx: Row) -> dict[str, str]:
    """What the payer's browser posts to ``redirect_url`` after 3-D Secure: exactly ``status``, ``orderid``,
    ``merchant_order`` and ``control = sha1_hex(status + orderid + merchant_order + control key)`` (section 8)."""
    status, orderid, merchant_order = tx["status"], str(tx["orderid"]), tx["client_orderid"]
    key = engine.merchant(tx["login"]).control_key.reveal()
    control = callback_control(status, orderid, merchant_order, key)
    return {"status": status, "orderid": orderid, "merchant_order": merchant_order, "control": control}


def awaits_payer(engine: Engine, tx: Row) -> bool:
    """The payer must still answer the ACS page (the status sends the payer there: ``redirect-to``)."""
    if tx["status"] != Status.PROCESSING.value or tx["tds_state"] not in ("challenge", "pares"):
        return False
    whole = tx if "extra" in tx else engine.tx(tx["id"])  # (a status reads the status columns alone)
    return not threeds.was_answered(engine, whole)


def install(engine: Engine) -> None:
    engine.register("create_ephemeral_ticket", create_ephemeral_ticket)
    engine.register("sale_v4", sale_v4)
    engine.register("status_v4", payments.status)
