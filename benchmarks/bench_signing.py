"""How fast the client builds and signs requests, against the bare primitives underneath.

    .venv/bin/python benchmarks/bench_signing.py [--seconds 1.0]

Rows, per second, measured in the same run:
  sale prepare        GatewayClient.prepare("sale", ...): validation, form encoding, control (SHA-1)
  bare sha1           hashlib.sha1 of the same control concatenation
  payout_check prep.  GatewayClient.prepare("payout_check", ...): OAuth RSA-SHA256, 4096-bit key
  bare RSA sign       cryptography's PKCS#1 v1.5 SHA-256 signature of the same base string, same key

Nothing is sent: prepare builds and signs only.  The key is generated once per run.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from toolkit import demo
from toolkit.client import GatewayClient
from toolkit.config import simulator_config
from toolkit.keys import generate_rsa_key, write_key_files
from toolkit.testdata.outcomes import EXAMPLE_CARDS

CARD = EXAMPLE_CARDS[1]
SALE = {
    "client_orderid": "inv-794772",
    "order_desc": "Benchmark order",
    "amount": "10.42",
    "currency": "EUR",
    "email": "john.smith@example.com",
    "ipaddress": "203.0.113.7",
    "credit_card_number": CARD,
    "card_printed_name": "JOHN SMITH",
    "expire_month": "12",
    "expire_year": "2099",
    "cvv2": "123",
}
PAYOUT_CHECK = {
    "client_orderid": "inv-794772",
    "amount": "5.00",
    "currency": "USD",
    "order_desc": "Payout check",
    "credit_card_number": CARD,
    "expire_month": "01",
    "expire_year": "2030",
    "card_printed_name": "A B",
}


def per_second(work: Callable[[], object], seconds: float) -> float:
    """Calls of ``work`` per second over about ``seconds`` (after one warm-up call)."""
    work()
    calls, started = 0, time.perf_counter()
    deadline = started + seconds
    while (now := time.perf_counter()) < deadline or calls == 0:
        work()
        calls += 1
    return calls / (now - started)


def rows(client: GatewayClient, key: rsa.RSAPrivateKey, seconds: float) -> list[tuple[str, float]]:
    sale_input = f"{demo.ENDPOINT_ID}inv-7947721042john.smith@example.com{demo.CONTROL_KEY}".encode()
    trace = client.prepare("payout_check", PAYOUT_CHECK).trace
    assert trace is not None and trace.base_string
    base = trace.base_string.encode()
    assert client.prepare("sale", SALE).trace.control == hashlib.sha1(sale_input).hexdigest()  # type: ignore[union-attr]
    return [
        ("sale prepare (control)", per_second(lambda: client.prepare("sale", SALE), seconds)),
        ("bare hashlib.sha1", per_second(lambda: hashlib.sha1(sale_input).hexdigest(), seconds)),
        ("payout_check prepare (RSA-4096)", per_second(lambda: client.prepare("payout_check", PAYOUT_CHECK), seconds)),
        ("bare RSA-4096 sign", per_second(lambda: key.sign(base, padding.PKCS1v15(), hashes.SHA256()), seconds)),
    ]


def table(results: list[tuple[str, float]]) -> str:
    lines = [f"{'operation':<34}{'per second':>14}{'µs each':>12}{'vs bare':>10}"]
    for index, (name, rate) in enumerate(results):
        bare = results[index + 1][1] if index % 2 == 0 else rate
        lines.append(f"{name:<34}{rate:>14,.0f}{1e6 / rate:>12.1f}{rate / bare:>10.3f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time spent on each row")
    args = parser.parse_args()
    started = time.perf_counter()
    key = generate_rsa_key(4096)
    print(f"4096-bit key generated in {time.perf_counter() - started:.2f}s")
    with tempfile.TemporaryDirectory() as folder:
        files = write_key_files(key, Path(folder))
        config = simulator_config().with_overrides(private_key_file=files.private_pkcs8)
        with GatewayClient(config, clock=lambda: 1669966913.0, nonce=lambda: "bench-nonce") as client:
            print(table(rows(client, config.private_key, args.seconds)))


if __name__ == "__main__":
    main()
