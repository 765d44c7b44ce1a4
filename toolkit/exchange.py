"""A record of one HTTP exchange with the gateway, masked at birth, for logs, reports and notebooks."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from toolkit.auth import SignatureTrace
from toolkit.fields import FIELDS
from toolkit.masking import is_cvv_name, is_pan_name, mask_fields, mask_text
from toolkit.wire import encode_form

_PLACEHOLDER = {
    "credit_card_number": "$CARD_NUMBER",
    "destination-card-no": "$DESTINATION_CARD_NUMBER",
    "cvv2": "$CVV2",
}


@dataclass(frozen=True)
class Exchange:
    """One request and its answer.  Card fields are masked; secrets were never here."""

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

    @classmethod
    def capture(
        cls,
        *,
        operation: str,
        method: str,
        url: str,
        headers: Mapping[str, str],
        fields: list[tuple[str, str]],
        status_code: int | None,
        response_headers: Mapping[str, str],
        response_body: str,
        elapsed: float,
        signature: SignatureTrace | None,
        error: str | None = None,
    ) -> Exchange:
        """Build a record from what was sent and received, masking card data on the way in."""
        return cls(
            operation=operation,
            method=method,
            url=mask_text(url),
            request_headers=_masked_headers(headers),
            request_fields=tuple(mask_fields(fields).items()),
            status_code=status_code,
            response_headers=_masked_headers(response_headers),
            response_body=mask_text(response_body),
            elapsed=elapsed,
            signature=signature.masked() if signature is not None else None,
            error=mask_text(error) if error is not None else None,
            at=datetime.now(UTC) - timedelta(seconds=elapsed),
        )

    def as_curl(self) -> str:
        """A curl command that reproduces the request: card data and signatures as placeholders.

        ``control`` and the OAuth header depend on the secrets: recompute them with
        ``gatekit sign`` (the command is printed with ``$CONTROL`` / ``$AUTHORIZATION``).
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
        parts = ["curl", "-sS", "-X", self.method, shlex.quote(self.url)]
        for name, value in self.request_headers.items():
            if name.lower() in ("content-length", "connection", "accept-encoding"):
                continue
            shown = "$AUTHORIZATION" if name.lower() == "authorization" else value
            parts += ["-H", f'"{name}: {shown}"' if shown.startswith("$") else shlex.quote(f"{name}: {shown}")]
        body = encode_form(fields).replace("%24", "$")
        parts += ["--data-raw", f'"{body}"']
        return " ".join(parts)


def _masked_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers as sent or received, card data masked by value (a Location or Referer may carry a PAN)."""
    return {name: mask_text(str(value)) for name, value in headers.items()}
