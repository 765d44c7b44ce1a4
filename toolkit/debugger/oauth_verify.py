"""Checking an OAuth signature for the debugger: verifiers, the mistakes in key handling, and what to compare.

A signature is compared with a signature, never with a base string: for HMAC-SHA1 the debugger
computes the signature the gateway expects (it holds the control key); for RSA-SHA256 it cannot
sign, but the merchant's public key opens the signature (PKCS #1 v1.5) and shows the SHA-256 digest
it carries, which is compared with the digest of the base string the gateway computes.  A signature
that opens with the public key was made with the merchant's private key: when its digest differs,
the key pair is right and what was signed differs from what was sent (the body changed after signing).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Callable, Iterator
from urllib.parse import unquote

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from toolkit.debugger.diagnosis import Finding
from toolkit.display.views import KEY_PLACEHOLDER as KEY
from toolkit.operations import AuthScheme
from toolkit.signing import verify_hmac_sha1, verify_rsa_sha256

Verify = Callable[[str, str], bool]
NOT_OPENED = "(it does not open with the merchant's public key)"


def verifier(scheme: AuthScheme, key: str, public_key: rsa.RSAPublicKey | None) -> Verify | None:
    if scheme is AuthScheme.OAUTH_HMAC_SHA1:
        return lambda text, signature: verify_hmac_sha1(text, signature, key)
    if public_key is None:
        return None
    return lambda text, signature: verify_rsa_sha256(text, signature, public_key)


def _hmac(secret: str, text: str) -> str:
    return base64.b64encode(hmac.new(secret.encode(), text.encode(), hashlib.sha1).digest()).decode()


def other_verifiers(
    scheme: AuthScheme, key: str, public_key: rsa.RSAPublicKey | None
) -> Iterator[tuple[Finding, Verify]]:
    """(what the client did, a verifier that does the same): right base string, wrong key handling or digest."""
    if scheme is AuthScheme.OAUTH_HMAC_SHA1:

        def hmac_with(secret: str) -> Verify:
            return lambda text, signature: hmac.compare_digest(_hmac(secret, text), signature)

        why = "the HMAC-SHA1 key is the control key followed by '&' (empty token secret, spec 5.2 rule 4)"
        yield Finding("HMAC key", f"{KEY}&", KEY, why), hmac_with(key)
        why = "the key is used exactly as issued"
        yield Finding("merchant_control_key", KEY, f"{KEY} and a newline", why), hmac_with(key + "\n&")
    elif public_key is not None:

        def sha1_check(text: str, signature: str) -> bool:
            try:
                public_key.verify(base64.b64decode(signature), text.encode(), padding.PKCS1v15(), hashes.SHA1())
            except (InvalidSignature, ValueError):
                return False
            return True

        why = "RSA-SHA256 signs a SHA-256 digest (spec 5.2 rule 5)"
        yield Finding("digest", "SHA-256", "SHA-1", why), sha1_check


def signed_digest(signature: str, public_key: rsa.RSAPublicKey) -> str | None:
    """The SHA-256 digest an RSA-SHA256 signature carries (hex), or None when the public key does not open it."""
    try:
        raw = base64.b64decode(unquote(signature), validate=True)
        return public_key.recover_data_from_signature(raw, padding.PKCS1v15(), hashes.SHA256()).hex()
    except (InvalidSignature, ValueError, binascii.Error):
        return None


def comparable(
    scheme: AuthScheme, base_string: str, signature: str, key: str, public_key: rsa.RSAPublicKey | None
) -> tuple[str, str, str]:
    """(what is compared, its expected value, the value sent): two signatures, or two SHA-256 digests."""
    if scheme is AuthScheme.OAUTH_HMAC_SHA1:
        return "oauth_signature", _hmac(key + "&", base_string), unquote(signature)
    digest = hashlib.sha256(base_string.encode()).hexdigest()
    opened = signed_digest(signature, public_key) if public_key is not None else None
    return "SHA-256 digest", digest, opened or NOT_OPENED
