"""The rows of the merchants' accounts (``merchants``: the payout balance) and of the OAuth nonces they used
(``nonces``): what the rules and the control API ask of the store."""

from __future__ import annotations

from toolkit.simulator.storage.base import Row, Store


def open_account(store: Store, login: str, balance_minor: int, currency: str) -> None:
    """The merchant's account as configured, unless it is kept already (a restart keeps its balance)."""
    store.execute(
        "INSERT INTO merchants (login, payout_balance_minor, currency) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        (login, balance_minor, currency),
    )


def balance(store: Store, login: str) -> int:
    """The merchant's payout balance in minor units (0 for no account)."""
    row = store.one("SELECT payout_balance_minor FROM merchants WHERE login=?", (login,))
    return int(row["payout_balance_minor"]) if row else 0


def change_balance(store: Store, login: str, change: int) -> None:
    store.execute("UPDATE merchants SET payout_balance_minor=payout_balance_minor+? WHERE login=?", (change, login))


def accounts(store: Store) -> list[Row]:
    return store.all("SELECT * FROM merchants")


def use_nonce(store: Store, login: str, nonce: str, now: float, forget_before: float) -> bool:
    """Whether ``nonce`` is new for ``login`` (it is kept from now on); nonces older than ``forget_before`` are
    forgotten first (call inside a transaction)."""
    store.execute("DELETE FROM nonces WHERE ts<?", (forget_before,))
    return bool(
        store.count(
            "INSERT INTO nonces (login, nonce, ts) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", (login, nonce, now)
        )
    )
