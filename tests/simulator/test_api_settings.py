"""Simulator settings from TOML ([simulator] and [[merchant]] tables), and a simulator started with them:
merchants with their own keys, endpoints, balance and currency; latency; the OAuth timestamp window.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from toolkit import demo
from toolkit.client import GatewayClient
from toolkit.config import GatewayConfig
from toolkit.errors import AuthenticationError, ValidationError
from toolkit.keys import public_pem
from toolkit.masking import Secret
from toolkit.models import Status
from toolkit.simulator import SimulatorServer, load_settings
from toolkit.simulator.settings import SettingsError
from toolkit.testdata import payout_fields, preauth_fields, sale_fields

VECTORS = Path(__file__).parent.parent / "vectors"
SETTINGS = """\
[simulator]
latency = 0.25
timestamp_window = 60
callback_retry = [1, 2.5]

[[merchant]]
login = "acme"
control_key = "ACME-CONTROL-KEY"
endpoint_ids = [51494, 51495]
endpoint_group_ids = [7001]
rsa_public_key_file = "keys/public.pem"
payout_balance = "250.00"
currency = "USD"

[[merchant]]
login = "globex"
control_key = "GLOBEX-CONTROL-KEY"
endpoint_ids = ["51500"]
"""


@pytest.fixture(scope="module")
def settings_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("settings")
    (folder / "keys").mkdir()
    (folder / "keys" / "public.pem").write_bytes((VECTORS / "rsa-test-public.pem").read_bytes())
    path = folder / "sim.toml"
    path.write_text(SETTINGS)
    return path


@pytest.fixture(scope="module")
def server(settings_file: Path) -> Iterator[SimulatorServer]:
    with SimulatorServer(load_settings(settings_file)) as running:
        yield running


@pytest.fixture(scope="module")
def acme(server: SimulatorServer) -> Iterator[GatewayClient]:
    config = GatewayConfig(
        server.base_url,
        "acme",
        Secret("ACME-CONTROL-KEY"),
        endpoint_id="51494",
        endpoint_group_id="7001",
        private_key_file=VECTORS / "rsa-test-private-pkcs8.pem",
    )
    with GatewayClient(config) as client:
        yield client


@pytest.fixture(scope="module")
def globex(server: SimulatorServer) -> Iterator[GatewayClient]:
    with GatewayClient(GatewayConfig(server.base_url, "globex", Secret("GLOBEX-CONTROL-KEY"), "51500")) as client:
        yield client


def test_the_file_is_read_as_written(settings_file: Path) -> None:
    settings = load_settings(settings_file)
    assert (settings.latency, settings.timestamp_window, settings.callback_retry) == (0.25, 60, (1.0, 2.5))
    acme, globex = settings.merchants
    assert (acme.login, acme.control_key, acme.endpoint_ids, acme.endpoint_group_ids) == (
        "acme",
        Secret("ACME-CONTROL-KEY"),
        ("51494", "51495"),
        ("7001",),
    )
    assert (acme.payout_balance, acme.currency, acme.rsa_public_key is not None) == (Decimal("250.00"), "USD", True)
    assert (globex.endpoint_ids, globex.payout_balance, globex.currency, globex.rsa_public_key) == (
        ("51500",),
        Decimal("0"),
        "EUR",
        None,
    )
    assert "ACME-CONTROL-KEY" not in repr(settings)


def test_without_a_file_or_merchants_the_demo_merchant_exists(tmp_path: Path) -> None:
    empty = tmp_path / "empty.toml"
    empty.write_text("[simulator]\nlatency = 0\n")
    for settings in (load_settings(None), load_settings(empty)):
        assert [(m.login, m.endpoint_ids) for m in settings.merchants] == [(demo.LOGIN, (demo.ENDPOINT_ID,))]


def test_with_latency_the_status_is_processing_first_then_final(acme: GatewayClient) -> None:
    ack = acme.sale(sale_fields())
    assert acme.status(client_orderid=ack.client_orderid).status is Status.PROCESSING
    assert acme.wait_for_final_status(ack).status is Status.APPROVED


def test_with_latency_follow_ups_are_processing_first_too(acme: GatewayClient) -> None:
    preauth = acme.wait_for_final_status(acme.preauth(preauth_fields()))
    capture = acme.capture(client_orderid=preauth.client_orderid, orderid=preauth.orderid)
    assert acme.status(client_orderid=capture.client_orderid, orderid=capture.orderid).status is Status.PROCESSING
    assert acme.wait_for_final_status(capture).status is Status.APPROVED


def test_each_merchant_sees_only_its_own_orders(acme: GatewayClient, globex: GatewayClient) -> None:
    ack = acme.sale(sale_fields(), endpoint_id="51495")
    with pytest.raises(ValidationError, match=f"orderid {ack.orderid} is unknown for this merchant"):
        globex.status(client_orderid=ack.client_orderid, orderid=ack.orderid)
    with pytest.raises(ValidationError, match="control mismatch: sale expects"):
        globex.sale(sale_fields(), endpoint_id="51494")  # acme's endpoint, globex's key


def test_a_group_of_a_configured_merchant(acme: GatewayClient) -> None:
    assert acme.sale(sale_fields(), use_group=True).end_point_id == "51494"


def test_the_registered_rsa_key_verifies_and_no_other(acme: GatewayClient, server: SimulatorServer) -> None:
    check = acme.wait_for_final_status(acme.payout_check(payout_fields(currency="USD", operation="payout_check")))
    assert check.status is Status.APPROVED
    config = GatewayConfig(
        server.base_url, "acme", Secret("ACME-CONTROL-KEY"), "51494", _private_key_pem=demo.private_key_pem()
    )
    with GatewayClient(config) as impostor, pytest.raises(AuthenticationError, match="does not verify with RSA-SHA256"):
        impostor.payout_check(payout_fields(currency="USD", operation="payout_check"))


def test_a_merchant_without_an_rsa_key_cannot_use_v4(globex: GatewayClient) -> None:
    signing_anyway = GatewayClient(globex.config.with_overrides(_private_key_pem=demo.private_key_pem()))
    with signing_anyway, pytest.raises(AuthenticationError, match="no RSA public key is registered for login globex"):
        signing_anyway.payout_check(payout_fields(operation="payout_check"))


def test_the_payout_balance_and_currency_are_the_merchants(acme: GatewayClient) -> None:
    assert acme.wait_for_final_status(acme.payout(payout_fields(amount=Decimal("200.00"), currency="USD"))).status is (
        Status.APPROVED
    )
    over = acme.wait_for_final_status(acme.payout(payout_fields(amount=Decimal("50.01"), currency="USD")))
    assert over.get("error-message") == "Insufficient funds: payout 50.01 USD exceeds the balance 50.00 USD"
    with pytest.raises(ValidationError, match="currency EUR differs from the payout balance currency USD"):
        acme.payout(payout_fields(currency="EUR"))


def test_the_timestamp_window_is_the_configured_one(acme: GatewayClient) -> None:
    late = GatewayClient(acme.config, clock=lambda: time.time() - 120)
    with late, pytest.raises(AuthenticationError, match="the window is 60 s either side"):
        late.payout(payout_fields(currency="USD"))


def short_key(folder: Path) -> Path:
    path = folder / "short.pem"
    path.write_bytes(public_pem(rsa.generate_private_key(public_exponent=65537, key_size=1024).public_key()))
    return path


def test_an_rsa_key_under_2048_bits_is_refused_at_start(tmp_path: Path) -> None:
    short_key(tmp_path)
    path = tmp_path / "sim.toml"
    path.write_text(
        '[[merchant]]\nlogin = "acme"\ncontrol_key = "k"\nendpoint_ids = [1]\nrsa_public_key_file = "short.pem"\n'
    )
    with pytest.raises(SettingsError) as refused:
        load_settings(path)
    assert str(refused.value) == (
        f"[[merchant]] #1 (acme): rsa_public_key_file {tmp_path / 'short.pem'}: "
        "public key has 1024 bits; the gateway requires at least 2048"
    )


MERCHANT = '[[merchant]]\nlogin = "acme"\ncontrol_key = "k"\nendpoint_ids = [1]\n'
BAD_SETTINGS = [
    ("[simulator]\nlatencyy = 1\n", "[simulator]: unknown settings latencyy; known: latency, timestamp_window"),
    ("[simulatr]\nlatency = 1\n", "unknown settings simulatr; known: simulator, merchant"),
    (MERCHANT + "payout_balanse = '1.00'\n", "[[merchant]] #1: unknown settings payout_balanse; known: login"),
    ("[simulator]\nlatency = 'fast'\n", "latency must be a number of seconds >= 0, got 'fast'"),
    ("[simulator]\ncallback_retry = 'often'\n", "callback_retry must be a list of seconds"),
    ("[simulator]\ncallback_retry = [1, 'x']\n", "callback_retry must be a number of seconds >= 0, got 'x'"),
    ('[merchant]\nlogin = "acme"\n', "write one [simulator] table and [[merchant]] tables (double brackets)"),
    (
        '[[merchant]]\nlogin = "acme"\ncontrol_key = "k"\nendpoint_ids = 1\n',
        "endpoint_ids must be a list of numeric ids",
    ),
    (MERCHANT + "endpoint_group_ids = ['g1']\n", "endpoint_group_ids must be a list of numeric ids"),
    (MERCHANT + "payout_balance = 'lots'\n", "payout_balance 'lots' is not an amount"),
    (MERCHANT + "payout_balance = '-5'\n", "payout_balance: -5 must be zero or a positive amount"),
    (MERCHANT + "payout_balance = '1.001'\n", "amount 1.001 has more decimals than EUR allows"),
    (MERCHANT + "currency = 'XYZ'\n", "unknown currency code 'XYZ'"),
    (MERCHANT + "rsa_public_key_file = 'missing.pem'\n", "missing.pem: cannot read key file"),
    (MERCHANT + MERCHANT.replace("acme", "other"), "endpoint id 1 belongs to both acme and other"),
    ("latency = [", "sim.toml: Invalid value"),
]


@pytest.mark.parametrize(
    ("text", "message"),
    BAD_SETTINGS,
    ids=[
        "unknown [simulator] setting",
        "unknown table",
        "unknown merchant setting",
        "latency not a number",
        "callback_retry not a list",
        "callback_retry item not a number",
        "single [merchant] table",
        "endpoint_ids not a list",
        "group id not numeric",
        "balance not an amount",
        "negative balance",
        "balance decimals",
        "unknown currency",
        "missing key file",
        "endpoint of two merchants",
        "not TOML",
    ],
)
def test_unusable_settings_are_refused_with_the_reason(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "sim.toml"
    path.write_text(text)
    with pytest.raises(SettingsError) as refused:
        load_settings(path)
    assert message in str(refused.value)
