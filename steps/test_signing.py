"""Signing: a wrong control, a wrong OAuth signature, a stale timestamp, a replayed nonce."""

import secrets
import time
from decimal import Decimal

from pytest_bdd import scenarios, when

from toolkit.testdata.cards import Card, card_for

from .conftest import MerchantFactory, Scene

scenarios("../features/signing")


@when("the merchant sends a sale of 10.42 EUR signed with a wrong control key")
def wrong_control(merchant_with: MerchantFactory, card: Card, scene: Scene) -> None:
    merchant = merchant_with(control_key="not-the-key")
    scene.refuse(lambda: merchant.pay("sale", card, Decimal("10.42")))


@when("the merchant sends a v2 payout signed with a wrong key")
def wrong_hmac(merchant_with: MerchantFactory, scene: Scene) -> None:
    merchant = merchant_with(control_key="not-the-key")
    scene.refuse(lambda: merchant.payout("payout", None, card_for("approved")))


@when("the merchant sends a payout check with a timestamp 10 minutes old")
def stale_timestamp(merchant_with: MerchantFactory, scene: Scene) -> None:
    merchant = merchant_with(clock=lambda: time.time() - 600)
    scene.refuse(lambda: merchant.payout("payout_check", None, card_for("approved")))


@when("the merchant sends two payout checks with the same nonce")
def replayed_nonce(merchant_with: MerchantFactory, scene: Scene) -> None:
    nonce = f"replay-{secrets.token_hex(8)}"
    merchant = merchant_with(nonce=lambda: nonce)
    merchant.payout("payout_check", None, card_for("approved"))
    scene.refuse(lambda: merchant.payout("payout_check", None, card_for("approved")))
