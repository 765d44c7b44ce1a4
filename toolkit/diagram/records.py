"""Arrows from the toolkit's records: the ``Exchange`` (client, proxy), the receiver's ``Received``, the ``Visit``.

The one way to a diagram from what was recorded: live records, or the same records read back from a recording
(``toolkit.recording.har_read``) draw the same arrows.  Every record is masked at birth; labels are masked once
more here, so an arrow never carries a card number or a CVV2 whatever it was made from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from toolkit.callbacks import Received
from toolkit.diagram.model import Arrow, Lane, Tone, collapse, in_time_order, tone_of_status
from toolkit.display.views import decoded_answer
from toolkit.exchange import Exchange
from toolkit.masking import mask_text
from toolkit.payer.visits import Visit
from toolkit.recording.records import Record

_MESSAGE = 60  # characters of an error message kept on an arrow
PARTY_LANES: dict[str, Lane] = {"gateway": "gateway", "acs": "acs", "merchant": "endpoint"}


def _short(text: str, limit: int = _MESSAGE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def exchange_label(exchange: Exchange) -> str:
    """``sale 10.42 EUR``, ``capture``, ``status``: the operation and the money it moves."""
    return mask_text(exchange.operation + money_of(exchange.operation, dict(exchange.request_fields)))


def money_of(operation: str, sent: dict[str, str]) -> str:
    """`` 10.42 EUR``; a capture or return without an amount takes all that is left."""
    if sent.get("amount"):
        return f" {sent['amount']} {sent.get('currency', '')}".rstrip()
    return " (all that is left)" if operation in ("capture", "return") else ""


def exchange_outcome(exchange: Exchange) -> tuple[str, Tone]:
    """``HTTP 200 · approved``, ``HTTP 400 · validation-error: amount ...``, ``no answer``; and its tone."""
    answer = decoded_answer(exchange) if exchange.status_code is not None else {}
    return answer_outcome(exchange.status_code, answer, exchange.error or "")


def answer_outcome(status_code: int | None, answer: Mapping[str, str], error: str = "") -> tuple[str, Tone]:
    """``exchange_outcome`` from an HTTP status and the decoded answer (a recording's, a record's)."""
    if status_code is None:
        return mask_text(f"no answer: {_short(error)}"), "bad"
    head = f"HTTP {status_code}"
    if answer.get("status"):
        payer = " (the payer must act)" if answer.get("html") or answer.get("redirect-to") else ""
        why = f": {_short(answer['error-message'])}" if answer.get("error-message") else ""
        return mask_text(f"{head} · {answer['status']}{payer}{why}"), tone_of_status(answer["status"])
    if answer.get("error-message") or status_code >= 400:
        kind = answer.get("type", "error")
        return mask_text(f"{head} · {kind}: {_short(answer.get('error-message', ''))}".rstrip(": ")), "bad"
    if answer.get("ephemeralTicket"):  # (Hosted Fields' ticket answer has no type: hosted-fields.md 3.2)
        return f"{head} · an ephemeral ticket", "plain"
    return mask_text(f"{head} · {answer.get('type', 'answer')}"), "plain"


def exchange_arrow(exchange: Exchange) -> Arrow:
    """The merchant's request to the gateway."""
    sent = dict(exchange.request_fields)
    outcome, tone = exchange_outcome(exchange)
    orderid = sent.get("orderid") or decoded_answer(exchange).get("paynet-order-id", "")
    return Arrow(
        "merchant", "gateway", exchange_label(exchange), outcome, tone, exchange.at, exchange.elapsed, 1, orderid
    )


