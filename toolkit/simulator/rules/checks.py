"""Checks on every request, in order: endpoint, body, fields, then control or OAuth.

Each rejection says exactly what failed, e.g. "control mismatch: sale expects SHA-1(endpointId +
client_orderid + amount_in_minor_units + email + merchant_control_key)", "oauth_nonce already
used", "amount: amount 10.005 has more decimals than EUR allows (2)".  Requests that work but
deviate from the spec add conformance warnings to the journal.
"""

from __future__ import annotations

import hmac
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from toolkit import signing
from toolkit.masking import mask_base_string
from toolkit.money import MoneyError
from toolkit.operations import LOGIN, AuthScheme, ControlFormula, Operation
from toolkit.plancache import PlanCache
from toolkit.simulator.rules.errors import SimError, control_error, endpoint_error, field_error, oauth_error
from toolkit.simulator.settings import Merchant, SimulatorSettings
from toolkit.simulator.storage import Store, account_rows
from toolkit.validation import request_problems, respelled

OAUTH_PARAMS = (
    "oauth_consumer_key",
    "oauth_signature_method",
    "oauth_signature",
    "oauth_timestamp",
    "oauth_nonce",
    "oauth_version",
)
MAX_TIMESTAMP_DIGITS = 12  # epoch seconds until the year 33658
# Read on every operation: the checksum, and a login (checked against the endpoint's merchant when sent).
_ALWAYS_READ = ("control", LOGIN)


@dataclass(frozen=True)
class Address:
    merchant: Merchant
    endpoint_id: str
    group_id: str | None
    path_id: str


def resolve(settings: SimulatorSettings, op: Operation, path_id: str, by_group: bool) -> Address:
    """The merchant and concrete endpoint behind the id in the path."""
    if by_group and not op.group:
        raise endpoint_error(f"{op.name} cannot be addressed by endpoint group; use an endpoint id")
    for merchant in settings.merchants:
        if by_group and path_id in merchant.endpoint_group_ids:
            return Address(merchant, merchant.endpoint_ids[0], path_id, path_id)
        if not by_group and path_id in merchant.endpoint_ids:
            return Address(merchant, path_id, None, path_id)
    what = "endpoint group" if by_group else "endpoint"
    raise endpoint_error(f"{what} {path_id} is not configured in the simulator")


def canonical_fields(
    op: Operation, pairs: list[tuple[str, str]], warnings: list[str], *, lenient: bool = False
) -> dict[str, str]:
    """Body pairs by the catalogue's wire names: trimmed, repeats refused.

    Strict (the production gateway): a field is known by its documented spelling only; any other
    spelling is an unknown field (a warning), so the mandatory field it meant is missing.
    Lenient: other spellings of a field (``client_orderid`` for ``client-order-id``, ``cres``) are
    mapped, with a warning.  Empty values are left out: the gateway ignores blanks, so ``amount=``
    is no amount (a full capture or return), as ``toolkit.validation`` and the control formulas count it.

    What the names alone decide (unknown fields; whether any is an OAuth parameter, another spelling or
    a repeat) is planned once per operation and names (``_NAMES``); such requests go ``_field_by_field``.
    """
    names = tuple(map(_FIRST, pairs))
    plan = _NAMES.get(op, names, lenient)
    if not plan.regular:
        return _field_by_field(op, pairs, warnings, lenient=lenient)
    values = list(map(_SECOND, pairs))
    stripped = list(map(str.strip, values))
    if stripped != values:
        warnings.extend(
            f"field {name} has leading or trailing blanks; the gateway ignores them"
            for name, value, clean in zip(names, values, stripped, strict=True)
            if value != clean
        )
    if plan.unknown:
        warnings.append(plan.unknown)
    if "" in stripped:
        return {name: value for name, value in zip(names, stripped, strict=True) if value}
    return dict(zip(names, stripped, strict=True))


_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)


@dataclass(frozen=True)
class _NamesPlan:
    regular: bool  # no OAuth parameter in the body, no other spelling to map, no repeat
    unknown: str  # the warning about fields the operation does not know ("" when none)


def _names_plan(op: Operation, names: tuple[str, ...], lenient: bool) -> _NamesPlan:
    other_spelling = lenient and any(not op.knows(name) and (respelled(op, name) or name) != name for name in names)
    oauth = any(name.startswith("oauth_") for name in names)
    unknown = sorted({name for name in names if not op.knows(name) and name not in _ALWAYS_READ})
    return _NamesPlan(
        regular=not (other_spelling or oauth or len(set(names)) != len(names)),
        unknown=f"fields not known to {op.name} (the gateway ignores them): {', '.join(unknown)}" if unknown else "",
    )


