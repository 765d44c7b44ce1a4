"""What the proxy says about one exchange: the request against the catalogue, the answer against the response model.

Pure functions over what was sent and received.  Each ``Check`` is a problem (the gateway refuses it, or a
client library would refuse the answer) or a note (what a person may want to know: a field the gateway
ignores, a signature that was not checked because the proxy has no key).  Values are masked in every text.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from decimal import Decimal, InvalidOperation

from cryptography.hazmat.primitives.asymmetric import rsa

from toolkit.debugger import Diagnosis, diagnose
from toolkit.masking import Secret, mask_text
from toolkit.models import RENAMED, RESPONSE_MODELS, Status
from toolkit.operations import LOGIN, AuthScheme, Operation, ResponseKind
from toolkit.proxy.routes import Route, nearest
from toolkit.signing import parse_authorization_header
from toolkit.validation import meant_field, request_problems
from toolkit.wire import (
    MEDIA_TYPE,
    DecodeError,
    asks_for_json,
    check_answer,
    content_type_problem,
    decode_form,
    decode_response,
)

_ALWAYS_READ = ("control", LOGIN)
# Fields of an answer that a response model does not read but the gateway documents for every answer.
_COMMON_ANSWER_FIELDS = frozenset({"type", "serial-number", "error-message", "error-code", "end-point-id"})
# Fields each kind of answer must carry (the public client libraries refuse an answer without them).
_MUST_CARRY = {
    ResponseKind.STATUS: ("status",),
    ResponseKind.CARD_REF: ("card-ref-id",),
    ResponseKind.FORM: ("redirect-url",),
}


@dataclass(frozen=True)
class Check:
    """One thing the proxy found: ``problem`` (refused, or an answer a client would refuse) or a note."""

    text: str
    problem: bool = True

    def __str__(self) -> str:
        return mask_text(self.text)


@dataclass(frozen=True)
class Keys:
    """What the proxy checks signatures with (each optional): the merchant's login and control key, its RSA
    key pair (the private key re-signs an OAuth request for the upstream URL; the public key only checks)."""

    login: str = ""
    control_key: Secret | None = None
    private_key: rsa.RSAPrivateKey | None = None
    public_key: rsa.RSAPublicKey | None = None

    @property
    def rsa_public(self) -> rsa.RSAPublicKey | None:
        return self.public_key or (self.private_key.public_key() if self.private_key else None)

    def can_check(self, auth: AuthScheme) -> bool:
        if auth is AuthScheme.OAUTH_RSA_SHA256:
            return self.rsa_public is not None
        return bool(self.control_key)

    def can_sign(self, auth: AuthScheme) -> bool:
        return self.private_key is not None if auth is AuthScheme.OAUTH_RSA_SHA256 else bool(self.control_key)

    def __repr__(self) -> str:
        return f"Keys(login={self.login!r}, control_key={'set' if self.control_key else 'none'})"


def unknown_path(method: str, path: str) -> list[Check]:
    """A request to a path that is no operation: a problem for a POST under ``/api/``, nothing otherwise."""
    if method.upper() != "POST" or "/api/" not in path:
        return []
    near = nearest(path)
    hint = f"; did you mean {near}?" if near else ""
    return [Check(f"{path} is not an operation of the gateway{hint}")]


def request_pairs(body: bytes) -> tuple[list[tuple[str, str]], list[Check]]:
    try:
        return decode_form(body), []
    except (UnicodeDecodeError, ValueError) as exc:
        return [], [Check(f"the body is not a form the gateway reads: {exc}")]


def read_fields(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """The fields as the gateway reads them: each value without the blanks around it (behaviour section 1)."""
    return {name: value.strip() for name, value in pairs}


def check_request(route: Route, method: str, headers: Mapping[str, str], pairs: list[tuple[str, str]]) -> list[Check]:
    """The request's method, media type and fields against the catalogue (the signature: ``check_signature``)."""
    op = route.operation
    found: list[Check] = []
    if method.upper() != "POST":
        found.append(Check(f"{method} {op.name}: the gateway's operations answer POST only"))
    if route.by_group and not op.group:
        found.append(Check(f"{op.name} cannot be addressed by endpoint group"))
    wrong_type = content_type_problem(headers.get("content-type", ""))
    if wrong_type:  # (the gateway reads no field of the body: that is all there is to say about them)
        return [*found, Check(wrong_type)]
    names = [name for name, _ in pairs]
    found += [Check(f"{name}: sent {count} times; the gateway refuses a repeated field") for name, count in
              Counter(names).items() if count > 1]  # fmt: skip
    found += [Check(f"{name}: belongs in the Authorization header, not the body (spec 5.2)") for name in names
              if name.startswith("oauth_")]  # fmt: skip
    present = {name: value.strip() for name, value in pairs if value.strip() and not name.startswith("oauth_")}
    refused = {name for replacing, names_ in op.excludes if replacing in present for name in names_}  # (said below)
    ignored = []
    meant: dict[str, str] = {}
    for name in dict.fromkeys(names):
        if op.knows(name) or name in _ALWAYS_READ or name.startswith("oauth_") or name in refused:
            continue
        guess = meant_field(op, name)
        if guess is None:
            ignored.append(name)
        else:
            meant[guess] = name
            found.append(Check(f"{name}: not a field of {op.name}, did you mean {guess}? (the gateway ignores {name})"))
    if ignored:
        found.append(Check(f"fields {op.name} does not know (the gateway ignores them): {', '.join(ignored)}", False))
    for problem in request_problems(op, {k: v for k, v in present.items() if op.knows(k) or k in refused}, clean=True):
        hint = f" ({meant[problem.field]} was sent)" if problem.field in meant else ""
        found.append(Check(f"{problem}{hint}"))
    return found


