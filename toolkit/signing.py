"""Pure signing functions: control checksums (spec 5.1) and OAuth 1.0a (spec 5.2).

Strings in, string out.  Nonce and clock are parameters, so every result is exact and testable.
A ``verify_*`` stands beside every ``sign_*``; secrets are compared with ``hmac.compare_digest``.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import secrets
import time
from binascii import b2a_base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from oauthlib.oauth1.rfc5849 import signature as rfc5849

from toolkit.money import MoneyError, to_minor_units
from toolkit.operations import ENDPOINT_ID, LOGIN, ControlFormula, Operation

Pairs = Sequence[tuple[str, str]]
_sha1 = hashlib.sha1
# The RSA scheme's padding and hash: descriptions without state, made once rather than per signature.
_PKCS1V15 = padding.PKCS1v15()
_SHA256 = hashes.SHA256()

# --- 5.1 Control checksum ---------------------------------------------------------------------


def control_checksum(parts: Sequence[str], control_key: str) -> str:
    """SHA-1 of the parts concatenated without separators, the control key last; lowercase hex."""
    return _sha1(("".join(parts) + control_key).encode()).hexdigest()  # UTF-8


def control_parts(
    formula: ControlFormula, fields: Mapping[str, str], *, endpoint_id: str, login: str, strict: bool = True
) -> list[tuple[str, str]]:
    """The (name, value) parts of a formula for these fields, in order, without the key.

    ``endpointId`` is whichever id is in the path (behaviour section 1); ``amount`` is in minor
    units of ``currency`` (spec 2.2); an optional part whose field is absent is the empty string.
    Raises KeyError naming a required field that is missing, MoneyError for a bad amount.
    With ``strict=False`` nothing is raised: a missing part is the empty string and an amount
    that has no minor units is taken as sent (to let the gateway itself reject such a request).
    """
    parts: list[tuple[str, str]] = []
    for part in formula.parts:
        if part == ENDPOINT_ID:
            parts.append((part, str(endpoint_id)))
            continue
        if part == LOGIN:
            parts.append((part, login))
            continue
        value = _stripped(fields, part)  # (only the formula's fields: a sale sends many more)
        if value == "":
            if strict and part not in formula.optional:
                raise KeyError(part)
            parts.append((part, ""))
        elif part == "amount":
            parts.append((part, _minor_units_part(value, _stripped(fields, "currency"), strict)))
        else:
            parts.append((part, value))
    return parts


def _stripped(fields: Mapping[str, str], name: str) -> str:
    value = fields.get(name)
    return "" if value is None else str(value).strip()


def _minor_units_part(amount: str, currency: str, strict: bool) -> str:
    try:
        return str(to_minor_units(amount, currency))
    except MoneyError:
        if strict:
            raise
        return amount


def control_for(
    operation: Operation, fields: Mapping[str, str], *, endpoint_id: str, login: str, control_key: str
) -> str:
    """The ``control`` value of a request to ``operation`` carrying ``fields``."""
    if operation.control is None:
        raise ValueError(f"{operation.name} is not signed with a control checksum ({operation.auth})")
    parts = control_parts(operation.control, fields, endpoint_id=endpoint_id, login=login)
    return control_checksum([value for _, value in parts], control_key)


def verify_control(
    operation: Operation, fields: Mapping[str, str], *, endpoint_id: str, login: str, control_key: str
) -> bool:
    """True when ``fields['control']`` is the checksum the gateway expects (case-insensitive hex)."""
    expected = control_for(operation, fields, endpoint_id=endpoint_id, login=login, control_key=control_key)
    return hmac.compare_digest(expected, str(fields.get("control", "")).strip().lower())


def callback_control(status: str, orderid: str, client_orderid: str, control_key: str) -> str:
    """Control of a server callback or payer redirect: SHA-1(status + orderid + client_orderid + key)."""
    return control_checksum([status, orderid, client_orderid], control_key)


def verify_callback_control(params: Mapping[str, str], control_key: str) -> bool:
    """Verify the ``control`` of callback or redirect parameters (behaviour sections 4 and 5).  The merchant's order
    id is ``client_orderid``, or ``merchant_order`` where only that is sent (the Hosted Fields return after 3-D
    Secure: hosted-fields.md section 8, the same formula)."""
    merchant_order = params.get("client_orderid") or params.get("merchant_order", "")
    expected = callback_control(params.get("status", ""), params.get("orderid", ""), merchant_order, control_key)
    return hmac.compare_digest(expected, params.get("control", "").strip().lower())


# --- 5.2 OAuth 1.0a -----------------------------------------------------------------------------


@dataclass(frozen=True)
class OAuthParams:
    """The five signed oauth_* parameters (spec 5.2); the signature is added by the header."""

    consumer_key: str
    signature_method: str
    timestamp: str
    nonce: str
    version: str = "1.0"

    def pairs(self) -> list[tuple[str, str]]:
        return [
            ("oauth_consumer_key", self.consumer_key),
            ("oauth_nonce", self.nonce),
            ("oauth_signature_method", self.signature_method),
            ("oauth_timestamp", self.timestamp),
            ("oauth_version", self.version),
        ]


def new_nonce() -> str:
    """A unique random string for ``oauth_nonce``."""
    return secrets.token_urlsafe(16)


def make_oauth_params(
    consumer_key: str,
    signature_method: str,
    *,
    clock: Callable[[], float] = time.time,
    nonce: Callable[[], str] = new_nonce,
) -> OAuthParams:
    """Fresh parameters with the injected clock and nonce source."""
    return OAuthParams(consumer_key, signature_method, str(int(clock())), nonce())


def signature_base_string(http_method: str, url: str, body: Pairs, oauth: OAuthParams) -> str:
    """RFC 5849 section 3.4.1: ``METHOD&url&params``, each part percent-encoded once.

    Body parameters and the oauth parameters (not ``oauth_signature``) are RFC 3986 encoded,
    sorted and joined; empty values take part; default ports are dropped from the URL.
    """
    params = [*body, *oauth.pairs()]
    normalized = rfc5849.normalize_parameters(params)
    return str(rfc5849.signature_base_string(http_method.upper(), rfc5849.base_string_uri(url), normalized))


def sign_hmac_sha1(base_string: str, control_key: str) -> str:
    """HMAC-SHA1 with key ``control_key&`` (empty token secret), Base64 (spec 5.2 rule 4, RFC 5849 3.4.2)."""
    digest = hmac.digest(_hmac_key(control_key), base_string.encode(), "sha1")  # one call into OpenSSL
    return b2a_base64(digest, newline=False).decode("ascii")  # what base64.b64encode does, one call less


@functools.lru_cache(maxsize=8)
def _hmac_key(control_key: str) -> bytes:
    """The HMAC key ``control_key&`` as UTF-8: the RFC encodes the secret (a control key is unreserved
    characters); worked out once per key."""
    return f"{_encode(control_key)}&".encode()


def verify_hmac_sha1(base_string: str, signature: str, control_key: str) -> bool:
    return hmac.compare_digest(sign_hmac_sha1(base_string, control_key), signature)


def sign_rsa_sha256(base_string: str, private_key: rsa.RSAPrivateKey) -> str:
    """RSASSA-PKCS1-v1_5 with SHA-256 over the UTF-8 base string, Base64."""
    raw = private_key.sign(base_string.encode(), _PKCS1V15, _SHA256)
    return b2a_base64(raw, newline=False).decode("ascii")


def verify_rsa_sha256(base_string: str, signature: str, public_key: rsa.RSAPublicKey) -> bool:
    try:
        raw = base64.b64decode(signature, validate=True)
        public_key.verify(raw, base_string.encode("utf-8"), _PKCS1V15, _SHA256)
    except (InvalidSignature, ValueError):
        return False
    return True


def _encode(value: str) -> str:
    """RFC 3986 percent-encoding: unreserved characters only stay as they are."""
    return quote(value, safe="~")


def authorization_header(oauth: OAuthParams, signature: str, *, realm: str | None = None) -> str:
    """``OAuth realm="...", oauth_consumer_key="...", ..., oauth_signature="..."`` (values encoded)."""
    pairs = [*oauth.pairs(), ("oauth_signature", signature)]
    items = ([f'realm="{_encode(realm)}"'] if realm is not None else []) + [
        f'{name}="{_encode(value)}"' for name, value in pairs
    ]
    return "OAuth " + ", ".join(items)


def parse_authorization_header(header: str) -> dict[str, str]:
    """Parse an ``OAuth`` header into decoded parameters, in any order, ``realm`` included if sent.

    Raises ValueError naming what is malformed.
    """
    scheme, _, rest = header.strip().partition(" ")
    if scheme.lower() != "oauth":
        raise ValueError("Authorization header does not start with 'OAuth '")
    params: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        name, sep, value = item.partition("=")
        if not sep or len(value) < 2 or not (value.startswith('"') and value.endswith('"')):
            raise ValueError(f'Authorization header item {name.strip()!r} is not name="value"')
        if name.strip() in params:
            raise ValueError(f"Authorization header repeats {name.strip()!r}")
        params[name.strip()] = unquote(value[1:-1])
    return params


def oauth_params_from_header(params: Mapping[str, str]) -> OAuthParams:
    """The signed parameters of a parsed header; KeyError names a missing one."""
    return OAuthParams(
        consumer_key=params["oauth_consumer_key"],
        signature_method=params["oauth_signature_method"],
        timestamp=params["oauth_timestamp"],
        nonce=params["oauth_nonce"],
        version=params["oauth_version"],
    )
