"""The rows of the orders (``transactions``, ``requests``): what the rules and the control API ask of the store.

An order is named by the id of its initial transaction (``orderid``); its later transactions (captures, returns,
voids, chargebacks...) carry the same ``orderid``.  Statements on columns that most rows leave NULL (a page token,
a deadline) compare the column, so the partial indexes of ``schema`` serve them.
"""

from __future__ import annotations

from toolkit.simulator.storage.base import Row, Store

# Final statuses of a transaction that did not go through: it holds, moves or uses up no money.
FAILED = ("declined", "error", "filtered")
FAILED_SQL = "(" + ", ".join(f"'{status}'" for status in FAILED) + ")"  # for ``status NOT IN {FAILED_SQL}``


def order(store: Store, orderid: int) -> Row | None:
    """The initial transaction of order ``orderid`` (None for a later transaction's id, or none)."""
    return store.one("SELECT * FROM transactions WHERE id=? AND orderid=id", (orderid,))


def by_form_token(store: Store, token: str) -> Row | None:
    return store.one("SELECT * FROM transactions WHERE form_token=?", (token,))


def by_tds_token(store: Store, token: str) -> Row | None:
    return store.one("SELECT * FROM transactions WHERE tds_token=?", (token,))


def past_deadline(store: Store, states: tuple[str, ...], now: float) -> list[Row]:
    """Processing transactions at one of the payer steps ``states`` (``tds_state``: form, method, challenge,
    pares) whose deadline has come."""
    marks = ",".join("?" * len(states))
    return store.all(
        f"SELECT * FROM transactions WHERE status='processing' AND tds_state IN ({marks}) AND deadline_at<=?",
        (*states, now),
    )


def live_child(store: Store, parent: int, kind: str) -> Row | None:
    """A transaction of ``kind`` made on transaction ``parent`` that did not fail (approved or processing)."""
    return store.one(
        f"SELECT * FROM transactions WHERE parent=? AND kind=? AND status NOT IN {FAILED_SQL}", (parent, kind)
    )


def count(store: Store) -> int:
    """Transactions kept."""
    row = store.one("SELECT COUNT(*) AS n FROM transactions")
    return int(row["n"]) if row else 0
