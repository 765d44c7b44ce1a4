"""The rows of Hosted Fields (``hf_tickets``, ``hf_tokens``): what ``rules.hosted_fields`` asks of the store.

A ticket or a token is spent once: ``spend_ticket`` and ``spend_token`` mark it in one statement that only an unspent,
unexpired row passes, so that two requests racing for one of them cannot both have it.  A token keeps its card as a
card reference does (BIN, last four, type, expiry: ``card_rows``), never the number or the CVV.
"""

from __future__ import annotations

from typing import Any

from toolkit.simulator.storage.base import Row, Store

KEPT_AFTER_EXPIRY = 86400.0  # seconds an expired ticket or token is kept (to say "expired" rather than "unknown")


def add_ticket(store: Store, values: dict[str, Any]) -> None:
    """A new ticket (ticket, login, endpoint_id, created_at, expires_at); tickets and tokens long expired go."""
    now = values["created_at"]
    store.execute("DELETE FROM hf_tickets WHERE expires_at<?", (now - KEPT_AFTER_EXPIRY,))
    store.execute("DELETE FROM hf_tokens WHERE expires_at<?", (now - KEPT_AFTER_EXPIRY,))
    store.insert("hf_tickets", values)


def ticket(store: Store, ticket: str) -> Row | None:
    return store.one("SELECT * FROM hf_tickets WHERE ticket=?", (ticket,))


def spend_ticket(store: Store, ticket: str, now: float, by: str) -> bool:
    """Mark an unspent ticket spent (``by``: what spent it); False when it was spent, has expired or is unknown."""
    return bool(
        store.execute(
            "UPDATE hf_tickets SET spent_at=?, spent_by=? WHERE ticket=? AND spent_at IS NULL AND expires_at>?",
            (now, by, ticket, now),
        )
    )


def add_token(store: Store, values: dict[str, Any]) -> None:
    """A new token (token, login, endpoint_id, ticket, created_at, expires_at, the card's bin, last4, card_type,
    exp_month, exp_year, the outcome chosen and whether the card is a 3-D Secure 1.0.2 test card)."""
    store.insert("hf_tokens", values)


def token(store: Store, token: str, login: str) -> Row | None:
    """The merchant's token (another merchant's is none)."""
    return store.one("SELECT * FROM hf_tokens WHERE token=? AND login=?", (token, login))


def spend_token(store: Store, token: str, login: str, now: float) -> bool:
    """Mark the merchant's unspent, unexpired token spent; False otherwise."""
    return bool(
        store.execute(
            "UPDATE hf_tokens SET spent_at=? WHERE token=? AND login=? AND spent_at IS NULL AND expires_at>?",
            (now, token, login, now),
        )
    )


def token_used_by(store: Store, token: str, orderid: int) -> None:
    """The order the spent token paid for."""
    store.execute("UPDATE hf_tokens SET orderid=? WHERE token=?", (orderid, token))
