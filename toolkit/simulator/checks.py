"""Checks on every request, in order: endpoint, body, fields, then control or OAuth.

Each rejection says exactly what failed, e.g. "control mismatch: sale expects SHA-1(endpointId +
client_orderid + amount_in_minor_units + email + merchant_control_key)", "oauth_nonce already
used", "amount: amount 10.005 has more decimals than EUR allows (2)".  Requests that work but
deviate from the spec add conformance warnings to the journal.
"""

from __future__ import annotations

import hmac
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass

from toolkit import signing
from toolkit.fields import LEGACY_SPELLINGS
from toolkit.masking import mask_base_string
from toolkit.money import MoneyError
from toolkit.operations import AuthScheme, Operation
from toolkit.simulator.errors import SimError, control_error, endpoint_error, field_error, oauth_error
from toolkit.simulator.settings import Merchant, SimulatorSettings
from toolkit.simulator.store import Store
from toolkit.validation import request_problems

OAUTH_PARAMS = (
    "oauth_consumer_key",
    "oauth_signature_method",
    "oauth_signature",
    "oauth_timestamp",
    "oauth_nonce",
    "oauth_version",
)
MAX_TIMESTAMP_DIGITS = 12  # epoch seconds until the year 33658
# The spec itself writes client-order-id for these (sections 4.2 and 4.3): no warning there.
SPEC_SPELLS_HYPHENATED = ("upload_method_url_result", "upload_cres_result", "upload_pares_result")


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


def canonical_fields(op: Operation, pairs: list[tuple[str, str]], warnings: list[str]) -> dict[str, str]:
    """Body pairs as the catalogue names them: trimmed, legacy spellings mapped, repeats refused.

    Empty values are left out: the gateway ignores blanks, so ``amount=`` is no amount (a full
    capture or return, not a partial one of nothing), as ``toolkit.validation`` and the control
    formulas already count it.
    """
    fields: dict[str, str] = {}
    for name, value in pairs:
        if name.startswith("oauth_"):
            raise oauth_error(f"{name} belongs in the Authorization header, not in the form body (spec 5.2 rule 1)")
        canon = LEGACY_SPELLINGS.get(name, name) if name not in op.fields else name
        if canon != name and op.name not in SPEC_SPELLS_HYPHENATED:
            warnings.append(f"field {name} is a legacy spelling; the spec writes {canon}")
        if value != value.strip():
            warnings.append(f"field {canon} has leading or trailing blanks; the gateway ignores them")
        if canon in fields:
            raise field_error(f"{canon}: sent more than once")
        fields[canon] = value.strip()
    unknown = sorted(set(fields) - set(op.fields) - {"control", "login"})
    if unknown:
        warnings.append(f"fields not known to {op.name}: {', '.join(unknown)}")
    return {name: value for name, value in fields.items() if value}


def check_fields(op: Operation, fields: Mapping[str, str]) -> None:
    """The catalogue's rules, shared with the client (``toolkit.validation``)."""
    problems = request_problems(op, fields)
    if problems:
        raise field_error("; ".join(str(p) for p in problems))


def check_control(op: Operation, fields: Mapping[str, str], address: Address, warnings: list[str]) -> None:
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
    expected = signing.control_checksum([value for _, value in parts], merchant.control_key.reveal())
    if not hmac.compare_digest(expected.encode(), sent.lower().encode()):
        used = ", ".join(f"{name}={value!r}" for name, value in parts)
        raise control_error(f"control mismatch: {op.name} expects {formula.text}; the simulator used {used}")
    if sent != sent.lower():
        warnings.append("control is upper-case hex; the gateway family writes SHA-1 digests in lower case")


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
        raise oauth_error(f"Authorization header missing: {op.name} is signed with OAuth {op.auth.value}")
    try:
        params = signing.parse_authorization_header(header)
    except ValueError as exc:
        raise oauth_error(str(exc)) from None
    missing = [name for name in OAUTH_PARAMS if not params.get(name)]
    if missing:
        raise oauth_error(f"{', '.join(missing)} missing from the Authorization header (spec 5.2)")
    if params["oauth_version"] != "1.0":
        raise oauth_error(f"oauth_version must be 1.0, got {params['oauth_version']}")
    if params["oauth_signature_method"] != op.auth.value:
        raise oauth_error(
            f"{op.name} expects oauth_signature_method={op.auth.value}, got {params['oauth_signature_method']}"
        )
    merchant = address.merchant
    if params["oauth_consumer_key"] != merchant.login:
        raise oauth_error(
            f"oauth_consumer_key {params['oauth_consumer_key']} is not the login of endpoint {address.path_id}"
        )
    _check_timestamp(params["oauth_timestamp"], now, window)
    oauth = signing.oauth_params_from_header(params)
    base_string = signing.signature_base_string("POST", url, pairs, oauth)
    if not _verify(op.auth, base_string, params["oauth_signature"], merchant):
        shown = mask_base_string(base_string)
        raise oauth_error(
            f"oauth_signature does not verify with {op.auth.value}; the simulator's signature base "
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
        store.execute("DELETE FROM nonces WHERE ts<?", (now - 2 * window,))
        try:
            store.execute("INSERT INTO nonces (login, nonce, ts) VALUES (?, ?, ?)", (login, nonce, now))
        except sqlite3.IntegrityError:
            raise oauth_error(f"oauth_nonce {nonce} already used") from None


__all__ = ["Address", "SimError", "canonical_fields", "check_control", "check_fields", "check_oauth", "resolve"]
