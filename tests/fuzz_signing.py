"""The fuzz suite's signing hook: turns a schemathesis case into a request the simulator takes seriously.

Generic over the catalogue (``toolkit.operations``): the path addresses the demo merchant's real
endpoint or group most of the time; identifier fields take real order ids and card references
(``OrderPool``); ``login`` is the demo login; ``control`` follows the operation's formula; an OAuth
operation gets a valid ``Authorization`` header (HMAC-SHA1 or RSA-SHA256, as ``Operation.auth`` says).
Each of these happens with a probability, so that unsigned, wrongly addressed and unknown-id
requests keep coming too.  Random choices come from ``random``, which Hypothesis seeds per example.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolkit import demo, signing
from toolkit.client import GatewayClient
from toolkit.keys import load_private_key
from toolkit.money import MoneyError
from toolkit.operations import AuthScheme, Operation, get_operation
from toolkit.testdata import payout_fields, preauth_fields, sale_fields
from toolkit.wire import MEDIA_TYPE

REAL_ADDRESS = 0.85
REAL_IDS = 0.75
SIGNED = 0.9
JSON_ANSWERS = 0.8  # the rest ask for nothing and get the legacy key=value form
CARD_REF_FIELDS = (
    "cardrefid",
    "sending-card-ref-id",
    "card_recurring_payment_id",
    "destination_card_recurring_payment_id",
)
ORDER_FIELDS = ("orderid",)
CLIENT_ORDER_FIELDS = ("client_orderid", "client-order-id")


@dataclass
class OrderPool:
    """Real orders of the demo merchant: (orderid, client_orderid) pairs and card references."""

    orders: list[tuple[str, str]] = field(default_factory=list)
    card_refs: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, client: GatewayClient, count: int = 3) -> OrderPool:
        pool = cls()
        for make in (sale_fields, preauth_fields, payout_fields):
            for _ in range(count):
                ack = client.call(make.__name__.removesuffix("_fields"), make())
                pool.orders.append((ack.orderid, ack.client_orderid))  # type: ignore[attr-defined]
        for orderid, client_orderid in pool.orders[:count]:
            client.wait_for_final_status(orderid=orderid, client_orderid=client_orderid)
            ref = client.create_card_ref(client_orderid=client_orderid, orderid=orderid)
            pool.card_refs.append(ref.card_ref_id)
        return pool


@dataclass
class Signed:
    """What to send: the path parameters, the body, and the headers to add."""

    path_parameters: dict[str, Any]
    body: Any
    headers: dict[str, str]


def operation_of(operation_id: str) -> Operation:
    return get_operation(operation_id.removesuffix("_group"))


def sign_case(
    operation_id: str, path_parameters: Mapping[str, Any], body: Any, base_url: str, pool: OrderPool
) -> Signed:
    op, by_group = operation_of(operation_id), operation_id.endswith("_group")
    params = dict(path_parameters)
    name = "endpointGroupId" if by_group else "endpointId"
    if random.random() < REAL_ADDRESS:
        params[name] = int(demo.ENDPOINT_GROUP_ID if by_group else demo.ENDPOINT_ID)
    headers = {"Accept": MEDIA_TYPE} if random.random() < JSON_ANSWERS else {}
    if not isinstance(body, dict) or not all(isinstance(v, str) for v in body.values()):
        return Signed(params, body, headers)  # a malformed body: sent as generated, unsigned
    fields = _with_real_ids(op, dict(body), pool)
    path_id = str(params[name])
    if random.random() < SIGNED:
        if op.auth is AuthScheme.CONTROL:
            _add_control(op, fields, path_id)
        elif op.auth.is_oauth:
            url = base_url + (op.group_path if by_group else op.path).replace("{" + name + "}", path_id)
            headers["Authorization"] = _oauth_header(op, url, fields)
    return Signed(params, fields, headers)


def _with_real_ids(op: Operation, fields: dict[str, str], pool: OrderPool) -> dict[str, str]:
    known = set(op.fields)
    if "login" in known or "login" in fields:
        fields["login"] = demo.LOGIN
    if random.random() >= REAL_IDS:
        return fields
    orderid, client_orderid = random.choice(pool.orders)
    for name in ORDER_FIELDS:
        if name in known:
            fields[name] = orderid
    for name in CLIENT_ORDER_FIELDS:
        if name in fields and any(order in known for order in ORDER_FIELDS):
            fields[name] = client_orderid
    for name in CARD_REF_FIELDS:
        if name in known and pool.card_refs:
            fields[name] = random.choice(pool.card_refs)
    return fields


def _add_control(op: Operation, fields: dict[str, str], path_id: str) -> None:
    with contextlib.suppress(KeyError, MoneyError, ValueError):  # a part is missing or not an amount
        fields["control"] = signing.control_for(
            op, fields, endpoint_id=path_id, login=demo.LOGIN, control_key=demo.CONTROL_KEY
        )


def _oauth_header(op: Operation, url: str, fields: Mapping[str, str]) -> str:
    oauth = signing.make_oauth_params(demo.LOGIN, op.auth.value)
    base_string = signing.signature_base_string("POST", url, list(fields.items()), oauth)
    if op.auth is AuthScheme.OAUTH_HMAC_SHA1:
        signature = signing.sign_hmac_sha1(base_string, demo.CONTROL_KEY)
    else:
        signature = signing.sign_rsa_sha256(base_string, _demo_private_key())
    return signing.authorization_header(oauth, signature)


_KEYS: dict[str, Any] = {}


def _demo_private_key() -> Any:
    if "demo" not in _KEYS:
        _KEYS["demo"] = load_private_key(demo.private_key_pem())
    return _KEYS["demo"]
