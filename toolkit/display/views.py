"""Views of the toolkit's records for notebooks: HTML (``_repr_html_``) and text, always masked.

Fields, signatures, exchanges, responses (a status with its outcome in colour), orders and notes.
No view is ever given a control key or a private key, so none can show one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote

from toolkit.auth import SignatureTrace
from toolkit.display.html import (
    Tone,
    badge,
    esc,
    folded,
    line,
    masked_items,
    page,
    section,
    table,
    text_lines,
    tone_of,
)
from toolkit.exchange import Exchange
from toolkit.masking import mask_text
from toolkit.models import Response, StatusResponse
from toolkit.wire import DecodeError, decode_response

if TYPE_CHECKING:
    from toolkit.flows import Order

KEY_PLACEHOLDER = "<merchant_control_key>"
_HIDDEN_HEADERS = frozenset({"content-length", "connection", "accept-encoding"})


def decoded_answer(exchange: Exchange) -> dict[str, str]:
    """The decoded (masked) answer; an undecodable body as ``{"body": ...}``, no body as ``{}``."""
    if not exchange.response_body:
        return {}
    try:
        return decode_response(exchange.response_body)
    except DecodeError:
        return {"body": exchange.response_body}


@dataclass(frozen=True)
class FieldsView:
    """A titled table of fields (a response, a callback, a request)."""

    title: str
    fields: Mapping[str, str]

    def _repr_html_(self) -> str:
        return page(section(self.title, table(masked_items(self.fields), ("field", "value"))))

    def __str__(self) -> str:
        return mask_text(f"{self.title}\n{text_lines(self.fields)}")

    def __repr__(self) -> str:
        return mask_text(f"FieldsView({self.title!r}, {len(self.fields)} fields)")


@dataclass(frozen=True)
class SignatureView:
    """The control formula with its parts, or the OAuth base string, signature and header."""

    trace: SignatureTrace

    def rows(self) -> list[tuple[str, str]]:
        trace = self.trace.masked()
        if trace.scheme == "control":
            parts = [*trace.parts, ("merchant_control_key", KEY_PLACEHOLDER)]
            return [
                ("formula", trace.formula),
                *[(f"  {name}", value) for name, value in parts],
                ("control", trace.control),
            ]
        method, url, params = ([*trace.base_string.split("&", 2), "", ""])[:3]
        readable = unquote(params).replace("&", "\n")
        return [
            ("scheme", f"OAuth 1.0a {trace.scheme}"),
            ("base string", trace.base_string),
            ("  method", method),
            ("  URL", unquote(url)),
            ("  parameters (decoded once, sorted)", readable),
            ("signature", trace.signature),
            ("Authorization", trace.header),
        ]

    def _repr_html_(self) -> str:
        return page(section(f"signature ({self.trace.scheme})", table(self.rows())))

    def __repr__(self) -> str:
        return f"SignatureView({self.trace.scheme})"

    def __str__(self) -> str:
        return mask_text("\n".join(f"{name}: {value}" for name, value in self.rows()))


@dataclass(frozen=True)
class ExchangeView:
    """One HTTP exchange: the request (masked), what was signed, and the decoded answer."""

    exchange: Exchange

    def __repr__(self) -> str:
        ex = self.exchange
        return mask_text(f"ExchangeView({ex.operation}: {ex.method} {ex.url} -> HTTP {ex.status_code})")

    def answer(self) -> dict[str, str]:
        return decoded_answer(self.exchange)

    def request_html(self) -> str:
        """The request line, its headers (folded) and its (masked) fields, unwrapped: ``page`` masks the whole."""
        ex = self.exchange
        headers = [(k, v) for k, v in ex.request_headers.items() if k.lower() not in _HIDDEN_HEADERS]
        fields = table(masked_items(dict(ex.request_fields)), ("field", "value"))
        return section(f"request: {ex.method} {ex.url}", fields + folded("headers", table(headers)))

    def _repr_html_(self) -> str:
        ex = self.exchange
        answer = self.answer()
        if ex.status_code is None:
            head = line(f"{ex.operation}: no answer ({ex.error})", "bad")
        else:
            said = answer.get("status") or answer.get("type", "")
            tone: Tone = "bad" if ex.status_code >= 400 else tone_of(answer.get("status", ""))
            head = line(f"{ex.operation}: HTTP {ex.status_code} {said} in {ex.elapsed * 1000:.0f} ms", tone)
        parts = [head, self.request_html()]
        if ex.signature is not None:
            rows = table(SignatureView(ex.signature).rows())
            parts.append(folded(f"signature ({ex.signature.scheme})", rows, open_=True))
        parts.append(section("response", table(masked_items(answer), ("field", "value"))))
        return page(*parts)

    def __str__(self) -> str:
        ex = self.exchange
        lines = [f"{ex.method} {ex.url}", text_lines(dict(ex.request_fields))]
        if ex.signature is not None:
            lines.append(str(SignatureView(ex.signature)))
        lines += [f"HTTP {ex.status_code}", text_lines(self.answer())]
        return mask_text("\n".join(lines))


@dataclass(frozen=True)
class Note:
    """A short message (an error, a hint, a confirmation) in the colour of its outcome."""

    text: str
    bad: bool = False
    extra: Sequence[str] = field(default_factory=tuple)
    tone: Tone | None = None

    def __repr__(self) -> str:
        return mask_text(f"Note({self.text!r})")

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{esc(text)}</li>" for text in self.extra)
        tone = self.tone or ("bad" if self.bad else "ok")
        return page(line(self.text, tone, bold=True) + (f"<ul>{items}</ul>" if items else ""))

    def __str__(self) -> str:
        return mask_text("\n".join([self.text, *(f"  - {text}" for text in self.extra)]))


def status_summary(status: StatusResponse) -> str:
    """``approved · sale 10.42 EUR · orderid 8056020`` (with the payer's part or the reason)."""
    money = f" {status.amount} {status.currency}" if status.amount is not None else ""
    what = f"{status.transaction_type or 'transaction'}{money} · orderid {status.orderid or '-'}"
    if status.needs_payer:
        where = f"go to {status.redirect_to}" if status.redirect_to else "show the status html (3-D Secure method step)"
        what += f" · the payer must act: {where}"
    if status.error_message:
        what += f" · {status.error_message}"
    return what


def response_html(response: Response, title: str = "") -> str:
    """A response: a status with its outcome in colour and every field folded; any other with its ids and fields."""
    raw = dict(response.raw)
    kind = title or raw.get("type", type(response).__name__)
    shown = {name: ("(below)" if name == "html" and value else value) for name, value in raw.items()}
    fields = table(masked_items(shown), ("field", "value"))
    if isinstance(response, StatusResponse):
        head = f"<p>{badge(response.status.value, tone_of(response.status.value))} {esc(status_summary(response))}</p>"
        parts = [section(kind, head), folded(f"all {len(raw)} fields", fields)]
    else:
        named = (("orderid", "paynet-order-id"), ("card-ref-id", "card-ref-id"), ("serial", "serial-number"))
        ids = [f"{name} {raw[key]}" for name, key in named if raw.get(key)]
        error = raw.get("error-message", "")
        head = line(" · ".join([raw.get("type", "answer"), *ids]), "bad" if error else "plain")
        parts = [section(kind, head + (line(error, "bad") if error else "")), fields]
    if raw.get("html"):
        parts.append(folded("html (what the payer's browser is given)", table([("html", raw["html"])])))
    return page(*parts)


def order_html(order: Order) -> str:
    """An order: the operation, its ids and money, the acknowledgement and what was sent (masked)."""
    sent = order.fields
    money = f" · {sent['amount']} {sent.get('currency', '')}" if sent.get("amount") else ""
    head = line(f"{order.operation} · orderid {order.orderid} · client_orderid {order.client_orderid}{money}")
    answer = table(masked_items(dict(order.ack.raw)), ("field", "value"))
    return page(head, section("acknowledgement", answer), folded("sent", table(masked_items(sent), ("field", "value"))))


@dataclass(frozen=True)
class ResponseView(FieldsView):
    """A response: a status with its outcome in colour, any other with its ids; then its fields."""

    response: Response | None = None

    def _repr_html_(self) -> str:
        return response_html(self.response, self.title) if self.response is not None else super()._repr_html_()


@dataclass(frozen=True)
class OrderView(FieldsView):
    """An order: operation, ids and money; the acknowledgement; what was sent (folded)."""

    order: Order | None = None

    def _repr_html_(self) -> str:
        return order_html(self.order) if self.order is not None else super()._repr_html_()