def callback_arrows(arrivals: Sequence[Received]) -> list[Arrow]:
    """The gateway's callbacks to the merchant's endpoint: a repeat after a refusal is a retry, after a 200 a
    duplicate."""
    seen: dict[tuple[str, str, str, str], int] = {}
    arrows = []
    for received in (r for r in arrivals if r.kind == "callback"):
        tries = seen.get(received.dedupe_key, 0)
        seen[received.dedupe_key] = tries + 1
        again = " (duplicate)" if received.duplicate else f" (retry {tries})" if tries else ""
        label = f"callback {received.type or ''} {received.status or '-'}".replace("  ", " ") + again
        control = {True: "control ✓", False: "control ✗", None: "control not checked"}[received.control_ok]
        tone: Tone = "bad" if received.answered != 200 or received.control_ok is False else "ok"
        tone = tone_of_status(received.status) if tone == "ok" else tone
        outcome = f"answered {received.answered} · {control}"
        arrows.append(
            Arrow("gateway", "endpoint", mask_text(label), outcome, tone, received.received_wall, None, 1,
                  received.orderid)
        )  # fmt: skip
    return arrows


def visit_arrow(visit: Visit, redirect: Received | None = None) -> Arrow:
    """A request of the payer's browser; going back to the merchant, with what the endpoint made of it."""
    status = f"HTTP {visit.status_code}" if visit.status_code is not None else "no answer"
    tone: Tone = "bad" if visit.status_code is None or visit.status_code >= 400 else "plain"
    if visit.to == "merchant":
        outcome = f"{status} · {visit.shows or '?'}"
        if redirect is not None:
            outcome += " · control ✓" if redirect.control_ok else " · control ✗" if redirect.control_ok is False else ""
        tone = tone if tone == "bad" else tone_of_status(visit.shows)
    else:
        outcome = f"{status} · {visit.shows}" if visit.shows else status
        tone = "bad" if tone == "bad" or visit.shows.startswith(("an error", "field errors")) else tone
    if visit.action is not None and visit.action.get("action") == "challenge":
        outcome += " · a wrong password" if visit.action.get("answer") == "wrong" else " · the right password"
    lane = PARTY_LANES[visit.to]
    return Arrow("payer", lane, mask_text(visit.step), mask_text(outcome), tone, visit.at, visit.elapsed, 1,
                 visit.orderid)  # fmt: skip


def redirect_arrow(received: Received) -> Arrow:
    """A payer redirect the endpoint saw without a visit of ours (a real browser, another payer)."""
    control = {True: "control ✓", False: "control ✗", None: "control not checked"}[received.control_ok]
    outcome = f"answered {received.answered} · {received.status or '?'} · {control}"
    tone = "bad" if received.control_ok is False else tone_of_status(received.status)
    return Arrow("payer", "endpoint", "back to the merchant (redirect)", outcome, tone, received.received_wall,
                 None, 1, received.orderid)  # fmt: skip


def payer_arrows(visits: Sequence[Visit], arrivals: Sequence[Received]) -> list[Arrow]:
    """The payer's visits; a redirect the endpoint received is joined to the visit that sent it."""
    redirects = [r for r in arrivals if r.kind == "redirect"]
    arrows = []
    for visit in visits:
        match = None
        if visit.to == "merchant":
            match = next((r for r in redirects if r.orderid == visit.orderid), None)
            if match is not None:
                redirects.remove(match)
        arrows.append(visit_arrow(visit, match))
    return arrows + [redirect_arrow(r) for r in redirects]


def arrows_of(*records: Iterable[Record]) -> list[Arrow]:
    """Every record as an arrow, in time order, repeated polls collapsed: ``arrows_of(recorder.records)``, or
    ``arrows_of(exchanges, arrivals, visits)`` (any records in any of them)."""
    every = [record for group in records for record in group]
    exchanges = [record for record in every if isinstance(record, Exchange)]
    received = [record for record in every if isinstance(record, Received)]
    visits = [record for record in every if isinstance(record, Visit)]
    arrows = [exchange_arrow(e) for e in exchanges] + callback_arrows(received) + payer_arrows(visits, received)
    return collapse(in_time_order(arrows))
