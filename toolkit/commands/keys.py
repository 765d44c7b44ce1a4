"""``gatekit keys generate|check``: the merchant's RSA key pair for OAuth RSA-SHA256 (spec 5.2 rule 6).

``generate`` writes ``private-pkcs1.pem``, ``private-pkcs8.pem`` (both 0600) and ``public.pem``
(to send to the gateway's support contact); ``check`` prints a key's size and fingerprint.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from toolkit.commands.common import Subparsers, UsageError
from toolkit.keys import (
    DEFAULT_RSA_BITS,
    MIN_RSA_BITS,
    KeyFiles,
    KeyProblem,
    check_bits,
    fingerprint,
    generate_rsa_key,
    load_private_key,
    load_public_key,
    write_key_files,
)

_PEM_KINDS = (  # the PEM header that tells what a file holds
    ("BEGIN RSA PRIVATE KEY", "RSA private key (PKCS#1)"),
    ("BEGIN ENCRYPTED PRIVATE KEY", "RSA private key (PKCS#8, encrypted)"),
    ("BEGIN PRIVATE KEY", "RSA private key (PKCS#8)"),
    ("BEGIN RSA PUBLIC KEY", "RSA public key (PKCS#1)"),
    ("BEGIN PUBLIC KEY", "RSA public key (SubjectPublicKeyInfo)"),
)


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "keys",
        help="generate or check RSA keys for v4 (RSA-SHA256) operations",
        description="The merchant's RSA key pair for the operations signed with OAuth RSA-SHA256 (v4 payouts): "
        "generate one, or check a key's size and fingerprint.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    generate = actions.add_parser(
        "generate",
        help="write a new key pair as PKCS#1, PKCS#8 and public PEM",
        description="Write private-pkcs1.pem and private-pkcs8.pem (mode 0600) and public.pem, the one to send "
        "to the gateway's support contact.",
    )
    generate.add_argument("--bits", type=int, default=DEFAULT_RSA_BITS, help=f"at least {MIN_RSA_BITS}")
    generate.add_argument("--out", type=Path, required=True, help="directory for the three files")
    generate.add_argument("--passphrase-env", metavar="VAR", help="encrypt the private keys with $VAR")
    generate.add_argument("--force", action="store_true", help="overwrite existing key files")
    generate.set_defaults(handler=run_generate)
    check = actions.add_parser(
        "check",
        help="load a private or public PEM key; print its size and fingerprint",
        description="Load a private or public RSA key (PEM) and print what it is, its size and the SHA-256 "
        "fingerprint of its public key (compare it with the one the gateway has).",
    )
    check.add_argument("file", type=Path, help="the PEM file")
    check.add_argument("--passphrase-env", metavar="VAR", help="the private key's passphrase is in $VAR")
    check.set_defaults(handler=run_check)


def run_generate(args: argparse.Namespace) -> int:
    check_bits(args.bits)
    passphrase = _passphrase(args.passphrase_env)
    existing = [path.name for path in KeyFiles.in_dir(args.out) if path.exists()]
    if existing and not args.force:
        raise UsageError(f"{args.out} already holds {', '.join(existing)}; use --force to replace them")
    key = generate_rsa_key(args.bits)
    files = write_key_files(key, args.out, passphrase=passphrase.encode() if passphrase else None)
    print(f"RSA key pair, {key.key_size} bits{', private keys encrypted' if passphrase else ''}")
    print(f"  private (PKCS#1): {files.private_pkcs1}")
    print(f"  private (PKCS#8): {files.private_pkcs8}")
    print(f"  public:           {files.public}  <- send this one to the gateway's support contact")
    print(f"  SHA-256 fingerprint: {fingerprint(key)}")
    return 0


def run_check(args: argparse.Namespace) -> int:
    try:
        pem = args.file.read_bytes()
    except OSError as exc:
        raise KeyProblem(f"cannot read {args.file}: {exc.strerror or exc}") from None
    kind = next((name for header, name in _PEM_KINDS if header.encode() in pem), None)
    if kind is None:
        raise KeyProblem(f"{args.file}: not a PEM key (no BEGIN ... KEY line)")
    if "private" in kind:
        key = load_private_key(pem, _passphrase(args.passphrase_env))
        size, digest = key.key_size, fingerprint(key)
    else:
        public = load_public_key(pem)
        size, digest = public.key_size, fingerprint(public)
    print(f"{args.file}: {kind}, {size} bits")
    print(f"SHA-256 fingerprint (DER public key): {digest}")
    return 0


def _passphrase(variable: str | None) -> str | None:
    """The passphrase held by environment variable ``variable`` (never given on the command line)."""
    if variable is None:
        return None
    value = os.environ.get(variable)
    if not value:
        raise UsageError(f"--passphrase-env {variable}: the environment variable {variable} is not set")
    return value
