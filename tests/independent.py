"""Signing recomputed without toolkit: plain hashlib, hmac, urllib and cryptography.

The tests compare what the client put on the wire with these, so that a bug shared by the
client and ``toolkit.signing`` cannot hide.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable
from urllib.parse import quote, urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa


def sha1_hex(concatenation: str) -> str:
    return hashlib.sha1(concatenation.encode("utf-8")).hexdigest()


def _enc(value: str) -> str:
    return quote(value, safe="~")  # RFC 3986: only unreserved characters stay


def base_string(method: str, url: str, params: Iterable[tuple[str, str]]) -> str:
    """RFC 5849 3.4.1 written out: sorted encoded pairs, the three parts encoded once more."""
    parts = urlsplit(url)
    default_port = {"http": 80, "https": 443}[parts.scheme]
    host = parts.hostname or ""
    netloc = host if parts.port in (None, default_port) else f"{host}:{parts.port}"
    normalized = f"{parts.scheme}://{netloc}{parts.path}"
    joined = "&".join(f"{n}={v}" for n, v in sorted((_enc(n), _enc(v)) for n, v in params))
    return "&".join([method.upper(), _enc(normalized), _enc(joined)])


def hmac_sha1(base: str, control_key: str) -> str:
    digest = hmac.new(f"{_enc(control_key)}&".encode(), base.encode("utf-8"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def rsa_sha256_valid(base: str, signature: str, public_pem: bytes) -> bool:
    key = serialization.load_pem_public_key(public_pem)
    assert isinstance(key, rsa.RSAPublicKey)
    try:
        key.verify(base64.b64decode(signature), base.encode("utf-8"), padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True


def control(parts: Iterable[str], control_key: str) -> str:
    """Spec 5.1: SHA-1 hex of the parts concatenated without separators, the merchant control key last."""
    return sha1_hex("".join(parts) + control_key)


def rsa_sha256_sign(base: str, private_pem: bytes) -> str:
    """Spec 5.2 rule 5: PKCS#1 v1.5 RSA-SHA256 over the UTF-8 base string, Base64-encoded."""
    key = serialization.load_pem_private_key(private_pem, password=None)
    assert isinstance(key, rsa.RSAPrivateKey)
    return base64.b64encode(key.sign(base.encode("utf-8"), padding.PKCS1v15(), hashes.SHA256())).decode("ascii")


def authorization_header(oauth: Iterable[tuple[str, str]]) -> str:
    """Spec 5.2 rule 1: ``OAuth name="value", ...`` with every value percent-encoded on its own."""
    return "OAuth " + ", ".join(f'{_enc(name)}="{_enc(value)}"' for name, value in oauth)
