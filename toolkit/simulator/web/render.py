"""Responses in the gateway's own format: JSON for ``Accept: application/vnd.pay+json``, the legacy
``key=value`` form otherwise (behaviour section 2), with the response types and field names there.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from html import escape
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from toolkit.operations import ResponseKind
from toolkit.simulator.rules.engine import Call, Engine, Result
from toolkit.simulator.rules.errors import SimError
from toolkit.simulator.storage import Row
from toolkit.simulator.web import urls
from toolkit.wire import LEGACY_TYPE, MEDIA_TYPE, encode_json, encode_legacy

THREE_DS_VERSION = {"v2-challenge": "2.2.0", "v2-frictionless": "2.2.0", "v1": "1.0.2"}


# What a gateway answer was (type, paynet-order-id), left in the ASGI scope for a request log around the app
# (``gatekit simulate``'s line per request), so that it never decodes the body again
ANSWER_SCOPE_KEY = "gatekit.answer"
# The HTTP status the gateway's front door sent (``front.Front``; ``limits`` for a 413), left in the scope
# for a request log directly around it: it need not watch every message sent to know the status
SENT_SCOPE_KEY = "gatekit.sent"


def new_serial() -> str:
    """A request's ``serial-number``: a random (version 4) UUID, as ``str(uuid.uuid4())`` writes it, made
    without building a ``UUID`` object (the answer of every request carries one)."""
    raw = bytearray(_random_bytes(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class _RandomPool:
    """``os.urandom`` read 4 KiB at a time and handed out in slices: a call to the kernel for every 256 serials
    instead of one per request (the same random bytes; each handed out once, under a lock: threads answer too)."""

    SIZE = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool = b""
        self._at = 0
        if hasattr(os, "register_at_fork"):  # a forked child reads its own bytes, never its parent's
            os.register_at_fork(after_in_child=self._forget)

    def __call__(self, count: int) -> bytes:
        with self._lock:
            if self._at + count > len(self._pool):
                self._pool, self._at = os.urandom(max(self.SIZE, count)), 0
            start, self._at = self._at, self._at + count
            return self._pool[start : self._at]

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._pool, self._at = b"", 0


_random_bytes = _RandomPool()


class GatewayResponse(Response):
    """An answer of the gateway API: the ``Response`` Starlette would send (content-length, then content-type),
    made without its general machinery (rendering, a headers object, background tasks)."""

    def __init__(self, body: bytes, status_code: int, content_type: bytes) -> None:  # (no super().__init__)
        self.body, self.status_code, self.background = body, status_code, None
        self.media_type = content_type.decode("latin-1")
        self.raw_headers = [(b"content-length", str(len(body)).encode("latin-1")), (b"content-type", content_type)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.body})


_JSON_TYPE, _LEGACY_TYPE = MEDIA_TYPE.encode("latin-1"), LEGACY_TYPE.encode("latin-1")


def respond(json_mode: bool, http_status: int, body: dict[str, str]) -> GatewayResponse:
    """JSON with the HTTP status; legacy mode answers 200 with the same ``type`` (behaviour 2)."""
    if json_mode:
        return GatewayResponse(encode_json(body).encode("utf-8"), http_status, _JSON_TYPE)
    return GatewayResponse(encode_legacy(body).encode("utf-8"), 200, _LEGACY_TYPE)


def error_body(serial: str, error: SimError) -> dict[str, str]:
    return {"type": error.kind, "serial-number": serial, "error-message": error.message, "error-code": error.code}


def result_body(engine: Engine, result: Result, call: Call, base: str) -> dict[str, str]:
    body = {"type": result.kind.value, "serial-number": call.serial}
    tx = result.tx
    if tx is not None and result.kind is not ResponseKind.CARD_INFO:
        body["paynet-order-id"] = str(tx["orderid"])
        body["merchant-order-id"] = tx["client_orderid"]
    if call.group_id:
        body["end-point-id"] = call.endpoint_id
    if result.kind is ResponseKind.FORM and tx is not None:
        body["redirect-url"] = urls.form_url(base, tx["form_token"])
    if result.kind is ResponseKind.STATUS and tx is not None:
        body.update(status_fields(engine, tx, base))
    body.update(result.fields)
    for name in engine.settings.omit_fields:  # (a gateway that sends fewer fields: a stand-in for a sandbox)
        body.pop(name, None)
    return body


def status_fields(engine: Engine, tx: Row, base: str) -> dict[str, str]:
    """The fields of behaviour section 3: status, amounts, type, stage, masked card, payer action."""
    fields = {
        "status": tx["status"],
        "amount": engine.amount_text(tx),
        "currency": tx["currency"] or "",
        "transaction-type": tx["kind"],
        "order-stage": tx["stage"],
        "descriptor": tx["descriptor"],
        "error-message": tx["error_message"],
        "error-code": tx["error_code"],
        "bin": tx["card_bin"],
        "last-four-digits": tx["card_last4"],
        "card-type": tx["card_type"],
        "card-exp-month": tx["card_exp_month"],
        "card-exp-year": tx["card_exp_year"],
        "cardholder-name": tx["cardholder"],
    }
    if tx["cardrefid"]:
        fields["card-ref-id"] = tx["cardrefid"]
    if tx["three_ds"] != "none":
        fields["three-ds-version"] = THREE_DS_VERSION.get(tx["three_ds"], "")
        fields.update({"eci": tx["eci"], "three-ds-comp-ind": tx["tds_comp_ind"]})
    if tx["status"] == "processing":
        fields.update(payer_action(tx, base, engine.settings.page_style))
    return {name: value for name, value in fields.items() if value != ""}


def payer_action(tx: Row, base: str, style: str = "standard") -> dict[str, str]:
    """``html`` and/or ``redirect-to`` when the payer must act (behaviour section 3).

    The method step's html loads the method URL in a hidden frame, then goes on by itself to the gateway (its
    3-D Secure return address), within the method window: the gateway-run road of behaviour 12 (a merchant that
    runs the step itself loads ``three-ds-method-url`` in its own frame and uploads the result).  The 1.0.2 html
    posts the PaReq with the gateway's return address as ``TermUrl``.  The alternate page style writes the html
    as other gateways do: the method step as a form that posts ``threeDSMethodData`` into a hidden frame, the
    challenge as a form with ``creq`` and ``threeDSSessionData`` submitted by a script."""
    token, state = tx["tds_token"], tx["tds_state"]
    alternate = style != "standard"
    if state == "method":
        url, onward = urls.method_url(base, token), urls.return_url(base, token)
        html = _method_post(url, onward, str(tx["orderid"])) if alternate else _method_frame(url, onward)
        return {"html": html, "three-ds-method-url": url}
    if state == "challenge":
        url = urls.challenge_url(base, token)
        if alternate:
            session = base64.b64encode(str(tx["orderid"]).encode()).decode()
            return {"redirect-to": url, "html": _script_post(url, {"creq": token, "threeDSSessionData": session})}
        return {"redirect-to": url, "html": _auto_post(url, {"creq": token})}
    if state == "pares":
        url = urls.acs_v1_url(base, token)
        fields = {"PaReq": token, "MD": str(tx["orderid"]), "TermUrl": urls.return_url(base, token)}
        return {"redirect-to": url, "html": _auto_post(url, fields)}
    if state == "form" and tx["form_token"]:
        return {"redirect-to": urls.form_url(base, tx["form_token"])}
    return {}


# The method page goes on to the gateway once the hidden frame has loaded, and at the latest after this many
# milliseconds (within the 10 s method window of spec 4.2, whatever the frame does).
METHOD_GOES_ON_MS = 5000


def _goes_on(frame: str, form: str) -> str:
    """The script of the method html: submit ``form`` (to the gateway) once ``frame`` has loaded the method URL (a
    frame marked ``data-posted="no"`` has not been sent there yet), or in time whatever the frame does."""
    return (
        "<script>(function () { var sent = false;"
        f' var frame = document.getElementById("{frame}"), form = document.getElementById("{form}");'
        " function onward() { if (!sent) { sent = true; HTMLFormElement.prototype.submit.call(form); } }"
        ' frame.addEventListener("load", function () { if (frame.dataset.posted !== "no") { onward(); } });'
        f" setTimeout(onward, {METHOD_GOES_ON_MS}); }})();</script>"
    )


def _method_frame(url: str, onward: str) -> str:
    """The method URL in a hidden frame; then the page goes on to the gateway (``onward``) by itself."""
    return (
        '<!doctype html><html><body><iframe id="threeds-method" src="' + escape(url) + '" '
        'style="display:none" width="0" height="0"></iframe>'
        f'<form id="threeds-continue" method="post" action="{escape(onward)}">'
        '<noscript><button type="submit">Continue</button></noscript></form>'
        + _goes_on("threeds-method", "threeds-continue")
        + "</body></html>"
    )


def _method_post(url: str, onward: str, orderid: str) -> str:
    """The method step as a form posted into a hidden frame (the 3-D Secure 2 specification's way), then on."""
    data = base64.b64encode(json.dumps({"threeDSServerTransID": orderid}).encode()).decode()
    return (
        '<!doctype html><html><body><iframe id="threeDSMethodIframe" name="threeDSMethodIframe" data-posted="no" '
        'style="display:none" width="0" height="0"></iframe>'
        f'<form id="threeDSMethodForm" method="post" action="{escape(url)}" target="threeDSMethodIframe">'
        f'<input type="hidden" name="threeDSMethodData" value="{escape(data)}"></form>'
        f'<form id="threeDSContinue" method="post" action="{escape(onward)}"></form>'
        + _goes_on("threeDSMethodIframe", "threeDSContinue")
        + '<script>document.getElementById("threeDSMethodIframe").dataset.posted = "yes";'
        " document.forms.threeDSMethodForm.submit();</script></body></html>"
    )


def _script_post(url: str, params: dict[str, str]) -> str:
    inputs = "".join(f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">' for k, v in params.items())
    return (
        f'<!doctype html><html><body><form name="challengeForm" method="POST" action="{escape(url)}">{inputs}'
        "</form><script>window.onload = function () { document.forms.challengeForm.submit(); };</script>"
        "</body></html>"
    )


def _auto_post(url: str, params: dict[str, Any]) -> str:
    inputs = "".join(f'<input type="hidden" name="{escape(k)}" value="{escape(str(v))}">' for k, v in params.items())
    return (
        '<!doctype html><html><body onload="document.forms[0].submit()">'
        f'<form id="threeds-redirect" method="post" action="{escape(url)}">{inputs}'
        '<noscript><button type="submit">Continue</button></noscript></form></body></html>'
    )
