"""The simulator's documented demo merchant: usable out of the box, never for production.

The RSA pair in ``toolkit/data`` was made for the demo only; it is published with the code.
"""

from __future__ import annotations

from importlib import resources

LOGIN = "gatekit-demo"
CONTROL_KEY = "DEMO-CONTROL-KEY-5F2C7A19-0B4D"
ENDPOINT_ID = "1001"
ENDPOINT_GROUP_ID = "2001"
CURRENCY = "EUR"
PAYOUT_BALANCE = "10000.00"
BASE_URL = "http://127.0.0.1:8080/paynet"


def private_key_pem() -> bytes:
    return resources.files("toolkit").joinpath("data/demo-private-pkcs8.pem").read_bytes()


def public_key_pem() -> bytes:
    return resources.files("toolkit").joinpath("data/demo-public.pem").read_bytes()
