"""SimulatorControl: the client of the simulator's control API (``/_sim/``), one method per endpoint.

    control = SimulatorControl("http://127.0.0.1:8080")   # or SimulatorServer.control()
    control = SimulatorControl("http://sim.lan:8080", token=os.environ["GATEKIT_CONTROL_TOKEN"])
    control.add_fault("sale", "error", count=2)
    control.advance_clock(86400)                          # settlement, recurring charges, retries
    deliveries = control.wait_for_callbacks(orderid, attempts=3)

Only a simulator has this API; a sandbox answers 404.  Every refusal of the simulator raises
``SimulatorControlError`` with the field it names.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import requests

from toolkit.diagram import Diagram, simulator_diagram
from toolkit.masking import Secret

JSON = dict[str, Any]
JOURNAL_LIMIT = 100_000  # the most /_sim/journal gives


class SimulatorControlError(RuntimeError):
    """The control API refused a request (or did not answer: ``http_status`` None); ``field`` names the bad input,
    ``problems`` every one the simulator found (``{"field", "error", "valid"}``), ``body`` is its whole answer."""

    def __init__(
        self,
        message: str,
        *,
        http_status: int | None = None,
        field: str | None = None,
        problems: list[JSON] | None = None,
        body: JSON | None = None,
    ) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.field = field
        self.problems = problems or []
        self.body = body


class SimulatorControl:
    """Reset, inspect and steer a running simulator (clock, statuses, faults, callbacks)."""

    def __init__(
        self,
        root_url: str,
        *,
        session: requests.Session | None = None,
        timeout: float = 10,
        token: str | Secret | None = None,
    ) -> None:
        """``token``: the simulator's ``--control-token``, sent as ``Authorization: Bearer`` on every call."""
        self.root_url = root_url.rstrip("/")
        self.session = session or requests.Session()
        self.timeout = timeout
        self._token = token if isinstance(token, Secret) else Secret(token) if token else None

    def __repr__(self) -> str:
        return f"SimulatorControl({self.root_url!r})"

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> SimulatorControl:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- transport ----------------------------------------------------------------------------

    def _request(
        self, method: str, path: str, *, json: JSON | None = None, params: JSON | None = None, timeout: float = 0
    ) -> JSON:
        url, timeout = f"{self.root_url}/_sim/{path}", timeout or self.timeout
        headers = {"Authorization": f"Bearer {self._token.reveal()}"} if self._token else None
        try:
            answer = self.session.request(method, url, json=json, params=params, timeout=timeout, headers=headers)
        except requests.RequestException as exc:
            why = f"no answer within {timeout:g}s" if isinstance(exc, requests.Timeout) else "no answer"
            raise SimulatorControlError(f"{method} {url}: {why} ({exc.__class__.__name__})") from exc
        try:
            body = answer.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise SimulatorControlError(
                f"{method} {url}: HTTP {answer.status_code} without a JSON object (is this a gatekit simulator?)",
                http_status=answer.status_code,
            )
        if answer.status_code >= 400:
            message = body.get("error") or f"HTTP {answer.status_code}"
            problems = body.get("problems") if isinstance(body.get("problems"), list) else None
            raise SimulatorControlError(
                f"{method} {url}: {message}",
                http_status=answer.status_code,
                field=body.get("field"),
                problems=problems,
                body=body,
            )
        return body

    # --- state --------------------------------------------------------------------------------

    def reset(self) -> JSON:
        """Forget every transaction, journal line, callback, fault and nonce; balances and clock as at start."""
        return self._request("POST", "reset")

    def health(self) -> JSON:
        return self._request("GET", "health")

    def routes(self) -> list[JSON]:
        """The routes of the control API with their arguments and what each takes (``GET /_sim/``)."""
        routes: list[JSON] = self._request("GET", "")["routes"]
        return routes

    def merchants(self) -> list[JSON]:
        """Logins, endpoint ids and payout balances (never control keys)."""
        merchants: list[JSON] = self._request("GET", "merchants")["merchants"]
        return merchants

    def journal(self, login: str | None = None, limit: int | None = None) -> list[JSON]:
        """Masked requests, oldest first, each with its conformance ``warnings``."""
        params = {name: value for name, value in (("login", login), ("limit", limit)) if value is not None}
        entries: list[JSON] = self._request("GET", "journal", params=params)["entries"]
        return entries

    def transaction(self, orderid: str | int) -> JSON:
        """The order's latest transaction (what ``status`` reports)."""
        return self._request("GET", f"transactions/{orderid}")

    def order(self, orderid: str | int) -> JSON:
        """The order with every one of its transactions (``transactions``, oldest first)."""
        return self._request("GET", f"orders/{orderid}")

    def chargeback(self, order: Any, amount: Decimal | str | None = None) -> JSON:
        """The issuer takes back ``amount`` (default: everything still charged) of ``order`` (an orderid or
        anything with ``.orderid``): an approved ``chargeback`` transaction, called back to the order's notify_url.
        """
        orderid = getattr(order, "orderid", order)
        body = {} if amount is None else {"amount": str(amount)}
        return self._request("POST", f"orders/{orderid}/chargeback", json=body)

    def force_status(self, orderid: str | int, status: str, error_code: str = "", error_message: str = "") -> JSON:
        """Set a status (approved, declined, filtered, error, unknown); a final one sends the callback."""
        body = {"status": status, "error_code": error_code, "error_message": error_message}
        return self._request("POST", f"transactions/{orderid}/status", json=body)

    def settle(self, orderid: str | int | None = None) -> int:
        """Settle one approved transaction now, or every one awaiting settlement; how many were settled."""
        body = {} if orderid is None else {"orderid": str(orderid)}
        settled: int = self._request("POST", "settle", json=body)["settled"]
        return settled

    # --- the clock ----------------------------------------------------------------------------

    def clock(self) -> JSON:
        """``now`` (epoch seconds), ``iso`` and ``offset`` of the simulator's clock."""
        return self._request("GET", "clock")

    def advance_clock(self, seconds: float | int | Decimal) -> JSON:
        """Move the simulator's clock forward; what falls due is done before this returns."""
        return self._request("POST", "clock/advance", json={"seconds": float(seconds)})

    # --- callbacks ----------------------------------------------------------------------------

    def callbacks(self, orderid: str | int | None = None) -> list[JSON]:
        """Deliveries (oldest first) with ``state``, ``params`` and every attempt (at, http_status, error, elapsed)."""
        params = {} if orderid is None else {"orderid": str(orderid)}
        deliveries: list[JSON] = self._request("GET", "callbacks", params=params)["callbacks"]
        return deliveries

    def resend_callbacks(self, order: Any) -> list[JSON]:
        """Send the latest callback of ``order`` (an orderid or anything with ``.orderid``) to each of its addresses
        again, as it was signed; the new deliveries.  Refused (409) when the order has sent none."""
        orderid = getattr(order, "orderid", order)
        resent: list[JSON] = self._request("POST", f"callbacks/{orderid}/resend")["resent"]
        return resent

    def wait_for_callbacks(self, orderid: str | int, *, attempts: int = 1, timeout: float = 10.0) -> list[JSON]:
        """The order's deliveries once ``attempts`` attempts are logged; TimeoutError after ``timeout``.

        The simulator holds the request until the delivery worker logs the attempt (no polling).
        """
        params = {"orderid": str(orderid), "attempts": attempts, "timeout": timeout}
        body = self._request("GET", "callbacks", params=params, timeout=timeout + self.timeout)
        deliveries: list[JSON] = body["callbacks"]
        if body.get("timed_out"):
            logged = sum(len(delivery["attempts"]) for delivery in deliveries)
            raise TimeoutError(
                f"orderid {orderid}: {logged} callback attempt(s) logged within {timeout:g}s, waited for {attempts}"
            )
        return deliveries

    # --- pictures ----------------------------------------------------------------------------

    def diagram(self, order: Any) -> Diagram:
        """The sequence diagram of ``order`` (an orderid or anything with ``.orderid``) from the simulator's own
        records: its journal lines, its callback deliveries (every attempt) and the payer's 3-D Secure steps."""
        orderid = str(getattr(order, "orderid", order))
        view = self.order(orderid)
        journal = self.journal(limit=JOURNAL_LIMIT)
        return simulator_diagram(journal, self.callbacks(orderid), view, orderid=orderid)

    # --- faults -------------------------------------------------------------------------------

    def add_fault(self, target: str, kind: str, count: int = 1, seconds: float = 0.0) -> JSON:
        """Plan a fault: target an operation name, ``*`` or ``callback``; kind error|delay|drop or fail|duplicate."""
        body = {"target": target, "kind": kind, "count": count, "seconds": seconds}
        return self._request("POST", "faults", json=body)

    def faults(self) -> list[JSON]:
        plans: list[JSON] = self._request("GET", "faults")["faults"]
        return plans

    def clear_faults(self) -> int:
        cleared: int = self._request("DELETE", "faults")["cleared"]
        return cleared
