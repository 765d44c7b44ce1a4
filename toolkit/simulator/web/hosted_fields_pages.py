"""The browser half of Hosted Fields (v4), served from the simulator's own origin (hosted-fields.md sections 2, 4,
5 and 12 points 1-2): the SDK script a merchant's checkout page loads, and the card fields it puts as iframes into
the page's three empty containers.  The files are in ``hosted_fields_sdk/``; the routes, at the simulator's root
(outside ``/paynet``, beside the tokenize call ``POST /api/v4/tokenize/hosted-fields`` that the SDK makes)::

    GET /sdk/hosted-fields/latest/index.js?segment=paynet   the SDK (the newest ``.env.example``'s address)
    GET /assets/libs/hosted-fields/latest/index.js          the same SDK at the earlier address
    GET /hf/{type}?id=<container id>&placeholder=<text>     a card field: ``pan``, ``exp`` or ``cvv``
    GET /hf/field.js, GET /hf/field.css                     what every field document loads

No document has an inline script or style, so each works under a strict Content-Security-Policy: the merchant's
(section 2), and the field documents' own (``FIELD_POLICY``).  The SDK changes the merchant's page only through
the DOM and ``element.style`` (which that policy allows).

What section 13 leaves open, as the simulator answers it (each choice written here, once):

- SDK address: both shapes, ``latest`` only (another version is a 404); ``segment`` is not read.
- How the SDK refuses the merchant's origin: it compares its own origin (its script's ``src``) with the page's;
  when they are the same, ``init`` puts no field in the page and reports ``SDK_ERRORS["merchant_origin"]``.
- The style allowlist: ``STYLE_ALLOWLIST``, per part of the style bag; a value matching ``FORBIDDEN_VALUE``
  (``url()``, ``expression()``, anything that could close a declaration or open a rule) is refused as well.
  The SDK drops the rest with a console warning; the field applies the same rules again.
- How a disguised container is rejected: at ``tokenize``, before a card value leaves its field, when the
  container or its iframe has a ``transform``, ``filter``, ``clip-path``, an ``opacity`` below 1 or is not
  visible, or another element lies over the middle of a field: ``SDK_ERRORS["disguised"]``, no call made.
- The SDK's own error codes (the emulator's 5000 and 5001, and four more): ``SDK_ERRORS``.  The gateway's codes
  (``4xxx``) come from the tokenize answer, passed on as they are.
- ``hf-field--error``: the SDK adds it to the container of the field a refusal names (``field``: ``cardNumber``,
  ``expiryDate``, ``cvv`` or a container id) and takes it off when the payer edits that field again.
- The values sent: the card number's digits (the field shows them in groups), the expiry as ``MM/YY``, the CVV's
  digits.  They reach the tokenize call through the merchant's page (``postMessage`` to the SDK, which posts
  them), as the vendor's emulator does.
- Caching: the SDK and the field's script and style are ``no-cache`` with an ``ETag`` (a new simulator is seen
  at once, an unchanged file is a 304); the field documents are ``no-store``.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

SDK_PATHS = ("/sdk/hosted-fields/latest/index.js", "/assets/libs/hosted-fields/latest/index.js")
FIELD_ROOT = "/hf"

_TEXT = ("color", "fontFamily", "fontSize", "fontStyle", "fontWeight", "fontVariantNumeric", "letterSpacing")
_BOX = ("backgroundColor", "caretColor", "lineHeight", "textAlign", "padding", "paddingTop", "paddingRight",
        "paddingBottom", "paddingLeft", "border", "borderRadius", "outline", "transition")  # fmt: skip
STYLE_ALLOWLIST: dict[str, tuple[str, ...]] = {
    "input": (*_TEXT, *_BOX),
    "focus": (*_TEXT, *_BOX),  # merged over ``input`` while the field has the focus
    "placeholder": ("color", "fontStyle", "fontWeight", "letterSpacing"),
}
FORBIDDEN_VALUE = r"url\s*\(|image-set|expression\s*\(|javascript:|[;{}<>\\@]|/\*"
MAX_VALUE_LENGTH = 200

# name -> (code, message for the merchant's log, message for the payer)
SDK_ERRORS: dict[str, tuple[int, str, str]] = {
    "bad_answer": (5000, "the tokenize answer carried neither a token nor an error code",
                   "The payment gateway did not answer as expected. Try again in a moment."),
    "network": (5001, "the tokenize call did not reach the gateway",
                "We could not reach the payment gateway. Check your connection and try again."),
    "merchant_origin": (5002, "the SDK is served from the merchant's own origin: load it from the gateway",
                        "This page cannot take a card payment."),
    "disguised": (5003, "a card field is hidden, transformed or covered",
                  "This page cannot take a card payment."),
    "not_ready": (5004, "the card fields cannot tokenize now",
                  "The card fields are not ready. Wait a moment and try again."),
    "no_answer": (5005, "a card field did not give its value",
                  "The card fields did not answer. Reload the page to try again."),
}  # fmt: skip

FIELD_TYPES: dict[str, dict[str, str]] = {
    "pan": {"label": "Card number", "autocomplete": "cc-number", "maxlength": "23", "placeholder": ""},
    "exp": {"label": "Expiry date (MM/YY)", "autocomplete": "cc-exp", "maxlength": "7", "placeholder": "MM/YY"},
    "cvv": {"label": "Security code", "autocomplete": "cc-csc", "maxlength": "4", "placeholder": "CVV"},
}
MAX_ID_LENGTH = 200
MAX_PLACEHOLDER_LENGTH = 100
FIELD_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; base-uri 'none'; form-action 'none'"
RULES_MARK = "/*HF_RULES*/ {}"  # in index.js and field.js: replaced by ``rules_json()`` as they are served
FIELD_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": FIELD_POLICY,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}
JS = "text/javascript; charset=utf-8"
CSS = "text/css; charset=utf-8"

Endpoint = Callable[[Request], Coroutine[Any, Any, Response]]


def rules_json() -> str:
    """What the SDK and the field read as their rules: the allowlist, the refused values, the SDK's errors."""
    errors = {name: {"code": code, "message": message, "payerMessage": payer}
              for name, (code, message, payer) in SDK_ERRORS.items()}  # fmt: skip
    rules = {"allowed": STYLE_ALLOWLIST, "forbidden": FORBIDDEN_VALUE, "maxLength": MAX_VALUE_LENGTH,
             "errors": errors, "fieldRoot": FIELD_ROOT}  # fmt: skip
    return json.dumps(rules, separators=(",", ":"), sort_keys=True)


