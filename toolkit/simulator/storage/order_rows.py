"""The rows of the orders (``transactions``, ``requests``): what the rules and the control API ask of the store.

An order is named by the id of its initial transaction (``orderid``); its later transactions (captures, returns,
voids, chargebacks...) carry the same ``orderid``.  Statements on columns that most rows leave NULL (a page token,
a deadline) compare the column, so the partial indexes of ``schema`` serve them.
"""

from __future__ import annotations

from typing import Any

from toolkit.simulator.storage.base import Insert, Row, Store

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


# --- the engine's look-ups ---------------------------------------------------------------------------------------

# What a status answer reads of the transaction (``render.status_fields`` and ``payer_action``, ``is_due``, the
# client_orderid check): a third of the table's columns is never read there, and each costs its conversion.
STATUS_COLUMNS = (
    "id", "orderid", "login", "client_orderid", "kind", "status", "stage", "amount_minor", "currency",
    "descriptor", "error_code", "error_message", "card_bin", "card_last4", "card_type", "card_exp_month",
    "card_exp_year", "cardholder", "cardrefid", "three_ds", "eci", "tds_comp_ind", "tds_state", "tds_token",
    "form_token", "decide_at", "deadline_at", "redirect_url",
)  # fmt: skip
# The latest transaction of the merchant's order (``Engine.latest_of``): by orderid, or by client_orderid (the
# latest order with it), in one statement; each step uses an index (the key, ``tx_client``, ``tx_order``).
_LATEST = (
    f"SELECT {', '.join(STATUS_COLUMNS)} FROM transactions WHERE id=(SELECT MAX(id) FROM transactions WHERE orderid=("
    "{order}))"
)
LATEST_BY_ORDERID = _LATEST.format(order="SELECT id FROM transactions WHERE id=? AND orderid=id AND login=?")
LATEST_BY_CLIENT_ORDERID = _LATEST.format(
    order="SELECT id FROM transactions WHERE login=? AND client_orderid=? AND orderid=id ORDER BY id DESC LIMIT 1"
)
_BY_REQUEST = (
    "SELECT * FROM transactions WHERE serial=? AND login=? UNION ALL "
    "SELECT t.* FROM requests r JOIN transactions t ON t.id=r.tx WHERE r.serial=? AND t.login=? LIMIT 1"
)
# A transaction with a void that has not failed: it holds no money and never settles.
_NOT_VOIDED = (
    "AND NOT EXISTS (SELECT 1 FROM transactions v "
    f"WHERE v.parent=transactions.id AND v.kind='void' AND v.status NOT IN {FAILED_SQL})"
)


def transaction(store: Store, tx_id: int) -> Row | None:
    """A transaction by its own key (``id``)."""
    return store.one("SELECT * FROM transactions WHERE id=?", (tx_id,))


def merchant_order(store: Store, orderid: int, login: str) -> Row | None:
    """The initial transaction of the merchant's order ``orderid``."""
    return store.one("SELECT * FROM transactions WHERE id=? AND orderid=id AND login=?", (orderid, login))


def order_named(store: Store, login: str, client_orderid: str) -> Row | None:
    """The merchant's latest order with ``client_orderid`` (its initial transaction)."""
    return store.one(
        "SELECT * FROM transactions WHERE login=? AND client_orderid=? AND orderid=id ORDER BY id DESC LIMIT 1",
        (login, client_orderid),
    )


def latest_by_orderid(store: Store, orderid: int, login: str) -> Row | None:
    """The ``STATUS_COLUMNS`` of the latest transaction of the merchant's order ``orderid``."""
    return store.one(LATEST_BY_ORDERID, (orderid, login))


def latest_by_client_orderid(store: Store, login: str, client_orderid: str) -> Row | None:
    """The ``STATUS_COLUMNS`` of the latest transaction of the merchant's latest order with ``client_orderid``."""
    return store.one(LATEST_BY_CLIENT_ORDERID, (login, client_orderid))


def latest_id(store: Store, orderid: int) -> int | None:
    """The id of the order's latest transaction."""
    row = store.one("SELECT MAX(id) AS id FROM transactions WHERE orderid=?", (orderid,))
    return int(row["id"]) if row and row["id"] is not None else None


def of_order(store: Store, orderid: int) -> list[Row]:
    """Every transaction of the order, oldest first."""
    return store.all("SELECT * FROM transactions WHERE orderid=? ORDER BY id", (orderid,))


def after(store: Store, orderid: int, tx_id: int) -> Row | None:
    """The first transaction of the order made after ``tx_id`` (its kind and status)."""
    return store.one(
        "SELECT kind, status FROM transactions WHERE orderid=? AND id>? ORDER BY id LIMIT 1", (orderid, tx_id)
    )


def by_request(store: Store, login: str, serial: str) -> Row | None:
    """The transaction a request (its serial-number) made (its ``serial``) or acted on (``requests``)."""
    return store.one(_BY_REQUEST, (serial, login, serial, login))


def remember_request(store: Store, serial: str, tx_id: int) -> None:
    """``status`` with ``by-request-sn`` finds transaction ``tx_id`` by this request's serial-number."""
    store.execute("INSERT INTO requests (serial, tx) VALUES (?, ?) ON CONFLICT DO NOTHING", (serial, tx_id))


