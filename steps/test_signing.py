"""Signing: a wrong control, a wrong OAuth signature, a stale timestamp, a replayed nonce."""

import secrets
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pytest_bdd import scenarios, when

from steps.conftest import Scene
from toolkit.certify.target import GatewayTarget
from toolkit.client import GatewayClient
from toolkit.exchange import Exchange
from toolkit.flows import Merchant
from toolkit.testdata.cards import Card, card_for

scenarios("../features/signing")


Observer = Callable[[Exchange], None]


def _client(target: GatewayTarget, observer: Observer, *, control_key: str | None = None, **kwargs: Any) -> Merchant:
    config = target.config.with_overrides(control_key=control_key)
    return Merchant(GatewayClient(config, observers=[observer], **kwargs))


@when("the merchant sends a sale of 10.42 EUR signed with a wrong control key")
def wrong_control(target: GatewayTarget, exchange_observer: Observer, card: Card, scene: Scene) -> None:
    merchant = _client(target, exchange_observer, control_key="not-the-key")
    scene.refuse(lambda: merchant.pay("sale", card, Decimal("10.42")))


@when("the merchant sends a v2 payout signed with a wrong key")
def wrong_hmac(target: GatewayTarget, exchange_observer: Observer, scene: Scene) -> None:
    merchant = _client(target, exchange_observer, control_key="not-the-key")
    scene.refuse(lambda: merchant.payout("payout", None, card_for("approved")))


@when("the merchant sends a payout check with a timestamp 10 minutes old")
def stale_timestamp(target: GatewayTarget, exchange_observer: Observer, scene: Scene) -> None:
    merchant = _client(target, exchange_observer, clock=lambda: time.time() - 600)
    scene.refuse(lambda: merchant.payout("payout_check", None, card_for("approved")))


@when("the merchant sends two payout checks with the same nonce")
def replayed_nonce(target: GatewayTarget, exchange_observer: Observer, scene: Scene) -> None:
    nonce = f"replay-{secrets.token_hex(8)}"
    merchant = _client(target, exchange_observer, nonce=lambda: nonce)
    merchant.payout("payout_check", None, card_for("approved"))
    scene.refuse(lambda: merchant.payout("payout_check", None, card_for("approved")))
