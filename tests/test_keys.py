"""RSA keys: generate, refuse weak ones, write and load every format, passphrases, fingerprints."""

from __future__ import annotations

import hashlib
import inspect
import stat

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.vector_files import VECTORS
from toolkit.keys import (
    DEFAULT_RSA_BITS,
    KeyFiles,
    KeyProblem,
    fingerprint,
    generate_rsa_key,
    load_private_key,
    load_public_key,
    public_pem,
    write_key_files,
)
from toolkit.signing import sign_rsa_sha256, verify_rsa_sha256


@pytest.fixture(scope="module")
def key():
    return generate_rsa_key(2048)


def test_default_size_is_4096_bits_without_generating():
    assert DEFAULT_RSA_BITS == 4096
    assert inspect.signature(generate_rsa_key).parameters["bits"].default == 4096


@pytest.mark.parametrize("bits", [512, 1024, 2047], ids=["512", "1024", "2047"])
def test_keys_under_2048_bits_are_refused(bits):
    with pytest.raises(KeyProblem, match=f"--bits {bits} refused: the gateway requires at least 2048 bits"):
        generate_rsa_key(bits)


def test_generated_key_has_the_size_asked_for(key):
    assert key.key_size == 2048
    assert key.public_key().public_numbers().e == 65537


def test_written_files_load_back_as_the_same_key(key, tmp_path):
    files = write_key_files(key, tmp_path / "out")
    assert b"BEGIN RSA PRIVATE KEY" in files.private_pkcs1.read_bytes()
    assert b"BEGIN PRIVATE KEY" in files.private_pkcs8.read_bytes()
    assert b"BEGIN PUBLIC KEY" in files.public.read_bytes()
    numbers = key.private_numbers()
    assert load_private_key(files.private_pkcs1).private_numbers() == numbers
    assert load_private_key(files.private_pkcs8).private_numbers() == numbers
    assert load_public_key(files.public).public_numbers() == key.public_key().public_numbers()
    assert files == KeyFiles.in_dir(tmp_path / "out")
    assert [path.name for path in files] == ["private-pkcs1.pem", "private-pkcs8.pem", "public.pem"]


def test_private_files_are_readable_by_the_owner_only(key, tmp_path):
    files = write_key_files(key, tmp_path)
    for path in (files.private_pkcs1, files.private_pkcs8):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name


def test_passphrase_protected_files_need_the_right_passphrase(key, tmp_path):
    files = write_key_files(key, tmp_path, passphrase=b"correct horse")
    for path in (files.private_pkcs1, files.private_pkcs8):
        assert b"ENCRYPTED" in path.read_bytes()
        assert load_private_key(path, "correct horse").private_numbers() == key.private_numbers()
        assert load_private_key(path, b"correct horse").private_numbers() == key.private_numbers()
        with pytest.raises(KeyProblem, match="passphrase is wrong") as wrong:
            load_private_key(path, "battery staple")
        assert "battery staple" not in str(wrong.value)
        with pytest.raises(KeyProblem, match="private key"):
            load_private_key(path)


def test_a_passphrase_for_a_plain_key_is_refused(key, tmp_path):
    files = write_key_files(key, tmp_path)
    with pytest.raises(KeyProblem, match="private key"):
        load_private_key(files.private_pkcs8, "unneeded")


@pytest.mark.parametrize(
    "name",
    ["rsa-test-private-pkcs1.pem", "rsa-test-private-pkcs8.pem"],
    ids=["PKCS#1", "PKCS#8"],
)
def test_vector_keys_load_from_path_bytes_and_text(name):
    path = VECTORS / name
    from_path = load_private_key(path)
    assert load_private_key(path.read_bytes()).private_numbers() == from_path.private_numbers()
    assert load_private_key(path.read_text()).private_numbers() == from_path.private_numbers()
    assert from_path.key_size == 2048


def test_public_key_loads_as_spki_and_as_pkcs1():
    public = load_public_key(VECTORS / "rsa-test-public.pem")
    pkcs1 = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.PKCS1)
    assert b"BEGIN RSA PUBLIC KEY" in pkcs1
    assert load_public_key(pkcs1).public_numbers() == public.public_numbers()
    private = load_private_key(VECTORS / "rsa-test-private-pkcs8.pem")
    assert public.public_numbers() == private.public_key().public_numbers()


def test_a_key_signs_and_its_public_half_verifies(key):
    signature = sign_rsa_sha256("POST&x&y", key)
    assert verify_rsa_sha256("POST&x&y", signature, load_public_key(public_pem(key.public_key())))


@pytest.mark.parametrize(
    ("loader", "data", "message"),
    [
        (load_private_key, b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "not a PEM RSA private"),
        (load_public_key, b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "not a PEM RSA public"),
        (load_private_key, "/nonexistent/key.pem", "cannot read key file /nonexistent/key.pem"),
    ],
    ids=["garbage private", "garbage public", "missing file"],
)
def test_unusable_keys_are_refused_with_a_reason(loader, data, message):
    with pytest.raises(KeyProblem, match=message):
        loader(data)


def test_weak_existing_keys_are_refused_on_load():
    weak = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    pem = weak.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    with pytest.raises(KeyProblem, match="has 1024 bits; the gateway requires at least 2048"):
        load_private_key(pem)
    with pytest.raises(KeyProblem, match="public key has 1024 bits"):
        load_public_key(public_pem(weak.public_key()))


def test_fingerprint_is_sha256_of_the_der_public_key_and_same_for_both_halves(key):
    private = load_private_key(VECTORS / "rsa-test-private-pkcs8.pem")
    public = load_public_key(VECTORS / "rsa-test-public.pem")
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    expected = hashlib.sha256(der).hexdigest()
    assert fingerprint(public).replace(":", "") == expected
    assert fingerprint(private) == fingerprint(public)
    assert fingerprint(public) != fingerprint(key)
