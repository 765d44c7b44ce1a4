"""requests auth hooks that sign what is actually sent (they run after the body is encoded).

``ControlAuth`` appends the ``control`` checksum computed from the encoded body (spec 5.1);
``OAuthAuth`` signs the body and URL and sets the ``Authorization`` header (spec 5.2).  Each
keeps a ``SignatureTrace`` of what it did, for debugging and for reports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import requests
from cryptography.hazmat.primitives.asymmetric import rsa

from toolkit import signing
from toolkit.masking import Secret, mask_base_string, mask_value
from toolkit.operations import AuthScheme, Operation
from toolkit.signing import Pairs
from toolkit.wire import decode_request_body, encode_form


@dataclass(frozen=True)
class SignatureTrace:
    """What was signed: the control formula parts, or the OAuth base string and signature."""

    scheme: str
    formula: str = ""
    parts: tuple[tuple[str, str], ...] = ()
    control: str = ""
    base_string: str = ""
    signature: str = ""
    header: str = ""

    def masked(self) -> SignatureTrace:
        """A copy fit for logs and reports: card data in the parts and the base string masked."""
        parts = tuple((name, mask_value(name, value)) for name, value in self.parts)
        return replace(self, parts=parts, base_string=mask_base_string(self.base_string))


def _set_body(request: requests.PreparedRequest, pairs: Pairs) -> None:
    body = encode_form(pairs).encode("utf-8")  # bytes: sent with the headers in one packet (no Nagle stall)
    request.body = body
    request.headers["Content-Length"] = str(len(body))


def _body_pairs(request: requests.PreparedRequest, fields: Pairs | None) -> list[tuple[str, str]]:
    """The pairs of the form body: ``fields`` when the hook writes the body itself, else the body decoded."""
    if fields is not None and request.body is None:
        return list(fields)
    return decode_request_body(request.body)


class ControlAuth(requests.auth.AuthBase):
    """Adds ``control`` = SHA-1 of the operation's formula over the fields in the body.

    ``strict=False`` signs even a request that misses a formula field or has a bad amount
    (``signing.control_parts``), so that the gateway's own rejection can be tested.
    ``fields``: the pairs of a request prepared without a body (``data=None``); the hook encodes
    them once, with ``control``, as the body (no encoding, decoding and encoding again).
    """

    def __init__(
        self,
        operation: Operation,
        *,
        path_id: str,
        login: str,
        control_key: Secret,
        strict: bool = True,
        fields: Pairs | None = None,
    ) -> None:
        if operation.control is None:
            raise ValueError(f"{operation.name} has no control formula")
        self.operation = operation
        self.path_id = path_id
        self.login = login
        self._key = control_key
        self.strict = strict
        self.fields = fields
        self.trace: SignatureTrace | None = None

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        formula = self.operation.control
        assert formula is not None
        pairs = [(name, value) for name, value in _body_pairs(request, self.fields) if name != "control"]
        parts = signing.control_parts(
            formula, dict(pairs), endpoint_id=self.path_id, login=self.login, strict=self.strict
        )
        control = signing.control_checksum([value for _, value in parts], self._key.reveal())
        _set_body(request, [*pairs, ("control", control)])
        self.trace = SignatureTrace("control", formula=formula.text, parts=tuple(parts), control=control)
        return request


class OAuthAuth(requests.auth.AuthBase):
    """OAuth 1.0a HMAC-SHA1 (key: control key + '&') or RSA-SHA256 (the merchant's private key).

    ``fields``: the pairs of a request prepared without a body (``data=None``): the hook encodes
    them as the body and signs them as they are (no decoding of what was just encoded).
    """

    def __init__(
        self,
        scheme: AuthScheme,
        *,
        login: str,
        control_key: Secret | None = None,
        private_key: rsa.RSAPrivateKey | None = None,
        clock: Callable[[], float],
        nonce: Callable[[], str],
        realm: str | None = None,
        fields: Pairs | None = None,
    ) -> None:
        if scheme is AuthScheme.OAUTH_HMAC_SHA1 and control_key is None:
            raise ValueError("HMAC-SHA1 needs the merchant control key")
        if scheme is AuthScheme.OAUTH_RSA_SHA256 and private_key is None:
            raise ValueError("RSA-SHA256 needs the merchant's private key")
        self.scheme = scheme
        self.login = login
        self._control_key = control_key
        self._private_key = private_key
        self.clock = clock
        self.nonce = nonce
        self.realm = realm
        self.fields = fields
        self.trace: SignatureTrace | None = None

    def sign(self, base_string: str) -> str:
        if self.scheme is AuthScheme.OAUTH_HMAC_SHA1:
            assert self._control_key is not None
            return signing.sign_hmac_sha1(base_string, self._control_key.reveal())
        assert self._private_key is not None
        return signing.sign_rsa_sha256(base_string, self._private_key)

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        params = signing.make_oauth_params(self.login, self.scheme.value, clock=self.clock, nonce=self.nonce)
        pairs = _body_pairs(request, self.fields)
        if self.fields is not None and request.body is None:
            _set_body(request, pairs)
        base_string = signing.signature_base_string(request.method or "POST", request.url or "", pairs, params)
        signature = self.sign(base_string)
        header = signing.authorization_header(params, signature, realm=self.realm)
        request.headers["Authorization"] = header
        self.trace = SignatureTrace(self.scheme.value, base_string=base_string, signature=signature, header=header)
        return request
