"""The request journal per merchant: every request, masked, with its conformance warnings.

No PAN beyond BIN and last four, no CVV, no secrets: fields pass through ``toolkit.masking``
before they are stored.  A merchant certifying its integration reads the warnings here.
"""

from __future__ import annotations

from typing import Any

from toolkit.masking import mask_fields, mask_text
from toolkit.simulator.store import Store, dumps, loads


def record(
    store: Store,
    *,
    at: float,
    login: str,
    operation: str,
    path: str,
    http_status: int,
    body: dict[str, str],
    fields: list[tuple[str, str]],
    warnings: list[str],
) -> None:
    store.insert(
        "journal",
        {
            "at": at,
            "login": login,
            "operation": operation,
            "path": path,
            "http_status": http_status,
            "response_type": body.get("type", ""),
            "serial": body.get("serial-number", ""),
            "orderid": body.get("paynet-order-id", ""),
            "client_orderid": mask_text(dict(fields).get("client_orderid", dict(fields).get("client-order-id", ""))),
            # by name (card fields), then by content: a card number typed into any other field
            "fields": dumps({name: mask_text(value) for name, value in mask_fields(fields).items()}),
            "warnings": dumps(warnings),
            "error": mask_text(body.get("error-message", ""))
            if body.get("type") in ("validation-error", "error")
            else "",
        },
    )


def entries(store: Store, *, login: str | None = None, limit: int = 500) -> list[dict[str, Any]]:
    """Journal lines, newest last; ``login`` narrows to one merchant."""
    sql = "SELECT * FROM journal" + (" WHERE login=?" if login else "") + " ORDER BY id DESC LIMIT ?"
    rows = store.all(sql, (login, limit) if login else (limit,))
    return [{**row, "fields": loads(row["fields"]), "warnings": loads(row["warnings"])} for row in reversed(rows)]