@dataclass(frozen=True)
class Signature:
    """What ``check_signature`` concluded: the checks, and for OAuth which URL the signature is for."""

    checks: list[Check]
    signed_for: str = ""  # "client" (the URL the client addressed), "upstream", or "" (not known)


def check_signature(
    route: Route,
    pairs: list[tuple[str, str]],
    body: str,
    authorization: str | None,
    *,
    client_url: str,
    upstream_url: str,
    keys: Keys,
) -> Signature:
    """The control (spec 5.1) or the OAuth signature (5.2), by ``toolkit.debugger``, when the keys allow.

    OAuth signs the URL: a client that addresses the proxy signs the proxy's URL (``client_url``), which
    is right for its code and wrong for the gateway (``upstream_url``); both are tried."""
    op = route.operation
    if op.auth is AuthScheme.NONE:
        return Signature([])
    sent = dict(pairs)
    login = keys.login or sent.get(LOGIN, "") or _consumer_key(authorization) or "?"
    endpoint_id, group_id = (None, route.path_id) if route.by_group else (route.path_id, None)
    if op.auth is AuthScheme.CONTROL:
        if not sent.get("control", "").strip():
            formula = op.control.text if op.control else "the operation's formula"
            return Signature([Check(f"control: missing; {op.name} is signed with {formula} (spec 5.1)")])
        if not keys.control_key:
            return Signature([Check("control: not checked (the proxy has no control key: --profile)", False)])
        verdict = diagnose(op, pairs, url=upstream_url, login=login, control_key=keys.control_key,
                           endpoint_id=endpoint_id, group_id=group_id)  # fmt: skip
        return Signature([] if verdict.ok else [Check(f"control: {_said(verdict)}")])
    if not authorization:
        return Signature([Check(f"Authorization: missing; {op.name} is signed with OAuth {' or '.join(op.schemes)} "
                                "(spec 5.2)")])  # fmt: skip
    method = _header_param(authorization, "oauth_signature_method")
    scheme = op.oauth_scheme(method) if method else op.auth
    if scheme is None:  # (said as such, with or without keys: no key can make the gateway take another method)
        expected = " or ".join(op.schemes)
        return Signature([Check(f"oauth_signature_method {method}: {op.name} is signed with {expected}; the gateway "
                                "refuses another signature method")])  # fmt: skip
    if not keys.can_check(scheme):
        what = "public key (--public-key)" if scheme is AuthScheme.OAUTH_RSA_SHA256 else "control key (--profile)"
        checks = [Check(f"OAuth signature: not checked (the proxy has no {what})", False)]
        if client_url != upstream_url:
            checks.append(Check(f"OAuth signs the URL: a signature made for the proxy's URL ({client_url}) is checked "
                                f"by the gateway against {upstream_url}, and refused; give the proxy the merchant's "
                                "keys (--profile) to check it and sign it again", False))  # fmt: skip
        return Signature(checks)
    checked = {}
    for which, url in (("client", client_url), ("upstream", upstream_url)):
        checked[which] = diagnose(
            op, body, authorization=authorization, url=url, login=login, control_key=keys.control_key,
            public_key=keys.rsa_public, now=time.time(), endpoint_id=endpoint_id, group_id=group_id,
        )  # fmt: skip
        if checked[which].ok:
            return Signature([], which)
    return Signature([Check(f"OAuth signature: {_said(checked['client'])}")])


def _consumer_key(authorization: str | None) -> str:
    return _header_param(authorization, "oauth_consumer_key")


def _header_param(authorization: str | None, name: str) -> str:
    """A parameter of an OAuth ``Authorization`` header ("" when absent, or when the header cannot be read)."""
    try:
        return parse_authorization_header(authorization or "").get(name, "")
    except ValueError:
        return ""


