"""The answers of the Hosted Fields calls (hosted-fields.md section 3), for the gateway road (``gateway``).

The road builds every answer as a mapping of strings (what the journal keeps); for an operation whose answers are
``AnswerStyle.HOSTED_FIELDS`` this module builds the status (``result_body``: the fields of section 3.4, with
``redirect-to`` and never ``html``) and draws the answer (``respond``):

- JSON values with the types the examples read: the names of ``Operation.numbers`` as numbers (``paynet-order-id``
  of the v4 sale, ``error-code``), every other one a string; the ticket's answer is ``{"ephemeralTicket": ...}``
  alone (section 3.2);
- a refused signature (HTTP 401) as ``text/plain`` ``invalid signature: <reason>`` whatever the ``Accept``: a body
  the examples cannot decode is what they take for a failed call, not for a decline (section 3.1);
- without ``Accept: application/vnd.pay+json``, the family's legacy ``key=value`` form (section 3.1).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from toolkit.models import Status
from toolkit.operations import Operation, ResponseKind
from toolkit.simulator.rules import hosted_fields
from toolkit.simulator.rules.engine import Call, Engine, Result
from toolkit.simulator.storage import Row
from toolkit.simulator.web import render
from toolkit.wire import MEDIA_TYPE

PLAIN_TYPE = b"text/plain; charset=utf-8"
BANK_MESSAGE = "Approved"


def result_body(engine: Engine, result: Result, call: Call, base: str) -> dict[str, str]:
    """``render.result_body``, but a status answer carries the fields of section 3.4."""
    if result.kind is not ResponseKind.STATUS or result.tx is None:
        return render.result_body(engine, result, call, base)
    return {"type": result.kind.value, "serial-number": call.serial, **status_fields(engine, result.tx, base)}


def status_fields(engine: Engine, tx: Row, base: str) -> dict[str, str]:
    """Section 3.4: always the status, the order's ids, amount and card; ``redirect-to`` while the payer must
    answer the ACS page (an absolute URL, gone once answered: the return page polls again); approval code, RRN and
    ``bank_message`` once approved; ``error-message`` and ``error-code`` of a decline or an error."""
    orderid = str(tx["orderid"])
    fields = {
        "status": tx["status"],
        "paynet-order-id": orderid,
        "merchant-order-id": tx["client_orderid"],
        "amount": engine.amount_text(tx),
        "currency": tx["currency"] or "",
        "card-type": tx["card_type"],
        "last-four-digits": tx["card_last4"],
        "cardholder-name": tx["cardholder"],
    }
    redirect = render.payer_action(tx, base).get("redirect-to") if tx["status"] == Status.PROCESSING.value else None
    if redirect and (hosted_fields.awaits_payer(engine, tx) or tx["tds_state"] == "form"):
        fields["redirect-to"] = redirect
    if tx["status"] == Status.APPROVED.value:
        fields.update({"approval-code": approval_code(orderid), "processor-rrn": orderid.zfill(12)[-12:],
                       "bank_message": BANK_MESSAGE})  # fmt: skip
    elif tx["error_code"] or tx["error_message"]:
        fields["error-message"] = tx["error_message"]
        if tx["error_code"]:
            fields["error-code"] = tx["error_code"]
    return fields


def approval_code(orderid: str) -> str:
    """A six-digit approval code, the same for an order at every poll."""
    return str(int(hashlib.sha1(orderid.encode()).hexdigest(), 16) % 1_000_000).zfill(6)


def respond(op: Operation, json_mode: bool, http_status: int, body: dict[str, str]) -> render.GatewayResponse:
    """The answer drawn as section 3 writes it (a 401 as ``text/plain``, JSON with its types, or the legacy form)."""
    if http_status == 401:
        reason = f"invalid signature: {body.get('error-message', '')}".encode()
        return render.GatewayResponse(reason, 401, PLAIN_TYPE)
    if http_status == 200 and op.response is ResponseKind.TICKET and "ephemeralTicket" in body:
        body = {"ephemeralTicket": body["ephemeralTicket"]}
    if not json_mode:
        return render.respond(False, http_status, body)
    typed = {name: _number(value) if name in op.numbers else value for name, value in body.items()}
    return render.GatewayResponse(_json(typed), http_status, MEDIA_TYPE.encode("latin-1"))


def _number(value: str) -> Any:
    """A JSON number of digits (``05`` is 5), exactly; any other text as it is."""
    return int(value) if value.isascii() and value.isdigit() else value


def _json(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode("utf-8")
