"""The signing debugger: why does the gateway refuse this ``control`` or this OAuth signature?

    diagnose("sale", body, endpoint_id="1001", login="acme", control_key=key)
    diagnose("payout", body, authorization=header, url="https://gw.example/paynet/api/v2/payout/1001",
             login="acme", control_key=key)
    diagnose("capture", body, config=session.config)        # login, key, ids and URL from a profile

It recomputes what the gateway expects (spec 5.1 and 5.2, behaviour sections 1, 7 and 8), compares
it with what was sent and, when they differ, tries the mistakes client code makes, one at a time,
until one reproduces the value that was sent: amount in major units, parts in another order, another
endpoint id, the formula of another operation, '+' for spaces, an empty parameter left out, another
URL or port, a key with a trailing newline...  When none does, the key itself is the suspect.
Card data is masked in every result; the control key is never part of one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cryptography.hazmat.primitives.asymmetric import rsa

from toolkit.config import GatewayConfig
from toolkit.debugger.control_check import diagnose_control
from toolkit.debugger.diagnosis import Diagnosis, Finding, body_pairs
from toolkit.debugger.oauth_check import diagnose_oauth
from toolkit.keys import load_public_key
from toolkit.masking import Secret
from toolkit.operations import AuthScheme, Operation, get_operation

__all__ = ["Diagnosis", "Finding", "diagnose"]


def _public_key(
    private_key: rsa.RSAPrivateKey | None, public_key: rsa.RSAPublicKey | bytes | str | None
) -> rsa.RSAPublicKey | None:
    if public_key is None:
        return private_key.public_key() if private_key is not None else None
    return public_key if isinstance(public_key, rsa.RSAPublicKey) else load_public_key(public_key)


def diagnose(
    operation: str | Operation,
    body: str | bytes | Mapping[str, str] | Sequence[tuple[str, str]],
    *,
    authorization: str | None = None,
    url: str | None = None,
    endpoint_id: str | None = None,
    group_id: str | None = None,
    login: str | None = None,
    control_key: str | Secret | None = None,
    private_key: rsa.RSAPrivateKey | None = None,
    public_key: rsa.RSAPublicKey | bytes | str | None = None,
    config: GatewayConfig | None = None,
    now: float | None = None,
) -> Diagnosis:
    """Recompute the signature of a pasted request and say which part differs, and why.

    ``endpoint_id`` is the merchant's endpoint; ``url`` (when given) is where the request went, and
    its id is the one the gateway uses.  ``config`` fills login, key, ids, the RSA key and the URL.
    ``now`` (epoch seconds) also checks the OAuth timestamp window (300 s, behaviour section 8).
    ``public_key`` (RSA-SHA256) is a key, PEM text or a PEM file (``toolkit.keys.load_public_key``).
    """
    op = operation if isinstance(operation, Operation) else get_operation(operation)
    if config is not None:
        login = login or config.login
        control_key = control_key or config.control_key
        endpoint_id = endpoint_id or config.endpoint_id
        group_id = group_id or config.endpoint_group_id
        if url is None and endpoint_id:
            url = config.base_url + op.url_path(endpoint_id=endpoint_id)
        if private_key is None and public_key is None and op.auth is AuthScheme.OAUTH_RSA_SHA256:
            private_key = config.private_key
    if not login:
        raise ValueError("diagnose needs the merchant login (login=... or config=...)")
    key = control_key.reveal() if isinstance(control_key, Secret) else (control_key or "")
    pairs = body_pairs(body)
    if op.auth is AuthScheme.CONTROL:
        return diagnose_control(op, pairs, endpoint_id=endpoint_id, group_id=group_id, url=url, login=login, key=key)
    if op.auth.is_oauth:
        if url is None:
            raise ValueError(f"{op.name} is signed with OAuth: give the URL the request was sent to (url=...)")
        raw = body if isinstance(body, str) else None
        return diagnose_oauth(
            op,
            pairs,
            raw,
            authorization=authorization,
            url=url,
            login=login,
            key=key,
            public_key=_public_key(private_key, public_key),
            group_id=group_id,
            now=now,
        )
    return Diagnosis(op.name, op.auth.value, True, f"{op.name} is not signed (spec: no control formula shown)")