_NAMES = PlanCache(_names_plan)


def _field_by_field(
    op: Operation, pairs: list[tuple[str, str]], warnings: list[str], *, lenient: bool = False
) -> dict[str, str]:
    """``canonical_fields`` one pair after the other: the refusals (an OAuth parameter, a repeat) and the
    warnings in the order of the pairs."""
    fields: dict[str, str] = {}
    for name, value in pairs:
        if name.startswith("oauth_"):
            raise oauth_error(f"{name} belongs in the Authorization header, not in the form body (spec 5.2 rule 1)")
        canon = name
        if lenient and not op.knows(name):
            canon = respelled(op, name) or name
            if canon != name:
                warnings.append(f"field {name} is not the gateway's spelling: it writes {canon} (lenient: accepted)")
        stripped = value.strip()
        if value != stripped:
            warnings.append(f"field {canon} has leading or trailing blanks; the gateway ignores them")
        if canon in fields:
            raise field_error(f"{canon}: sent more than once")
        fields[canon] = stripped
    unknown = sorted(name for name in fields if not op.knows(name) and name not in _ALWAYS_READ)
    if unknown:
        warnings.append(f"fields not known to {op.name} (the gateway ignores them): {', '.join(unknown)}")
    return {name: value for name, value in fields.items() if value}


def check_fields(op: Operation, fields: Mapping[str, str], warnings: list[str], *, lenient: bool = False) -> None:
    """The catalogue's rules, shared with the client (``toolkit.validation``), on ``canonical_fields``' result
    (stripped values, none empty).

    A missing mandatory field names what was sent instead, when another spelling of it was; a
    lenient simulator lets ``LENIENT_OPTIONAL`` fields (login, address...) go with a warning.
    """
    problems = request_problems(op, fields, required=op.lenient_required if lenient else None, clean=True)
    if problems:
        raise field_error("; ".join(_hinted(op, str(p), p.field, fields) for p in problems))
    if lenient:
        missing = [name for name in op.required if name not in fields]
        if missing:
            warnings.append(
                f"mandatory on the production gateway, missing here (lenient: accepted): {', '.join(missing)}"
            )


def _hinted(op: Operation, message: str, name: str, fields: Mapping[str, str]) -> str:
    sent = next((other for other in fields if other != name and respelled(op, other) == name), None)
    return f"{message} ({sent} was sent: the gateway spells it {name})" if sent else message


def check_login(op: Operation, fields: Mapping[str, str], address: Address) -> None:
    """A ``login`` that is sent must be the login of the addressed endpoint's merchant (behaviour section 10)."""
    login = fields.get(LOGIN)
    if login is not None and login != address.merchant.login:
        what = "endpoint group" if address.group_id else "endpoint"
        raise SimError(
            f"login: {login} is not the merchant of {what} {address.path_id}; send the login the gateway gave "
            "for this endpoint",
            code="5",
        )


# The order's (amount, currency) in major units, for a follow-up that signs them without sending them.
OrderMoney = Callable[[], tuple[str, str] | None]


def check_control(
    op: Operation,
    fields: Mapping[str, str],
    address: Address,
    warnings: list[str],
    *,
    order_money: OrderMoney | None = None,
) -> None:
    """The ``control`` of the request, as spec 5.1 and the operation's formula say.

    A capture or return that sends no amount is signed without one (the documentation: "amount, if
    sent"; the vectors).  The family's own PHP library signs the order's amount and currency there
    all the same (``CaptureQuery.php``): that control is accepted too, with a conformance warning.
    """
    formula = op.control
    assert formula is not None
    sent = fields.get("control", "")
    if not sent:
        raise field_error(f"control: is required by {op.name}, {formula.text}")
    merchant = address.merchant
    try:
        parts = signing.control_parts(formula, fields, endpoint_id=address.path_id, login=merchant.login)
    except (KeyError, MoneyError) as exc:
        raise field_error(f"control: cannot be computed ({exc})") from None
    if not _signed(parts, sent, merchant):
        if _signed_with_order_money(formula, fields, address, sent, order_money):
            warnings.append(
                "control signs the order's amount and currency, which the request does not send; the "
                "documentation signs them only when sent (the family's PHP library does this on capture)"
            )
            return
        used = ", ".join(f"{name}={value!r}" for name, value in parts)
        raise control_error(f"control mismatch: {op.name} expects {formula.text}; the simulator used {used}")
    if sent != sent.lower():
        warnings.append("control is upper-case hex; the gateway family writes SHA-1 digests in lower case")


