"""A record of one HTTP exchange with the gateway, masked at birth, for logs, reports, notebooks and recordings.

It is built once, by ``Exchange.capture`` from what was sent (``Sent``) and what came back (``Answered``), and
passed along as it is: to the client's observers (``GatewayClient(observers=[...])``), the Allure report, the
explorer's timeline, a recording (``toolkit.recording.Recorder``: an observer like any other, whose HAR
serializer writes it) and the sequence diagrams (``toolkit.diagram``).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from toolkit.auth import SignatureTrace
from toolkit.fields import FIELDS
from toolkit.masking import is_cvv_name, is_pan_name, mask_fields, mask_text
from toolkit.outcome_values import outcome_values
from toolkit.wire import encode_form

HeaderItems = Mapping[str, str] | Iterable[tuple[str, str]]  # header fields: a mapping, or pairs a name may repeat in


class HeaderFields(Mapping[str, str]):
    """Header fields in the order they came, a repeated name kept apart in ``fields`` (two ``Set-Cookie`` are two
    fields, as HTTP and HAR have them); as a mapping, a name reads its values joined by ", " (RFC 9110 5.3), as
    ``requests`` shows them.  Names are compared as given, as a dict of headers compares them."""

    __slots__ = ("fields",)
    fields: tuple[tuple[str, str], ...]

    def __init__(self, fields: HeaderItems = ()) -> None:
        if isinstance(fields, HeaderFields):
            items: Iterable[tuple[str, str]] = fields.fields
        else:
            items = fields.items() if isinstance(fields, Mapping) else fields
        self.fields = tuple((str(name), str(value)) for name, value in items)

    def __getitem__(self, name: str) -> str:
        values = [value for field, value in self.fields if field == name]
        if not values:
            raise KeyError(name)
        return ", ".join(values)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(name for name, _ in self.fields))

    def __len__(self) -> int:
        return len({name for name, _ in self.fields})

    def __repr__(self) -> str:
        return f"HeaderFields({list(self.fields)!r})"


_PLACEHOLDER = {
    "credit_card_number": "$CARD_NUMBER",
    "destination-card-no": "$DESTINATION_CARD_NUMBER",
    "cvv2": "$CVV2",
}


@dataclass(frozen=True)
class Sent:
    """A request as it went out (unmasked: it lives until ``Exchange.capture`` masks it).

    ``signed_with``: a word on how it was signed when not with the profile's key (``another key``, or ``a wrong
    signature`` the proxy found): a replay signs the same way.  ``body``: a body that is no form (a proxied
    client's JSON or text, of which the gateway reads no ``fields``), as text."""

    method: str
    url: str
    headers: Mapping[str, str]
    fields: Sequence[tuple[str, str]]
    signed_with: str = ""
    body: str = ""


@dataclass(frozen=True)
class Answered:
    """What came back (unmasked, until ``Exchange.capture``): ``status_code`` None is no answer, ``error`` why;
    a status with an ``error``: an answer cut short, or refused by a proxy itself.

    ``size`` is the body's true size in bytes when ``body`` is not all of it (the proxy keeps a body's first
    part), ``left_out`` the bytes of it ``body`` lacks and ``why`` they were left out."""

    status_code: int | None
    headers: HeaderItems = field(default_factory=dict)
    body: str = ""
    error: str | None = None
    size: int | None = None
    left_out: int = 0
    why: str = ""


@dataclass(frozen=True)
class Exchange:
    """One request and its answer.  Card fields are masked; secrets were never here.

    ``request_body`` is a request body that is no form, as text, masked by value (a proxied client's JSON);
    ``response_headers`` keep a repeated field apart (``HeaderFields``);
    ``signed_with`` and ``findings`` (what a proxy found wrong with it) are kept for a recording;
    ``body_size`` is the answer body's true size when ``response_body`` is not all of it, ``left_out`` the bytes
    it lacks and ``left_out_why`` why; ``outcome_values`` the public test values sent in masked fields (a test
    CVV2: ``toolkit.outcome_values``), which only a recording shows."""

    operation: str
    method: str
    url: str
    request_headers: Mapping[str, str]
    request_fields: tuple[tuple[str, str], ...]
    status_code: int | None
    response_headers: Mapping[str, str] = field(default_factory=dict)
    response_body: str = ""
    elapsed: float = 0.0
    signature: SignatureTrace | None = None
    error: str | None = None
    at: datetime | None = None  # when the request left (UTC); None in records made by hand
    signed_with: str = ""
    findings: tuple[str, ...] = ()
    body_size: int | None = None
    left_out: int = 0
    left_out_why: str = ""
    outcome_values: Mapping[str, str] = field(default_factory=dict, repr=False)
    request_body: str = ""

    @classmethod
    def capture(
        cls,
        operation: str,
        sent: Sent,
        answered: Answered,
        *,
        elapsed: float,
        signature: SignatureTrace | None = None,
        findings: Iterable[str] = (),
    ) -> Exchange:
        """The record of what was ``sent`` and ``answered`` in ``elapsed`` seconds, card data masked on the way in."""
        error = answered.error
        return cls(
            operation=operation,
            method=sent.method,
            url=mask_text(sent.url),
            request_headers=_masked_headers(sent.headers),
            request_fields=masked_pairs(sent.fields),
            status_code=answered.status_code,
            response_headers=_masked_headers(answered.headers),
            response_body=mask_text(answered.body),
            elapsed=elapsed,
            signature=signature.masked() if signature is not None else None,
            error=mask_text(error) if error is not None else None,
            at=datetime.now(UTC) - timedelta(seconds=elapsed),
            signed_with=sent.signed_with,
            findings=tuple(mask_text(text) for text in findings),
            body_size=answered.size,
            left_out=answered.left_out,
            left_out_why=answered.why,
            outcome_values=outcome_values(sent.fields),
            request_body=mask_text(sent.body),
        )

    def as_curl(self, *, wrap: bool = False) -> str:
        """A curl command that reproduces the request: card data and signatures as placeholders.

        ``control`` and the OAuth header depend on the secrets: recompute them with
        ``gatekit sign`` (the command is printed with ``$CONTROL`` / ``$AUTHORIZATION``).
        ``wrap``: one option a line, joined by shell line continuations, each form field its own ``--data-raw``
        (curl joins them with ``&``: the same body), for a report that shows lines as they are.
        """
        fields = []
        for name, value in self.request_fields:
            if name in _PLACEHOLDER:
                value = _PLACEHOLDER[name]
            elif name == "control":
                value = "$CONTROL"
            elif (FIELDS.get(name) and FIELDS[name].secret) or is_cvv_name(name) or is_pan_name(name):
                value = "$" + re.sub(r"[^A-Z0-9_]", "_", name.upper())
            fields.append((name, value))
        options = []
        for name, value in self.request_headers.items():
            if name.lower() in ("content-length", "connection", "accept-encoding"):
                continue
            shown = "$AUTHORIZATION" if name.lower() == "authorization" else value
            options.append(
                f'-H "{name}: {shown}"' if shown.startswith("$") else f"-H {shlex.quote(f'{name}: {shown}')}"
            )
        bodies = [[pair] for pair in fields] if wrap and fields else [fields]
        options += [f'--data-raw "{encode_form(body).replace("%24", "$")}"' for body in bodies]
        return (" \\\n  " if wrap else " ").join([f"curl -sS -X {self.method} {shlex.quote(self.url)}", *options])


def masked_pairs(pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Form fields in the order sent, card data masked (``toolkit.masking.mask_fields``); a name sent twice (a
    proxied client's form) keeps each of its values, each masked."""
    items = list(pairs)
    masked = mask_fields(items)
    if len(masked) == len(items):
        return tuple(masked.items())
    return tuple(pair for item in items for pair in mask_fields([item]).items())


def _masked_headers(headers: HeaderItems) -> Mapping[str, str]:
    """Headers as sent or received, card data masked by value (a Location or Referer may carry a PAN); a repeated
    field kept apart (``HeaderFields``)."""
    if isinstance(headers, Mapping) and not isinstance(headers, HeaderFields):
        return {name: mask_text(str(value)) for name, value in headers.items()}
    return HeaderFields((name, mask_text(value)) for name, value in HeaderFields(headers).fields)


def header_fields(headers: Mapping[str, str]) -> list[tuple[str, str]]:
    """Every field of ``headers``, a repeated one as often as it came (``HeaderFields``), for a HAR."""
    return list(headers.fields if isinstance(headers, HeaderFields) else headers.items())
