"""The PHP library's query engine (and its Ruby port), reproduced from their public source.

payneteasy/php-library-payneteasy-api, source/PaynetEasy/PaynetEasyApi/:
- Query/Prototype/Query.php: ``$requestFieldsDefinition`` rows (field, property path, required, rule);
  ``validatePaymentTransaction`` refuses a missing required value or one that breaks its rule;
  ``paymentTransactionToRequest`` sends only non-empty values (PHP ``empty``: "" and "0" are empty), in
  definition order; ``createSignature`` concatenates the ``$signatureDefinition`` values and takes
  ``sha1``; Transport/Request.php ``setSignature`` appends ``control`` after the other fields.
- ``processResponse``: status ``processing``/``approved`` (a missing status counts as processing,
  Transport/Response.php ``getStatus``) -> the type must be ``$successResponseType`` and every
  ``$responseFieldsDefinition`` field non-empty; otherwise the type must be the success type,
  ``error`` or ``validation-error``.  Either way a merchant-order-id that is not the payment's is
  refused (``validateClientId``), and an error type raises PaynetException.
- PaymentData/Payment.php ``getAmountInCents``: ``(int) ($amount * 100)`` (a float: 10.42 -> 1041).
- Util/Validator.php: YEAR ``^[0-9]{1,2}$`` (so 2099 must be sent as 99), MONTH 1..12, ID 1-20 chars,
  MEDIUM_STRING 1-50, LONG_STRING 1-128, PHONE ``^[0-9\\-\\+\\(\\)\\s]{6,15}$``, CVV2 3-4 chars.
The Ruby port (payneteasy/ruby-integration-examples lib/paynet_easy/paynet_easy_api/query/prototype/
query.rb) differs in two ways kept here: response fields are checked for presence (``key?``), not
non-emptiness, and ``nil.to_s`` signs an absent value as "".
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tests.interop.transport import GatewayRefusal, LibraryValidation, ResponseRejected, Transport

Rule = Callable[[str], bool]


def _regex(pattern: str) -> Rule:
    return lambda value: re.fullmatch(pattern, value) is not None


def _ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


RULES: dict[str, Rule] = {
    "id": _regex(r"[\S\s]{1,20}"),
    "medium_string": _regex(r"[\S\s]{1,50}"),
    "long_string": _regex(r"[\S\s]{1,128}"),
    "amount": _regex(r"[0-9.]{1,11}"),
    "currency": _regex(r"[A-Za-z]{1,3}"),
    "phone": _regex(r"[0-9\-+()\s]{6,15}"),
    "cvv2": _regex(r"[\S\s]{3,4}"),
    "zip_code": _regex(r"[\S\s]{1,10}"),
    "country": _regex(r"[A-Za-z]{2}"),  # RegionFinder::hasCountryByCode, reduced to its shape
    "year": _regex(r"[0-9]{1,2}"),
    "month": lambda value: value.isdigit() and 1 <= int(value) <= 12,  # in_array($value, range(1, 12))
    "credit_card_number": _regex(r"[0-9]{1,20}"),
    "email": _regex(r"[^@\s]+@[^@\s]+\.[^@\s]+"),  # FILTER_VALIDATE_EMAIL, reduced
    "ip": _ip,
    "url": _regex(r"https?://\S+"),
    "any": lambda value: True,
}
ASYNC_FIELDS = ("type", "status", "paynet-order-id", "merchant-order-id", "serial-number")


@dataclass(frozen=True)
class Query:
    """One query class: what it sends (field, property, required, rule), signs, and expects back."""

    api_method: str  # the path segment after the gateway URL ({gatewayUrl}/{apiMethod}/{endPoint})
    fields: tuple[tuple[str, str, bool, str], ...]
    signature: tuple[str, ...]
    response_fields: tuple[str, ...] = ASYNC_FIELDS
    success_type: str = "async-response"
    family: str = "api/v2"  # the library's gatewayUrl ends in /api/v2; the 3-D Secure uploads live in api/3ds/v1


def php_empty(value: object) -> bool:
    return value is None or value == "" or value == "0"


class PhpLibrary:
    """``PaymentProcessor`` reduced to one call: build, validate, sign, send, process (PHP rules)."""

    presence_only = False  # Ruby: True

    def __init__(
        self, transport: Transport, gateway_url: str, config: Mapping[str, str], queries: Mapping[str, Query]
    ) -> None:
        self.transport = transport
        self.gateway_url = gateway_url.rstrip("/")  # Transport/Request.php setGatewayUrl: rtrim '/'
        self.config = dict(config)  # queryConfig: login, end_point, signing_key, redirect_url, ...
        self.queries = queries  # Query/QueryFactory.php: the query class of an api method

    def call(self, name: str, payment: dict[str, str]) -> dict[str, str]:
        """PaymentProcessor::executeQuery: run the query; the payment then carries the answer's
        paynet-order-id (Query.php ``setPaynetId``)."""
        answer = self.run(self.queries[name], payment)
        if answer.get("paynet-order-id"):
            payment["payment.paynetId"] = answer["paynet-order-id"]
        return answer

    def value(self, payment: Mapping[str, str], source: str) -> str | None:
        if source.startswith("queryConfig."):
            return self.config.get(source.removeprefix("queryConfig."))
        if source == "payment.amountInCents":
            amount = payment.get("payment.amount")
            return self.cents(amount) if amount else self.cents(None)
        return payment.get(source)

    def cents(self, amount: str | None) -> str | None:
        return str(int(float(amount or 0) * 100))  # (int) ($this->getAmount() * 100): null -> 0

    def build(self, query: Query, payment: Mapping[str, str]) -> list[tuple[str, str]]:
        missed, invalid, pairs = [], [], []
        for name, source, required, rule in query.fields:
            value = self.value(payment, source)
            if not php_empty(value):
                if not RULES[rule](str(value)):
                    invalid.append(f"Field '{name}' from property path '{source}'")
                pairs.append((name, str(value)))
            elif required:
                missed.append(f"Field '{name}' from property path '{source}' missed or empty.")
        if missed or invalid:
            raise LibraryValidation("; ".join([*missed, *invalid]))
        signed = "".join(self.value(payment, source) or "" for source in query.signature)
        pairs.append(("control", hashlib.sha1(signed.encode("utf-8")).hexdigest()))
        return pairs

    def run(self, query: Query, payment: Mapping[str, str]) -> dict[str, str]:
        """createRequest + makeRequest + processResponse; the answer, or the library's exception."""
        pairs = self.build(query, payment)
        url = f"{self.gateway_url}/{query.family}/{query.api_method}/{self.config['end_point']}"
        answer = self.transport.post(url, pairs)
        self.process(query, payment, answer)
        return answer

    def present(self, answer: Mapping[str, str], name: str) -> bool:
        return name in answer if self.presence_only else not php_empty(answer.get(name))

    def process(self, query: Query, payment: Mapping[str, str], answer: dict[str, str]) -> None:
        kind = answer.get("type", "").lower()
        if not answer.get("status") and kind not in ("validation-error", "error"):
            answer["status"] = "processing"  # Response::getStatus
        status = answer.get("status", "").lower()
        if status in ("processing", "approved"):
            if kind != query.success_type:
                raise ResponseRejected(f"Response type '{kind}' does not match success response type")
            missed = [name for name in query.response_fields if not self.present(answer, name)]
            if missed:
                raise ResponseRejected(f"Some required fields missed or empty in Response: {', '.join(missed)}")
        elif kind not in (query.success_type, "error", "validation-error"):
            raise ResponseRejected(f"Unknown response type '{kind}'")
        client_id = next(
            (answer[k] for k in ("merchant-order-id", "client_orderid", "merchant_order") if k in answer), ""
        )
        if client_id and client_id != payment.get("payment.clientId"):
            raise ResponseRejected(f"Response clientId '{client_id}' does not match Payment clientId")
        if kind in ("validation-error", "error") or status == "error":
            raise GatewayRefusal(answer)


class RubyLibrary(PhpLibrary):
    """The Ruby port: presence-only response check; an absent signed value is "" (``nil.to_s``)."""

    presence_only = True

    def cents(self, amount: str | None) -> str | None:
        return str(int(float(amount) * 100)) if amount else ""  # (amount * 100).to_i if amount
