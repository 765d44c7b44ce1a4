"""Our signing functions against the bare primitives underneath, and what a prepared request costs.

    .venv/bin/python benchmarks/bench_signing.py [--rounds 5] [--seconds 0.2]

Signing rows (goal: each within 1.1x of its bare primitive), inputs built beforehand:
  control             signing.control_checksum(parts, key)      bare: hashlib.sha1(bytes).hexdigest()
  OAuth HMAC-SHA1     signing.sign_hmac_sha1(base string, key)  bare: Base64 of hmac.digest(key bytes, bytes, "sha1")
  OAuth RSA-SHA256    signing.sign_rsa_sha256(base string, key) bare: Base64 of key.sign(bytes, PKCS1v15, SHA256)

The bare side gets its input already encoded (bytes of the base string and of the key) and gives
the same text as ours, which must encode the string it is given.  Then, for information, what
``GatewayClient.prepare`` costs (validation, form encoding, signing; nothing is sent).

The control row stays near 1.4x: its bare SHA-1 of some 80 bytes costs about 4,200 instructions, and
joining the formula's parts, appending the key and encoding them (which the function must do: its
input is the parts) costs some 1,400 more, the call itself about 400; there is nothing left to cache.
The row "control vs the same inline" compares it with that same work written out without the function
(join, append, encode, SHA-1): what is left there is the cost of the call.

Each row is measured ``--rounds`` times, interleaved with its bare primitive; shown are medians
of CPU time per call (``time.process_time``) and, where Linux allows, of user-space instructions
per call (``perf_event_open``: other work on the machine does not change them).  The verdict is
on instructions where they are counted, else on CPU time.  The RSA key (4096 bits) is made per run.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchservers import SALE as BENCH_SALE
from counters import Counter

from toolkit import demo, signing
from toolkit.client import GatewayClient
from toolkit.config import simulator_config
from toolkit.keys import generate_rsa_key, write_key_files
from toolkit.testdata.outcomes import EXAMPLE_CARDS

GOAL = 1.1
CARD = EXAMPLE_CARDS[1]
SALE = {**BENCH_SALE, "client_orderid": "inv-794772", "credit_card_number": CARD}
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


@dataclass(frozen=True)
class PerCall:
    cpu_ns: float
    instructions: float | None


def per_call(work: Callable[[], object], calls: int) -> PerCall:
    """CPU nanoseconds and instructions per call of ``work``, over ``calls`` calls."""
    work()
    with Counter() as counted:
        for _ in range(calls):
            work()
    count = counted.instructions
    return PerCall(counted.cpu_seconds * 1e9 / calls, None if count is None else count / calls)


def calls_for(work: Callable[[], object], seconds: float) -> int:
    """How many calls of ``work`` take about ``seconds``."""
    started, calls = time.process_time(), 0
    while time.process_time() - started < seconds / 10 or calls < 3:
        work()
        calls += 1
    return max(3, calls * 10)


@dataclass(frozen=True)
class Row:
    name: str
    ours: list[PerCall]
    bare: list[PerCall] | None

    def median(self, side: list[PerCall], attribute: str) -> float | None:
        values = [getattr(m, attribute) for m in side]
        return None if None in values else statistics.median(values)

    def ratio(self) -> tuple[float, str] | None:
        """Ours / bare, on instructions where they are counted, else on CPU time."""
        if self.bare is None:
            return None
        for attribute, unit in (("instructions", "instructions"), ("cpu_ns", "CPU time")):
            ours, bare = self.median(self.ours, attribute), self.median(self.bare, attribute)
            if ours is not None and bare is not None:
                return ours / bare, unit
        return None


def measure(
    name: str, ours: Callable[[], object], bare: Callable[[], object] | None, rounds: int, seconds: float
) -> Row:
    calls = calls_for(ours, seconds)
    mine: list[PerCall] = []
    theirs: list[PerCall] = []
    for _ in range(rounds):  # interleaved: both sides see the same load
        mine.append(per_call(ours, calls))
        if bare is not None:
            theirs.append(per_call(bare, calls))
    return Row(name, mine, theirs if bare is not None else None)


def rows(client: GatewayClient, key: rsa.RSAPrivateKey, rounds: int, seconds: float) -> list[Row]:
    control_key = demo.CONTROL_KEY
    parts = [demo.ENDPOINT_ID, "inv-794772", "1042", "john.smith@example.com"]
    control_bytes = ("".join(parts) + control_key).encode()
    hmac_trace = client.prepare("payout_check", PAYOUT_CHECK).trace
    assert hmac_trace is not None and hmac_trace.base_string
    hmac_base = hmac_trace.base_string
    hmac_base_bytes, hmac_key = hmac_base.encode(), f"{control_key}&".encode()
    rsa_base = hmac_base.replace("HMAC-SHA1", "RSA-SHA256")
    rsa_base_bytes, pkcs1, sha256 = rsa_base.encode(), padding.PKCS1v15(), hashes.SHA256()

    def bare_control() -> str:
        return hashlib.sha1(control_bytes).hexdigest()

    def inline_control() -> str:  # the same work written out where it is needed: join, append, encode, SHA-1
        return hashlib.sha1(("".join(parts) + control_key).encode()).hexdigest()

    def bare_hmac() -> str:
        return base64.b64encode(hmac.digest(hmac_key, hmac_base_bytes, "sha1")).decode("ascii")

    def bare_rsa() -> str:
        return base64.b64encode(key.sign(rsa_base_bytes, pkcs1, sha256)).decode("ascii")

    assert signing.control_checksum(parts, control_key) == bare_control()
    assert signing.sign_hmac_sha1(hmac_base, control_key) == bare_hmac()
    assert signing.sign_rsa_sha256(rsa_base, key) == bare_rsa()  # PKCS#1 v1.5 is deterministic
    return [
        measure("control (SHA-1)", lambda: signing.control_checksum(parts, control_key), bare_control, rounds, seconds),
        measure(
            "control vs the same inline",
            lambda: signing.control_checksum(parts, control_key),
            inline_control,
            rounds,
            seconds,
        ),
        measure("OAuth HMAC-SHA1", lambda: signing.sign_hmac_sha1(hmac_base, control_key), bare_hmac, rounds, seconds),
        measure("OAuth RSA-SHA256 (4096)", lambda: signing.sign_rsa_sha256(rsa_base, key), bare_rsa, rounds, seconds),
        measure("prepare sale (control)", lambda: client.prepare("sale", SALE), None, rounds, seconds),
        measure(
            "prepare payout_check (RSA)", lambda: client.prepare("payout_check", PAYOUT_CHECK), None, rounds, seconds
        ),
    ]


def table(results: list[Row]) -> str:
    def number(value: float | None, scale: float = 1.0) -> str:
        return "n/a" if value is None else f"{value / scale:,.1f}"

    lines = [
        f"{'operation':<28}{'µs ours':>10}{'µs bare':>10}{'instr. ours':>14}{'instr. bare':>14}"
        f"{'ours/bare':>11}{'goal':>7}  verdict"
    ]
    for row in results:
        bare = row.bare or []
        ratio = row.ratio()
        verdict = "" if ratio is None else ("reached" if ratio[0] <= GOAL else "NOT reached") + f" ({ratio[1]})"
        lines.append(
            f"{row.name:<28}{number(row.median(row.ours, 'cpu_ns'), 1000):>10}"
            f"{number(row.median(bare, 'cpu_ns'), 1000) if bare else '':>10}"
            f"{number(row.median(row.ours, 'instructions')):>14}"
            f"{number(row.median(bare, 'instructions')) if bare else '':>14}"
            f"{'' if ratio is None else f'{ratio[0]:.3f}x':>11}{'' if ratio is None else f'{GOAL}x':>7}  {verdict}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per row (medians are shown)")
    parser.add_argument("--seconds", type=float, default=0.2, help="CPU time of each round of each row")
    args = parser.parse_args()
    started = time.perf_counter()
    key = generate_rsa_key(4096)
    print(f"4096-bit key generated in {time.perf_counter() - started:.2f}s")
    with tempfile.TemporaryDirectory() as folder:
        files = write_key_files(key, Path(folder))
        config = simulator_config().with_overrides(private_key_file=files.private_pkcs8)
        with GatewayClient(config, clock=lambda: 1669966913.0, nonce=lambda: "bench-nonce") as client:
            print(table(rows(client, config.private_key, args.rounds, args.seconds)))


if __name__ == "__main__":
    main()
