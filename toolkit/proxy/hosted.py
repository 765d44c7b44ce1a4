"""What the proxy says about the answers of the Hosted Fields calls (hosted-fields.md section 3), and about the SDK's
tokenize call when it passes through.

The merchant examples decode every answer of ``create-ephemeral-ticket``, the v4 ``sale`` and the v4 ``status`` as
JSON whatever its HTTP status, and read its values with their JSON types: ``paynet-order-id`` a number in the sale's
answer and a string in the status's, ``error-code`` a number, every other value a string
(``toolkit.hosted_answers.type_problems``, from the catalogue's ``Operation.numbers``).  A body that is not a JSON
object is a failed call to them; a refused signature is a 401 with a ``text/plain`` reason (the emulator's), said
as such.  Values are never quoted but the gateway's own words (masked).
"""

from __future__ import annotations

from collections.abc import Mapping

from toolkit.hosted_answers import NEEDED, type_problems
from toolkit.hosted_fields import TOKENIZE_PATH
from toolkit.masking import mask_text
from toolkit.models import Status
from toolkit.operations import Operation
from toolkit.proxy.checks import Answer, Check
from toolkit.wire import DecodeError, loads_json

MAX_REASON = 120  # characters of a refusal's text/plain reason quoted in a finding


def is_tokenize_call(path: str) -> bool:
    """The SDK's own call (``POST {SDK origin}/api/v4/tokenize/hosted-fields``): the payer's browser, not a merchant."""
    return path.split("?", 1)[0].rstrip("/").endswith(TOKENIZE_PATH)


def tokenize_note() -> Check:
    return Check("the Hosted Fields SDK's tokenize call: the payer's browser sends the card to the gateway's origin, "
                 "never a merchant's server; the proxy does not check it and records no body of it", False)  # fmt: skip


def check_hosted_answer(
    op: Operation, sent: Mapping[str, str], request_headers: Mapping[str, str], status: int,
    headers: Mapping[str, str], body: bytes,
) -> Answer:  # fmt: skip
    """A Hosted Fields answer against what the examples read: a JSON object with its types, and what it must carry."""
    content_type = headers.get("content-type", "")
    try:
        data = loads_json(body)
    except DecodeError:
        data = None
    if not isinstance(data, dict):
        text = mask_text(body.decode("utf-8", "replace").strip())[:MAX_REASON]
        if status in (401, 403):
            reason = text or "no reason given"
            return Answer({}, [Check(f"HTTP {status}: the gateway refused the OAuth signature ({reason})")],
                          f"signature refused: {reason}")  # fmt: skip
        said = f"HTTP {status} {content_type or '(no Content-Type)'}"
        return Answer({}, [Check(f"{said}: not a JSON object; the Hosted Fields examples decode every answer as JSON "
                                 "and take anything else for a failed call")])  # fmt: skip
    fields = {str(name): str(value).strip() for name, value in data.items()}
    found = [Check(problem) for problem in type_problems(op, data)]
    if status >= 400 or (fields.get("error-message") and not fields.get("status")):  # (a decline has a status)
        if status < 400:
            found.append(Check(f"a refusal with HTTP {status}: the examples' gateway refuses with 4xx"))
        if not fields.get("error-message"):
            found.append(Check(f"HTTP {status} without an error-message: the examples' page has nothing to show"))
        code = f" {fields['error-code']}" if fields.get("error-code") else ""
        kind = fields.get("type") or "refused"
        return Answer(fields, found, f"{kind}{code}: {fields.get('error-message', '')[:80]}".rstrip(": "))
    missing = [name for name in NEEDED.get(op.response, ()) if not fields.get(name)]
    if missing:
        found.append(Check(f"{op.name} answer without {', '.join(missing)} (the examples refuse such an answer)"))
    client_orderid = sent.get("client_orderid") or sent.get("client-order-id")
    merchant_order = fields.get("merchant-order-id")
    if client_orderid and merchant_order and merchant_order != client_orderid:
        found.append(Check(f"merchant-order-id {merchant_order} answers client_orderid {client_orderid}"))
    if fields.get("status") and fields["status"].lower() not in {s.value for s in Status}:
        found.append(Check(f"status {fields['status']!r} is none of {', '.join(s.value for s in Status)}"))
    said = (
        "an ephemeral ticket"
        if fields.get("ephemeralTicket")
        else " ".join(part for part in (fields.get("type", ""), fields.get("status", "")) if part)
    )
    return Answer(fields, found, said)
