"""The payer's side of Hosted Fields: the card typed into the gateway's iframes on a merchant's checkout page.

The gateway's SDK collects the three values from its iframes and posts them, from the merchant's page, to its own
origin: ``POST {SDK root}/api/v4/tokenize/hosted-fields``, JSON ``{"ephemeralTicket", "cardNumber", "expiryDate",
"cvv"}``, after a CORS preflight (``OPTIONS``).  The answer is ``200 {"hostedFieldsToken"}`` or a refusal
``4xx {"code", "message", "payerMessage"?, "field"?}``: a code of the 4xxx class spends the ticket.

Here, what both payers share: the body as the simulator's fields give it (the number's digits, the expiry
``MM/YY``, the CVV's digits), the tokenize address read from ``SDK_URL``, the answer read into a
``HostedFieldsToken`` or a ``TokenizeRefused`` that names the code and the field, what a visit keeps of the card
(BIN and last four, never the CVV), and how a document is recognised as one of the card fields.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from toolkit.hosted_fields import TOKENIZE_PATH, origin_of
from toolkit.masking import CVV_MASK, mask_text
from toolkit.payer.errors import PayerError
from toolkit.payer.visits import card_action
from toolkit.testdata.cards import Card

# The SDK's address, in either shape the examples configure; the root is what comes before it (``/paynet`` aside).
_SDK_PATH = re.compile(r"/(?:sdk|assets/libs)/hosted-fields/[^/?#]+/index\.js$")
# A card field document, read as a person reads it: an input that asks for a card number, an expiry or a CVV.
_FIELD_INPUT = re.compile(r"<input\b[^>]*\bautocomplete\s*=\s*[\"']?cc-(number|exp|csc)\b", re.IGNORECASE)
_FIELD_KINDS = {"number": "pan", "exp": "exp", "csc": "cvv"}
BODY_FIELDS = {"pan": "cardNumber", "exp": "expiryDate", "cvv": "cvv"}  # a field type -> its name in the body
CHECKOUT = "open the merchant's checkout page"  # (a Hosted Fields checkout: the merchant's page, the gateway's iframes)
MAX_QUOTED = 300  # characters of an answer quoted in an error


@dataclass(frozen=True)
class HostedFieldsToken:
    """The SDK's ``onToken``: the single-use token the merchant's server charges with a v4 sale."""

    token: str
    http_status: int = 200


class TokenizeRefused(PayerError):
    """The gateway refused the card typed into its iframes: ``code`` (4001 malformed, 4002 incomplete card data,
    4003 ticket unknown or spent, 4004 card number rejected...), the ``field`` it names, ``payer_message`` what
    the page may show.  A 4xxx refusal spends the ticket: the page must be loaded again for a new one."""

    def __init__(self, code: int, message: str, *, field: str = "", payer_message: str = "", http_status: int = 400):
        where = f" (field {field})" if field else ""
        shown = f"; the payer reads: {payer_message}" if payer_message else ""
        super().__init__(f"the gateway refused the card typed into its Hosted Fields: {code} {message}{where}{shown}")
        self.code = code
        self.field = field
        self.payer_message = payer_message
        self.http_status = http_status

    @property
    def spends_ticket(self) -> bool:
        return 4000 <= self.code < 5000


def tokenize_url(sdk_url: str) -> str:
    """Where the SDK at ``sdk_url`` posts the card: its root (the address before ``/sdk/...``) + the tokenize path."""
    parts = urlsplit(sdk_url)
    root = f"{parts.scheme}://{parts.netloc}" + _SDK_PATH.sub("", parts.path) if _SDK_PATH.search(parts.path) else ""
    return (root or origin_of(sdk_url)) + TOKENIZE_PATH


def is_tokenize_call(url: str) -> bool:
    """A request the SDK makes to tokenize a card (its path ends with the tokenize path)."""
    return urlsplit(url).path.endswith(TOKENIZE_PATH)


def typed_values(card: Card) -> dict[str, str]:
    """What the payer types into each field, by field type: the number, ``MM/YY``, the CVV."""
    return {"pan": card.number, "exp": f"{card.expire_month.zfill(2)}/{card.expire_year[-2:]}", "cvv": card.cvv2}


def tokenize_body(ticket: str, card: Card) -> dict[str, str]:
    """The JSON object the SDK posts: the ticket, and the values as the fields give them (the number's digits)."""
    typed = typed_values(card)
    values = {BODY_FIELDS[kind]: value for kind, value in typed.items()}
    values["cardNumber"] = re.sub(r"[\s-]", "", values["cardNumber"])
    return {"ephemeralTicket": ticket, **values}


def tokenize_action(card: Card) -> dict[str, object]:
    """What a visit keeps of the payer's typing: the number as BIN and last four, the expiry, never the CVV."""
    return {"action": "tokenize", "card": {**card_action(card), "cvv2": CVV_MASK if card.cvv2 else ""}}


def json_fields(body: str | bytes | None) -> dict[str, str]:
    """The fields of a JSON object body, as strings (to be masked as a form's fields are); ``{}`` for anything else."""
    try:
        data = json.loads(body or "")
    except ValueError:
        return {}
    return {str(name): str(value) for name, value in data.items()} if isinstance(data, dict) else {}


def read_answer(
    status: int, content: bytes | str, headers: Mapping[str, str] | None = None, origin: str = ""
) -> HostedFieldsToken:
    """The tokenize answer as the SDK reads it: a ``HostedFieldsToken``, or the ``TokenizeRefused`` it stands for
    (raised); a ``PayerError`` for an answer a browser would not let the page read (no CORS for ``origin``) or that
    carries neither a token nor a code (the SDK's 5000)."""
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    if headers is not None and origin:
        allowed = {name.lower(): value for name, value in headers.items()}.get("access-control-allow-origin", "")
        if allowed not in (origin, "*"):
            raise PayerError(f"the tokenize answer (HTTP {status}) allows the origin {allowed or 'of nobody'!r}, not "
                             f"the merchant page's {origin}: a browser would not let the SDK read it")  # fmt: skip
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise PayerError(f"the tokenize answer (HTTP {status}) is not a JSON object (the SDK reports 5000): "
                         f"{mask_text(text.strip())[:MAX_QUOTED]!r}")  # fmt: skip
    token = data.get("hostedFieldsToken")
    if status == 200 and isinstance(token, str) and token:
        return HostedFieldsToken(token, status)
    code = data.get("code")
    if isinstance(code, int) and not isinstance(code, bool):
        raise TokenizeRefused(code, str(data.get("message", "")), field=str(data.get("field", "")),
                              payer_message=str(data.get("payerMessage", "")), http_status=status)  # fmt: skip
    raise PayerError(f"the tokenize answer (HTTP {status}) carries neither a token nor a code (the SDK reports 5000): "
                     f"{mask_text(text.strip())[:MAX_QUOTED]!r}")  # fmt: skip


def field_kind(document: str) -> str:
    """The card field a frame's document is (``pan``, ``exp``, ``cvv``), read from the input it offers; ``""``."""
    found = _FIELD_INPUT.search(document)
    return _FIELD_KINDS[found.group(1).lower()] if found else ""