def order_insert(row: dict[str, Any], login: str, client_orderid: str, kinds: tuple[str, ...]) -> Insert:
    """A new order's initial transaction ``row`` to insert unless the merchant's orders of ``kinds`` hold
    ``client_orderid`` already; its id and orderid the next id (``Store.insert_unless``: ``(None, the row as stored)``,
    or ``(the repeated order's id, None)`` with nothing written, for the caller's idempotency rule)."""
    marks = ",".join("?" * len(kinds))
    return Insert(
        "transactions",
        row,
        "SELECT id FROM transactions WHERE login=? AND client_orderid=? AND id=orderid "
        f"AND kind IN ({marks}) ORDER BY id DESC LIMIT 1",
        (login, client_orderid, *kinds),
        ("id", "orderid"),
    )


def due_decisions(store: Store, now: float) -> list[Row]:
    """Processing transactions whose decision time has come."""
    return store.all(
        "SELECT * FROM transactions WHERE status='processing' AND decide_at IS NOT NULL AND decide_at<=?", (now,)
    )


NEXT_DUE = (
    "SELECT MIN(t) AS t FROM ("
    " SELECT MIN(decide_at) AS t FROM transactions WHERE status='processing' AND decide_at IS NOT NULL"
    " UNION ALL SELECT MIN(deadline_at) FROM transactions WHERE status='processing' AND deadline_at IS NOT NULL"
    " UNION ALL SELECT MIN(settle_at) FROM transactions WHERE settled=0 AND settle_at IS NOT NULL) AS due"
)


def next_due(store: Store) -> float | None:
    """When the next decision, deadline or settlement falls due."""
    row = store.one(NEXT_DUE)
    return row["t"] if row else None


def settle_due(store: Store, now: float) -> int:
    """Transactions due to settle by ``now`` settled (a voided one never settles); how many."""
    return store.execute(
        f"UPDATE transactions SET settled=1, settle_at=NULL WHERE settled=0 AND settle_at<=? {_NOT_VOIDED}", (now,)
    )


def settle(store: Store, orderid: int | None = None) -> int:
    """The order's transactions awaiting settlement (every order's, without ``orderid``) settled; how many."""
    if orderid is not None:
        return store.execute(
            f"UPDATE transactions SET settled=1, settle_at=NULL WHERE orderid=? AND settled=0 AND settle_at IS NOT "
            f"NULL {_NOT_VOIDED}",
            (orderid,),
        )
    return store.execute(
        f"UPDATE transactions SET settled=1, settle_at=NULL WHERE settled=0 AND settle_at IS NOT NULL {_NOT_VOIDED}"
    )


def stop_settling(store: Store, tx_id: int) -> None:
    """Transaction ``tx_id`` will not settle (a void of it was approved)."""
    store.execute("UPDATE transactions SET settle_at=NULL WHERE id=?", (tx_id,))


# --- the money of an order's later transactions (``rules.followups``) -------------------------------------------

LIVE, APPROVED = "live", "approved"  # states counted: approved or still processing; approved only
_STATE = {LIVE: f"status NOT IN {FAILED_SQL}", APPROVED: "status='approved'"}


def _unvoided(voids: str) -> str:
    """No void of ``t`` in the state ``voids`` (``LIVE`` or ``APPROVED``)."""
    return f"NOT EXISTS (SELECT 1 FROM transactions v WHERE v.parent=t.id AND v.kind='void' AND v.{_STATE[voids]})"


def later_total(
    store: Store, orderid: int, kinds: tuple[str, ...], *, counted: str = LIVE, unvoided: str | None = None
) -> int:
    """Minor units of the order's later transactions of ``kinds`` in the state ``counted``, without those with a
    void in the state ``unvoided`` (when given)."""
    marks = ",".join("?" * len(kinds))
    row = store.one(
        "SELECT COALESCE(SUM(amount_minor), 0) AS total FROM transactions t "
        f"WHERE t.orderid=? AND t.id<>t.orderid AND t.kind IN ({marks}) AND t.{_STATE[counted]}"
        + (f" AND {_unvoided(unvoided)}" if unvoided else ""),
        (orderid, *kinds),
    )
    return int(row["total"]) if row else 0


def latest_later(
    store: Store,
    orderid: int,
    kinds: tuple[str, ...],
    *,
    status: str | None = None,
    settled: bool | None = None,
    unvoided: str | None = None,
) -> Row | None:
    """The order's latest later transaction of ``kinds`` that did not fail, with ``status`` and ``settled`` when
    given, and without a void in the state ``unvoided`` when given."""
    marks = ",".join("?" * len(kinds))
    where = [f"t.kind IN ({marks})"]
    params: list[object] = [orderid, *kinds]
    if status is not None:
        where.append("t.status=?")
        params.append(status)
    if settled is not None:
        where.append("t.settled=?")
        params.append(1 if settled else 0)
    if unvoided is not None:
        where.append(_unvoided(unvoided))
    return store.one(
        f"SELECT * FROM transactions t WHERE t.orderid=? AND t.id<>t.orderid AND t.{_STATE[LIVE]} AND "
        f"{' AND '.join(where)} ORDER BY t.id DESC LIMIT 1",
        tuple(params),
    )
