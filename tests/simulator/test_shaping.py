"""Load shaping (issue 22): answer latency as a distribution, a decline mix, a fault rate and callback delays,
each producing the configured shape within tolerance.

The distribution itself is checked on 20,000 seeded draws; the simulator is checked over HTTP (raw requests
built as the documentation shows, in parallel threads), where the tolerances allow for sampling error: with
n requests and a share p the standard error is sqrt(p(1-p)/n), and every check allows more than four of them.
"""

from __future__ import annotations

import hashlib
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

import pytest
import requests

from toolkit import demo
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import SettingsError, default_settings, load_settings
from toolkit.simulator.shaping import FaultRates, Latency
from toolkit.testdata import sale_fields
from toolkit.wire import FORM_TYPE, MEDIA_TYPE, decode_response, encode_form


def signed_body(fields: dict[str, str]) -> str:
    """A sale body signed as the specification says: SHA-1 of endpoint id, client_orderid, the amount in minor
    units, the payer's email and the merchant's control key (built here, not by gatekit's signing module)."""
    minor = str(int(Decimal(fields["amount"]) * 100))
    parts = demo.ENDPOINT_ID + fields["client_orderid"] + minor + fields["email"] + demo.CONTROL_KEY
    return encode_form({**fields, "control": hashlib.sha1(parts.encode()).hexdigest()})


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def test_latency_draws_have_the_configured_median_and_99th_percentile():
    shape, rng = Latency(0.3, 2.0), random.Random(7)
    draws = [shape.draw(rng) for _ in range(20_000)]
    assert quantile(draws, 0.5) == pytest.approx(0.3, rel=0.05)
    assert quantile(draws, 0.99) == pytest.approx(2.0, rel=0.1)
    assert min(draws) > 0


def test_fault_draws_have_the_configured_shares():
    rates, rng = FaultRates(error=0.1, drop=0.05, timeout=0.02), random.Random(3)
    kinds = [rates.draw(rng) for _ in range(20_000)]
    assert kinds.count("error") / 20_000 == pytest.approx(0.1, abs=0.01)
    assert kinds.count("drop") / 20_000 == pytest.approx(0.05, abs=0.008)
    assert kinds.count("timeout") / 20_000 == pytest.approx(0.02, abs=0.005)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("answer_latency = { p50 = 2.0, p99 = 0.3 }", "answer_latency needs 0 <= p50 <= p99"),
        ("answer_latency = { p50 = 0.3 }", "answer_latency must be { p50 = 0.3, p99 = 2.0 }"),
        ("decline_rate = 1.5", "decline_rate must be a share between 0 and 1"),
        ("fault_rate = { error = 0.6, drop = 0.6 }", "fault_rate: the shares add up to 1.2, more than 1"),
        ("fault_rate = { slow = 0.1 }", "fault_rate: unknown kinds slow; known: error, drop, timeout"),
        ("callback_delay = { p50 = 0, p99 = 3 }", "callback_delay p50 = 0 with p99 > 0"),
    ],
)
def test_a_bad_shape_is_refused_naming_the_setting(tmp_path: Path, table: str, message: str):
    config = tmp_path / "sim.toml"
    config.write_text(f"[simulator]\n{table}\n")
    with pytest.raises(SettingsError, match=message.replace("{", r"\{").replace("}", r"\}").replace("+", r"\+")):
        load_settings(config)


def _sales(base_url: str, count: int, threads: int = 16) -> list[tuple[float, int | None, dict[str, str]]]:
    """``count`` raw sales in parallel, signed beforehand, a keep-alive connection per thread: (seconds, HTTP
    status or None for a dropped connection, decoded body)."""
    url = f"{base_url}/api/v2/sale/{demo.ENDPOINT_ID}"
    headers = {"Content-Type": FORM_TYPE, "Accept": MEDIA_TYPE}
    bodies = [signed_body(sale_fields()) for _ in range(count)]
    local = threading.local()

    def one(body: str) -> tuple[float, int | None, dict[str, str]]:
        session = local.__dict__.setdefault("session", requests.Session())
        started = time.monotonic()
        try:
            answer = session.post(url, data=body, headers=headers, timeout=5)
        except requests.ConnectionError:
            local.session = requests.Session()
            return time.monotonic() - started, None, {}
        return time.monotonic() - started, answer.status_code, decode_response(answer.text)

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(one, bodies))


