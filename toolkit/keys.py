"""RSA key pairs for OAuth RSA-SHA256 (spec 5.2 rule 6).

Generate (4096 bits by default, never under 2048), write PKCS#1 and PKCS#8 private PEM files and
the public key, load PKCS#1, PKCS#8 and passphrase-protected PEM.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

MIN_RSA_BITS = 2048  # spec section 8
DEFAULT_RSA_BITS = 4096


class KeyProblem(ValueError):
    """A key that cannot be used: too short, unreadable, wrong passphrase, not RSA."""


def check_strength(key: rsa.RSAPrivateKey | rsa.RSAPublicKey, where: str = "RSA key") -> None:
    if key.key_size < MIN_RSA_BITS:
        raise KeyProblem(f"{where} has {key.key_size} bits; the gateway requires at least {MIN_RSA_BITS}")


def check_bits(bits: int) -> None:
    """Refuse a key size under the spec's minimum (section 8) before any work is done."""
    if bits < MIN_RSA_BITS:
        raise KeyProblem(f"--bits {bits} refused: the gateway requires at least {MIN_RSA_BITS} bits")


def generate_rsa_key(bits: int = DEFAULT_RSA_BITS) -> rsa.RSAPrivateKey:
    check_bits(bits)
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


@dataclass(frozen=True)
class KeyFiles:
    """Where ``write_key_files`` puts the pair."""

    private_pkcs1: Path
    private_pkcs8: Path
    public: Path

    @classmethod
    def in_dir(cls, out_dir: Path) -> KeyFiles:
        """``private-pkcs1.pem``, ``private-pkcs8.pem`` and ``public.pem`` in ``out_dir``."""
        return cls(out_dir / "private-pkcs1.pem", out_dir / "private-pkcs8.pem", out_dir / "public.pem")

    def __iter__(self) -> Iterator[Path]:
        return iter((self.private_pkcs1, self.private_pkcs8, self.public))


def write_key_files(key: rsa.RSAPrivateKey, out_dir: Path, *, passphrase: bytes | None = None) -> KeyFiles:
    """Write ``private-pkcs1.pem``, ``private-pkcs8.pem`` (0600) and ``public.pem`` into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase) if passphrase else serialization.NoEncryption()
    )
    files = KeyFiles.in_dir(out_dir)
    for path, fmt in (
        (files.private_pkcs1, serialization.PrivateFormat.TraditionalOpenSSL),
        (files.private_pkcs8, serialization.PrivateFormat.PKCS8),
    ):
        _write_private(path, key.private_bytes(serialization.Encoding.PEM, fmt, encryption))
    files.public.write_bytes(public_pem(key.public_key()))
    return files


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def public_pem(key: rsa.RSAPublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def fingerprint(key: rsa.RSAPrivateKey | rsa.RSAPublicKey) -> str:
    """SHA-256 of the DER SubjectPublicKeyInfo, hex in colon-separated pairs (same for both halves)."""
    public = key.public_key() if isinstance(key, rsa.RSAPrivateKey) else key
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return ":".join(f"{byte:02x}" for byte in hashlib.sha256(der).digest())


def load_private_key(data: bytes | str | Path, passphrase: bytes | str | None = None) -> rsa.RSAPrivateKey:
    """Load a PKCS#1 or PKCS#8 PEM private key (a path or the PEM bytes), encrypted or not."""
    pem = _read(data)
    secret = passphrase.encode() if isinstance(passphrase, str) else passphrase
    try:
        key = serialization.load_pem_private_key(pem, password=secret or None)
    except TypeError as exc:  # encrypted without passphrase, or a passphrase for a plain key
        raise KeyProblem(f"private key: {exc}") from None
    except ValueError:
        raise KeyProblem("private key: not a PEM RSA private key, or the passphrase is wrong") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise KeyProblem("private key: not an RSA key")
    check_strength(key, "private key")
    return key


def load_public_key(data: bytes | str | Path) -> rsa.RSAPublicKey:
    """Load an SPKI (``BEGIN PUBLIC KEY``) or PKCS#1 (``BEGIN RSA PUBLIC KEY``) PEM public key."""
    pem = _read(data)
    try:
        key = serialization.load_pem_public_key(pem)
    except ValueError:
        raise KeyProblem("public key: not a PEM RSA public key") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise KeyProblem("public key: not an RSA key")
    check_strength(key, "public key")
    return key


def _read(data: bytes | str | Path) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, str) and data.lstrip().startswith("-----BEGIN"):
        return data.encode("ascii")
    try:
        return Path(data).read_bytes()
    except OSError as exc:
        raise KeyProblem(f"cannot read key file {data}: {exc.strerror or exc}") from None