def _signed(parts: list[tuple[str, str]], sent: str, merchant: Merchant) -> bool:
    expected = signing.control_checksum([value for _, value in parts], merchant.control_key.reveal())
    return hmac.compare_digest(expected.encode(), sent.lower().encode())


def _signed_with_order_money(
    formula: ControlFormula, fields: Mapping[str, str], address: Address, sent: str, order_money: OrderMoney | None
) -> bool:
    if order_money is None or "amount" in fields or not {"amount", "currency"} <= formula.optional:
        return False
    money = order_money()
    if money is None:
        return False
    with_money = {**fields, "amount": money[0], "currency": money[1]}
    parts = signing.control_parts(formula, with_money, endpoint_id=address.path_id, login=address.merchant.login)
    return _signed(parts, sent, address.merchant)


def check_oauth(
    op: Operation,
    header: str | None,
    url: str,
    pairs: list[tuple[str, str]],
    address: Address,
    store: Store,
    now: float,
    window: int,
) -> None:
    if not header:
        raise oauth_error(f"Authorization header missing: {op.name} is signed with OAuth {' or '.join(op.schemes)}")
    try:
        params = signing.parse_authorization_header(header)
    except ValueError as exc:
        raise oauth_error(str(exc)) from None
    missing = [name for name in OAUTH_PARAMS if not params.get(name)]
    if missing:
        raise oauth_error(f"{', '.join(missing)} missing from the Authorization header (spec 5.2)")
    if params["oauth_version"] != "1.0":
        raise oauth_error(f"oauth_version must be 1.0, got {params['oauth_version']}")
    method = params["oauth_signature_method"]
    scheme = op.oauth_scheme(method)  # (v4 payout: either, behaviour section 11)
    if scheme is None:
        raise oauth_error(f"{op.name} expects oauth_signature_method={' or '.join(op.schemes)}, got {method}")
    merchant = address.merchant
    if params["oauth_consumer_key"] != merchant.login:
        raise oauth_error(
            f"oauth_consumer_key {params['oauth_consumer_key']} is not the login of endpoint {address.path_id}"
        )
    _check_timestamp(params["oauth_timestamp"], now, window)
    oauth = signing.oauth_params_from_header(params)
    base_string = signing.signature_base_string("POST", url, pairs, oauth)
    if not _verify(scheme, base_string, params["oauth_signature"], merchant):
        shown = mask_base_string(base_string)
        raise oauth_error(
            f"oauth_signature does not verify with {scheme.value}; the simulator's signature base "
            f"string (card data masked) is {shown}"
        )
    _use_nonce(store, merchant.login, params["oauth_nonce"], now, window)


def _check_timestamp(value: str, now: float, window: int) -> None:
    if not (value.isascii() and value.isdigit()) or len(value) > MAX_TIMESTAMP_DIGITS:  # 401 digits: no float
        shown = value if len(value) <= 40 else f"{value[:20]}... ({len(value)} characters)"
        raise oauth_error(
            f"oauth_timestamp {shown!r} is not a number of seconds (at most {MAX_TIMESTAMP_DIGITS} digits)"
        )
    skew = int(value) - now
    if abs(skew) > window:
        direction = "behind" if skew < 0 else "ahead of"
        raise oauth_error(
            f"oauth_timestamp {value} is stale: {abs(skew):.0f} s {direction} the simulator's clock "
            f"(real time {now:.0f}: /_sim/clock/advance does not move it); the window is {window} s either side"
        )


def _verify(scheme: AuthScheme, base_string: str, signature: str, merchant: Merchant) -> bool:
    if not signature.isascii():  # never Base64; compare_digest would raise TypeError on it
        return False
    if scheme is AuthScheme.OAUTH_HMAC_SHA1:
        return signing.verify_hmac_sha1(base_string, signature, merchant.control_key.reveal())
    if merchant.rsa_public_key is None:
        raise oauth_error(f"no RSA public key is registered for login {merchant.login}")
    return signing.verify_rsa_sha256(base_string, signature, merchant.rsa_public_key)


def _use_nonce(store: Store, login: str, nonce: str, now: float, window: int) -> None:
    """A nonce may be used once per consumer key inside the timestamp window (behaviour section 8)."""
    with store.transaction():
        if not account_rows.use_nonce(store, login, nonce, now, forget_before=now - 2 * window):
            raise oauth_error(f"oauth_nonce {nonce} already used")


__all__ = [
    "Address",
    "SimError",
    "canonical_fields",
    "check_control",
    "check_fields",
    "check_login",
    "check_oauth",
    "resolve",
]