def test_answers_take_the_configured_latency_over_http(tmp_path: Path):
    """``gatekit simulate`` as users start it, in its own process, its line per request on: each line gives the
    time from the request to its answer as the simulator served it (the draw and the answer's own work, without
    this machine's client threads and scheduling, which a loaded CI machine adds)."""
    config, log = tmp_path / "sim.toml", tmp_path / "requests.log"
    config.write_text("[simulator]\nanswer_latency = { p50 = 0.05, p99 = 0.25 }\n")
    command = [sys.executable, "-m", "toolkit.cli", "simulate", "--port", "0", "--config", str(config)]
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while "stop: " not in log.read_text() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # (the header ends with how to stop it: then it listens)
        base_url = log.read_text().splitlines()[0].split()[-1]
        results = _sales(base_url, 600, threads=12)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    served = [int(line.rsplit(" ", 2)[-2]) / 1000 for line in log.read_text().splitlines() if " sale 200 " in line]
    assert len(served) == 600 and all(status == 200 for _, status, _ in results)
    assert 0.05 * 0.9 <= statistics.median(served) <= 0.05 * 1.2, statistics.median(served)
    # the 99th percentile of 600 draws: its sampling error alone is about 12% here
    assert 0.25 * 0.7 <= quantile(served, 0.99) <= 0.25 * 1.4, quantile(served, 0.99)


def test_the_fault_rate_and_the_decline_mix_over_http():
    settings = default_settings(fault_rate=FaultRates(error=0.1, drop=0.05), decline_rate=0.2)
    with SimulatorServer(settings) as server:
        results = _sales(server.base_url, 1000)
        errors = sum(1 for _, _, body in results if body.get("type") == "error")
        dropped = sum(1 for _, status, _ in results if status is None)
        journal = requests.get(f"{server.root_url}/_sim/journal?limit=2000", timeout=5).json()
        answered = [body for _, status, body in results if body.get("type") == "async-response"]
        finals = [_final(server, body) for body in answered]
    assert errors / 1000 == pytest.approx(0.1, abs=0.04), errors
    assert dropped / 1000 == pytest.approx(0.05, abs=0.03), dropped
    assert len(journal["entries"]) == 1000  # every request journaled, faults included
    assert set(finals) == {"approved", "declined"}
    assert finals.count("declined") / len(finals) == pytest.approx(0.2, abs=0.05), (
        finals.count("declined"),
        len(finals),
    )


def _final(server: SimulatorServer, body: dict) -> str:
    row = requests.get(f"{server.root_url}/_sim/transactions/{body['paynet-order-id']}", timeout=5).json()
    return str(row["status"])


def test_callbacks_wait_the_configured_delay(tmp_path: Path):
    """The first attempt of a callback is due a draw of callback_delay later, on the simulator's clock."""
    settings = default_settings(callback_delay=Latency(30.0, 30.0))
    with SimulatorServer(settings) as server:
        fields = sale_fields()
        fields["server_callback_url"] = "http://127.0.0.1:9/callback"
        url = f"{server.base_url}/api/v2/sale/{demo.ENDPOINT_ID}"
        headers = {"Content-Type": FORM_TYPE, "Accept": MEDIA_TYPE}
        answer = requests.post(url, data=signed_body(fields), headers=headers, timeout=5)
        orderid = decode_response(answer.text)["paynet-order-id"]
        deliveries = requests.get(f"{server.root_url}/_sim/callbacks?orderid={orderid}", timeout=5).json()
        clock = requests.get(f"{server.root_url}/_sim/clock", timeout=5).json()
    (delivery,) = deliveries["callbacks"]
    assert delivery["attempts"] == []
    assert delivery["next_at"] - clock["now"] == pytest.approx(30.0, abs=1.0)