def _said(verdict: Diagnosis) -> str:
    """The debugger's verdict, with what the gateway expects against what was sent for the part it names."""
    named = next((f for f in verdict.findings if f.part in verdict.verdict), None)
    if named is None or len(named.expected) + len(named.found) > 80:
        return verdict.verdict
    return f"{verdict.verdict} ({named.part}: expected {named.expected!r}, sent {named.found!r})"


@dataclass(frozen=True)
class Answer:
    """An answer as the proxy read it: its fields (empty when it is none), and the checks on it."""

    fields: dict[str, str]
    checks: list[Check]
    said: str = ""  # the answer in a few words, where its fields do not say it (``toolkit.proxy.hosted``)

    @property
    def summary(self) -> str:
        """``async-response processing`` / ``validation-error 2: amount: ...``, for the exchange's line."""
        if self.said:
            return self.said
        kind, status = self.fields.get("type", ""), self.fields.get("status", "")
        if kind in ("validation-error", "error"):
            code = self.fields.get("error-code", "")
            return f"{kind} {code}: {self.fields.get('error-message', '')[:80]}".replace(" :", ":")
        return " ".join(part for part in (kind, status) if part)


def required_answer_fields(kind: ResponseKind) -> tuple[str, ...]:
    """The wire names an answer of ``kind`` must carry: its model's fields without a default, and the status."""
    model = RESPONSE_MODELS[kind]
    names = [RENAMED.get(f.name, f.name.replace("_", "-")) for f in fields(model)
             if f.name != "raw" and f.default is MISSING and f.default_factory is MISSING]  # fmt: skip
    return (*names, *_MUST_CARRY.get(kind, ()))


def known_answer_fields(kind: ResponseKind) -> frozenset[str]:
    model = RESPONSE_MODELS[kind]
    return frozenset(RENAMED.get(f.name, f.name.replace("_", "-")) for f in fields(model) if f.name != "raw")


def check_answer_of(
    op: Operation,
    sent: Mapping[str, str],
    request_headers: Mapping[str, str],
    status: int,
    headers: Mapping[str, str],
    body: bytes,
) -> Answer:
    """The answer against the operation's response model (``toolkit.models``) and the request it answers (the
    family's answers; a Hosted Fields call's: ``toolkit.proxy.hosted.check_hosted_answer``)."""
    content_type = headers.get("content-type", "")
    try:
        answer = decode_response(body)
        check_answer(answer)
    except DecodeError as exc:
        return Answer({}, [Check(f"HTTP {status} {content_type or '(no Content-Type)'}: not a gateway answer: {exc}")])
    found: list[Check] = []
    json_asked = asks_for_json(request_headers.get("accept", ""))
    if json_asked and not body.lstrip().startswith(b"{"):
        found.append(Check(f"asked for {MEDIA_TYPE}, answered in the key=value form", False))
    kind = answer.get("type", "").lower()
    if kind in ("validation-error", "error"):
        if status == 200 and json_asked:  # (the legacy form answers everything with 200, behaviour section 2)
            found.append(Check(f"{kind} with HTTP 200: asked for JSON, the gateway answers a refusal with 4xx or 5xx"))
        if not answer.get("error-message"):
            found.append(Check(f"{kind} without an error-message"))
        return Answer(answer, found)
    if status != 200:
        found.append(Check(f"HTTP {status} for a {kind}: the gateway answers a success with 200"))
    if kind != op.response.value:
        found.append(Check(f"type {kind}: {op.name} answers {op.response.value}"))
        return Answer(answer, found)
    missing = [name for name in required_answer_fields(op.response) if not answer.get(name)]
    if missing:
        found.append(Check(f"{kind} without {', '.join(missing)} (the client libraries refuse such an answer)"))
    client_orderid = sent.get("client_orderid") or sent.get("client-order-id")
    merchant_order = answer.get("merchant-order-id")
    if client_orderid and merchant_order and merchant_order != client_orderid:
        found.append(Check(f"merchant-order-id {merchant_order} answers client_orderid {client_orderid}"))
    orderid = sent.get("orderid")
    if orderid and answer.get("paynet-order-id") and answer["paynet-order-id"] != orderid:
        found.append(Check(f"paynet-order-id {answer['paynet-order-id']} answers orderid {orderid}"))
    if "status" in answer and answer["status"].lower() not in {s.value for s in Status}:
        found.append(Check(f"status {answer['status']!r} is none of {', '.join(s.value for s in Status)}"))
    if answer.get("amount"):
        try:
            Decimal(answer["amount"])
        except InvalidOperation:
            found.append(Check(f"amount {answer['amount']!r} is not a number"))
    extra = sorted(set(answer) - known_answer_fields(op.response) - _COMMON_ANSWER_FIELDS)
    if extra:
        found.append(Check(f"fields the {kind} model does not read: {', '.join(extra)}", False))
    return Answer(answer, found)


__all__ = [
    "Answer",
    "Check",
    "Keys",
    "Signature",
    "check_answer_of",
    "check_request",
    "check_signature",
    "read_fields",
]
