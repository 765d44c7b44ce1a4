"""The Node port's requests, reproduced from PredokMiF/node-payneteasy (src/pne/*.js).

src/pne/req.js: the body keeps numbers and non-empty strings only (``_.transform``), the control is
``SHA1(controlFields.join(''))`` where a one-element array names a value of the endpoint config or of
the data and anything else is a literal, ``data.control`` is set last, the body is
``querystring.stringify``-ed; the answer is read as described in ``transport.py``.  Each request
module then dispatches on ``type``: ``validation-error``/``error`` -> an error result, the expected
type -> success, anything else -> reject.
Amounts are JavaScript numbers: ``data.amount + data.comission`` is sent as JS prints it (10 -> "10")
and signed as ``(data.amount*100).toFixed(0)``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tests.interop.transport import GatewayRefusal, ResponseRejected, Transport

Value = str | float | int | None
ControlPart = str | list[str]  # ["name"]: from the endpoint config, else the data; a str: literal


def js_number(value: float | int) -> str:
    """How JavaScript prints a number: 10 -> "10", 10.5 -> "10.5"."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def to_fixed_0(value: float) -> str:
    return format(value, ".0f")


@dataclass(frozen=True)
class NodeEndpoint:
    """CONFIG.PAYNETEASY.ENDPOINTS[endpointid] of cfg/cfg/dev.js: login, control key, endpoint id."""

    endpointid: str
    login: str
    control: str

    def get(self, name: str) -> str | None:
        return {"endpointid": self.endpointid, "login": self.login, "control": self.control}.get(name)


class NodeLibrary:
    def __init__(self, transport: Transport, base_url: str, endpoint: NodeEndpoint) -> None:
        self.transport = transport
        self.base_url = base_url  # https://<hostname> + the request's path, which starts with /paynet
        self.endpoint = endpoint

    def req(self, path: str, data: Mapping[str, Value], control_fields: Sequence[ControlPart]) -> dict[str, str]:
        """pneReq: keep numbers and non-empty strings, sign, send; the parsed answer."""
        body: dict[str, str] = {}
        for key, value in data.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                body[key] = js_number(value)
            elif isinstance(value, str) and value:
                body[key] = value
        parts = [
            (self.endpoint.get(part[0]) or body.get(part[0], "")) if isinstance(part, list) else part
            for part in control_fields
        ]
        body["control"] = hashlib.sha1("".join(str(p) for p in parts).encode("utf-8")).hexdigest()
        url = self.base_url.removesuffix("/paynet") + path.replace("<endpointid>", self.endpoint.endpointid)
        return self.transport.post(url, list(body.items()))

    @staticmethod
    def expect(answer: dict[str, str], kind: str) -> dict[str, str]:
        if answer.get("type") in ("validation-error", "error"):
            raise GatewayRefusal(answer)
        if answer.get("type") != kind:
            raise ResponseRejected(f"Error! {answer}")
        return answer

    # --- src/pne/preauthReq.js: a preauth through the hosted form ------------------------------
    def preauth_form(self, order: Mapping[str, Value]) -> dict[str, str]:
        data = {**order, "vat-amount": 0}  # 'vat-amount': +data.NDS
        amount = float(order["amount"] or 0)
        control = [["endpointid"], ["client_orderid"], to_fixed_0(amount * 100), ["email"], ["control"]]
        return self.expect(self.req("/paynet/api/v2/preauth-form/<endpointid>", data, control), "async-form-response")

    # --- src/pne/captureReq.js and returnReq.js: amount and currency sent and signed ----------
    def capture(self, client_orderid: str, orderid: str, amount: float, currency: str) -> dict[str, str]:
        data = {
            "login": self.endpoint.login,
            "client_orderid": client_orderid,
            "orderid": orderid,
            "amount": amount,
            "currency": currency,
        }
        control = [["login"], ["client_orderid"], ["orderid"], to_fixed_0(amount * 100), currency, ["control"]]
        return self.expect(self.req("/paynet/api/v2/capture/<endpointid>", data, control), "async-response")

    def return_(self, client_orderid: str, orderid: str, amount: float, currency: str, comment: str) -> dict[str, str]:
        data = {
            "login": self.endpoint.login,
            "client_orderid": client_orderid,
            "orderid": orderid,
            "amount": amount,
            "currency": currency,
            "comment": comment,
        }
        control = [["login"], ["client_orderid"], ["orderid"], to_fixed_0(amount * 100), currency, ["control"]]
        return self.expect(self.req("/paynet/api/v2/return/<endpointid>", data, control), "async-response")

    # --- src/pne/preauthStatusReq.js (the other *StatusReq.js alike) --------------------------
    def status(self, client_orderid: str, orderid: str) -> dict[str, str]:
        data = {"login": self.endpoint.login, "client_orderid": client_orderid, "orderid": orderid}
        control = [["login"], ["client_orderid"], ["orderid"], ["control"]]
        answer = self.req("/paynet/api/v2/status/<endpointid>", data, control)
        if answer.get("type") != "status-response":
            raise ResponseRejected(f"Error! {answer}")
        return answer

    # --- src/pne/regCardReq.js ----------------------------------------------------------------
    def register_card(self, client_orderid: str, orderid: str) -> dict[str, str]:
        data = {"login": self.endpoint.login, "client_orderid": client_orderid, "orderid": orderid}
        control = [["login"], ["client_orderid"], ["orderid"], ["control"]]
        answer = self.req("/paynet/api/v2/create-card-ref/<endpointid>", data, control)
        return self.expect(answer, "create-card-ref-response")

    # --- src/pne/makeRebillPreauthReq.js ------------------------------------------------------
    def make_rebill(
        self, rebill: Mapping[str, Value], path: str = "/paynet/api/v2/make-rebill-preauth/<endpointid>"
    ) -> dict[str, str]:
        """The port posts to make-rebill-preauth (behaviour section 11): a hold, which it then captures."""
        data = {"login": self.endpoint.login, **rebill}
        amount = float(rebill["amount"] or 0)
        control = [["login"], ["client_orderid"], ["cardrefid"], to_fixed_0(amount * 100), ["currency"], ["control"]]
        return self.expect(self.req(path, data, control), "async-response")
