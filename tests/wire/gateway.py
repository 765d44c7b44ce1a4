"""Hand-built gateway requests: signed by ``tests/independent.py``, sent with plain ``requests``.

Nothing here imports gatekit's catalogue, fields, validation, signing, client or wire modules: the
requests are built from ``tests/wire/table.py`` and the answers parsed by the rules of behaviour
section 2 (JSON with ``Accept: application/vnd.pay+json``, the legacy ``key=value\\n&`` form without).
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from urllib.parse import unquote_plus, urlencode

import requests

from tests import independent
from tests.wire.table import ENDPOINT, Wire

# The documented demo merchant of the simulator (README; toolkit/data holds its RSA pair).
LOGIN = "gatekit-demo"
CONTROL_KEY = "DEMO-CONTROL-KEY-5F2C7A19-0B4D"
ENDPOINT_ID = "1001"
GROUP_ID = "2001"
PRIVATE_KEY = Path(__file__).resolve().parents[2] / "toolkit" / "data" / "demo-private-pkcs8.pem"
JSON_TYPE = "application/vnd.pay+json"
FORM_TYPE = "application/x-www-form-urlencoded"
ERROR_TYPES = ("validation-error", "error")


def parse_legacy(text: str) -> dict[str, str]:
    """``key=value\\n&key=value\\n``: url-encoded pairs joined by ``&``, the trailing newline stripped."""
    pairs = (piece.partition("=") for piece in text.split("&") if piece.strip())
    return {unquote_plus(name).strip(): unquote_plus(value).rstrip("\n") for name, _, value in pairs}


@dataclass(frozen=True)
class Answer:
    """One gateway answer as it came off the socket, with its body parsed by the documented rules."""

    http_status: int
    content_type: str
    raw: str
    fields: dict[str, str]

    @classmethod
    def of(cls, response: requests.Response) -> Answer:
        raw = response.text
        if raw.lstrip().startswith("{"):
            fields = {name: "" if value is None else str(value) for name, value in json.loads(raw).items()}
        else:
            fields = parse_legacy(raw)
        return cls(response.status_code, response.headers.get("content-type", ""), raw, fields)

    @property
    def type(self) -> str:
        return self.fields.get("type", "").lower()

    @property
    def message(self) -> str:
        return self.fields.get("error-message", "")

    def __getitem__(self, name: str) -> str:
        return self.fields[name]

    def describe(self) -> str:
        return f"HTTP {self.http_status} {self.content_type}: {self.raw[:600]}"


def minor_units(amount: str) -> str:
    """Behaviour 7: the control carries the amount in minor units (EUR: 10.42 -> 1042)."""
    return str(int((Decimal(amount) * 100).to_integral_value()))


def control_for(wire: Wire, fields: Mapping[str, str], *, path_id: str, login: str, key: str) -> str:
    """The control of ``wire`` over the fields as sent: a part whose field is not sent counts as empty."""
    parts = []
    for part in wire.control:
        if part == ENDPOINT:
            parts.append(path_id)
        elif part == "login":
            parts.append(login)
        elif part == "amount":
            parts.append(minor_units(fields["amount"]) if fields.get("amount") else "")
        else:
            parts.append(fields.get(part, ""))
    return independent.control(parts, key)


def names_field(message: str, name: str) -> bool:
    """True when ``message`` names ``name`` as a whole word (``orderid`` is not found in ``client_orderid``)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", message) is not None


class Gateway:
    """Sends hand-built requests for one merchant to ``base_url`` (the simulator's ``.../paynet``)."""

    def __init__(
        self,
        base_url: str,
        *,
        login: str = LOGIN,
        key: str = CONTROL_KEY,
        endpoint_id: str = ENDPOINT_ID,
        private_pem: bytes | None = None,
    ) -> None:
        self.base_url = base_url
        self.login = login
        self.key = key
        self.endpoint_id = endpoint_id
        self.private_pem = private_pem if private_pem is not None else PRIVATE_KEY.read_bytes()
        self.session = requests.Session()

    def close(self) -> None:
        self.session.close()

    def url(self, wire: Wire, path_id: str | None = None, *, group: bool = False) -> str:
        """The operation's address: by endpoint, or by endpoint group (``.../group/{id}``, behaviour 1)."""
        path = wire.group_path if group else wire.path
        return self.base_url + path.format(endpointId=path_id or self.endpoint_id)

    def with_control(self, wire: Wire, fields: Mapping[str, str], *, path_id: str | None = None) -> dict[str, str]:
        """``fields`` plus ``control`` (for control-signed operations), computed over the fields as given."""
        if wire.auth != "control":
            return dict(fields)
        signed = control_for(wire, fields, path_id=path_id or self.endpoint_id, login=self.login, key=self.key)
        return {**fields, "control": signed}

    def post(
        self,
        wire: Wire,
        fields: Mapping[str, str],
        *,
        json_mode: bool = True,
        path_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        group: bool = False,
    ) -> Answer:
        """POST exactly ``fields`` (form-encoded, in the given order); OAuth operations are signed here."""
        url = self.url(wire, path_id, group=group)
        sent = {"Content-Type": FORM_TYPE, **({"Accept": JSON_TYPE} if json_mode else {})}
        if wire.auth in ("HMAC-SHA1", "RSA-SHA256"):
            sent["Authorization"] = self.authorization(wire.auth, url, fields)
        sent.update(headers or {})  # a test's own headers win (e.g. a broken Authorization)
        response = self.session.post(url, data=urlencode(list(fields.items())), headers=sent, timeout=30)
        return Answer.of(response)

    def authorization(self, method: str, url: str, fields: Mapping[str, str]) -> str:
        """Spec 5.2: the five oauth_* parameters signed with the body, the signature added, all in the header."""
        oauth = [
            ("oauth_consumer_key", self.login),
            ("oauth_nonce", secrets.token_hex(12)),
            ("oauth_signature_method", method),
            ("oauth_timestamp", str(int(time.time()))),
            ("oauth_version", "1.0"),
        ]
        base = independent.base_string("POST", url, [*fields.items(), *oauth])
        if method == "HMAC-SHA1":
            signature = independent.hmac_sha1(base, self.key)
        else:
            signature = independent.rsa_sha256_sign(base, self.private_pem)
        return independent.authorization_header([*oauth, ("oauth_signature", signature)])