@dataclass(frozen=True)
class Asset:
    """A served file: its bytes, its media type and its validator."""

    body: bytes
    media_type: str

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:32] + '"'


def _read(name: str) -> str:
    return (resources.files("toolkit.simulator.web") / "hosted_fields_sdk" / name).read_text(encoding="utf-8")


def _with_rules(name: str) -> str:
    text = _read(name)
    if text.count(RULES_MARK) != 1:
        raise ValueError(f"hosted_fields_sdk/{name}: {RULES_MARK!r} must appear once")
    return text.replace(RULES_MARK, rules_json())


def load_assets() -> dict[str, Asset]:
    """The SDK and the field's script and style, as served (read once, when the app is made)."""
    return {
        "index.js": Asset(_with_rules("index.js").encode(), JS),
        "field.js": Asset(_with_rules("field.js").encode(), JS),
        "field.css": Asset(_read("field.css").encode(), CSS),
    }


def routes() -> list[Route]:
    """The SDK at both addresses, the field documents and their files."""
    assets = load_assets()
    template = Template(_read("field.html"))
    sdk = _asset_endpoint(assets["index.js"], {"Cross-Origin-Resource-Policy": "cross-origin"})
    return [
        *(Route(path, sdk, methods=["GET"]) for path in SDK_PATHS),
        Route(f"{FIELD_ROOT}/field.js", _asset_endpoint(assets["field.js"]), methods=["GET"]),
        Route(f"{FIELD_ROOT}/field.css", _asset_endpoint(assets["field.css"]), methods=["GET"]),
        Route(FIELD_ROOT + "/{type}", _field_endpoint(template), methods=["GET"]),
    ]


def _asset_endpoint(asset: Asset, extra: dict[str, str] | None = None) -> Endpoint:
    headers = {"Cache-Control": "no-cache", "ETag": asset.etag, "X-Content-Type-Options": "nosniff", **(extra or {})}

    async def endpoint(request: Request) -> Response:
        if asset.etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        return Response(asset.body, media_type=asset.media_type, headers=headers)

    return endpoint


def _field_endpoint(template: Template) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        kind = request.path_params["type"]
        if kind not in FIELD_TYPES:
            return PlainTextResponse(f"no card field {kind[:40]!r}: pan, exp or cvv", status_code=404)
        container = request.query_params.get("id", "")
        placeholder = request.query_params.get("placeholder", "")
        if not 0 < len(container) <= MAX_ID_LENGTH or len(placeholder) > MAX_PLACEHOLDER_LENGTH:
            why = f"id: 1 to {MAX_ID_LENGTH} characters; placeholder: at most {MAX_PLACEHOLDER_LENGTH}"
            return PlainTextResponse(why, status_code=400)
        return Response(field_document(template, kind, container, placeholder), media_type="text/html",
                        headers=FIELD_HEADERS)  # fmt: skip

    return endpoint


def field_document(template: Template, kind: str, container: str, placeholder: str) -> str:
    """The HTML of one card field: one focusable ``input#value``, its script and style from ``/hf/``."""
    shape = FIELD_TYPES[kind]
    values = {**shape, "type": kind, "id": container, "placeholder": placeholder or shape["placeholder"]}
    return template.substitute({name: html.escape(value, quote=True) for name, value in values.items()})
