"""A status request while the simulator is abused (issue 19): p50/p99 with 1,000 chunked over-limit bodies, 2,000
idle connections and a fuzzing run in flight.

    .venv/bin/python benchmarks/bench_abuse.py [--seconds 20] [--bodies 1000] [--idle 2000] [--fuzzers 1]

``gatekit simulate --port 0`` runs in its own process, as a user starts it.  Beside it, each load in its own
process, from other loopback addresses (127.0.0.2 to .5: other clients, as on a shared simulator):
  bodies   N connections at once, each sending a chunked body in 8 KiB chunks every 0.5 s until it is past
           the 64 KiB limit, reading the 413, and starting again (asyncio, one process)
  idle     N connections that send nothing (half from 127.0.0.3, half from .5: each under the 1,024 a client may
           hold), reopened when the simulator closes them (after request_timeout)
  fuzz     random requests: gateway operations, control calls and pages, random methods, paths, headers and
           bodies (bytes, forms, JSON, UTF-8 and not), counting answers of 500 and above
Meanwhile this process (127.0.0.1) sends a signed ``status`` through ``GatewayClient`` every 20 ms.
Target: status p99 under 100 ms, and no answer of 500 or above to the fuzzer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests

from toolkit.client import GatewayClient
from toolkit.config import simulator_config
from toolkit.errors import ApiError
from toolkit.testdata import EXAMPLE_CARDS, sale_fields

TARGET_P99 = 0.100
LIMIT = 65536
CHUNK = 8192


def start_simulator() -> tuple[subprocess.Popen[str], str]:
    gatekit = Path(sys.executable).parent / "gatekit"
    command = [str(gatekit), "simulate", "--port", "0", "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    first = process.stdout.readline().strip()
    if not first.startswith("simulator: "):
        process.kill()
        raise SystemExit(f"gatekit simulate did not start: {first!r}")
    threading.Thread(target=process.stdout.read, daemon=True).start()
    return process, first.removeprefix("simulator: ")


async def _one_body(port: int, source: str, until: float, refused: list[int]) -> None:
    head = b"POST /paynet/api/v2/sale/1001 HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    while time.time() < until:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
        except OSError:
            await asyncio.sleep(0.5)
            continue
        try:
            writer.write(head)
            sent = 0
            while sent <= LIMIT and time.time() < until:
                writer.write(b"%x\r\n" % CHUNK + b"f" * CHUNK + b"\r\n")
                await writer.drain()
                sent += CHUNK
                await asyncio.sleep(0.5)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(64), timeout=10)
            if answer.startswith(b"HTTP/1.1 413"):
                refused[0] += 1
        except (TimeoutError, OSError):
            await asyncio.sleep(0.1)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


def bodies(port: int, count: int, until: float, total: multiprocessing.Value) -> None:  # type: ignore[valid-type]
    refused = [0]

    async def run() -> None:
        await asyncio.gather(*(_one_body(port, "127.0.0.2", until, refused) for _ in range(count)))

    asyncio.run(run())
    total.value = refused[0]


def idler(port: int, source: str, count: int, until: float, opened: multiprocessing.Value) -> None:  # type: ignore[valid-type]
    sockets: list[socket.socket] = []
    while time.time() < until:
        alive = []
        for sock in sockets:
            try:
                if sock.recv(1) == b"":
                    sock.close()
                    continue
            except BlockingIOError:
                pass
            except OSError:
                sock.close()
                continue
            alive.append(sock)
        sockets = alive
        while len(sockets) < count and time.time() < until:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
            except OSError:
                break
            sock.setblocking(False)
            sockets.append(sock)
            with opened.get_lock():
                opened.value += 1
        time.sleep(0.2)
    for sock in sockets:
        sock.close()


PATHS = ["/paynet/api/v2/sale/1001", "/paynet/api/v2/status/1001", "/paynet/api/v2/capture/1001",
         "/paynet/api/v4/payout/1001", "/paynet/api/v2/sale/group/2001", "/paynet/api/3ds/v1/upload-cres-result/1001",
         "/paynet/api/v2/sale/%ff", "/paynet/api/v2/nothing/1", "/paynet/form/x", "/paynet/3ds/v2/acs/x",
         "/paynet/openapi.json", "/_sim/health", "/_sim/journal", "/_sim/transactions/8056020",
         "/_sim/transactions/8056020/status", "/_sim/orders/abc", "/_sim/clock/advance", "/_sim/faults",
         "/_sim/callbacks", "/_sim/settle", "/_sim/reset/x", "/x%1b", "/" + "a" * 3000]  # fmt: skip
NAMES = ["client_orderid", "orderid", "amount", "currency", "cvv2", "credit_card_number", "status", "seconds",
         "limit", "timeout", "attempts", "login", "control", "kind", "target", "count", "\x00", "a" * 70,
         "é"]  # fmt: skip
VALUES = ["", "1", "-1", "1E+999", "NaN", "10.42", "EUR", "9" * 40, "\udcff", "x" * 20000, "approved", "null",
          "[]", "{}", "0x10", "1.0000001", EXAMPLE_CARDS[1], " "]  # fmt: skip


def _body(rng: random.Random) -> tuple[bytes, dict[str, str]]:
    choice = rng.randrange(5)
    if choice == 0:
        return rng.randbytes(rng.randrange(0, 2000)), {"Content-Type": "application/x-www-form-urlencoded"}
    pairs = [(rng.choice(NAMES), rng.choice(VALUES)) for _ in range(rng.randrange(0, 12))]
    if choice in (1, 2):
        text = "&".join(f"{n}={v}" for n, v in pairs)
        return text.encode("utf-8", "surrogateescape"), {"Content-Type": "application/x-www-form-urlencoded"}
    data = {n: rng.choice([v, 1, 1.5, None, True, [v], {"x": v}]) for n, v in pairs}
    return json.dumps(data).encode(), {"Content-Type": rng.choice(["application/json", "text/plain", ""])}


class FromAddress(requests.adapters.HTTPAdapter):
    """Connections from another loopback address (another client, as the simulator sees it)."""

    def __init__(self, source: str) -> None:
        self.source = source
        super().__init__()

    def init_poolmanager(self, *args: object, **kwargs: object) -> None:
        kwargs["source_address"] = (self.source, 0)
        super().init_poolmanager(*args, **kwargs)  # type: ignore[arg-type]


def fuzzer(root_url: str, until: float, seed: int, counts: multiprocessing.Array) -> None:  # type: ignore[valid-type]
    rng = random.Random(seed)
    with requests.Session() as session:
        session.mount("http://", FromAddress("127.0.0.4"))
        while time.time() < until:
            method = rng.choice(["GET", "POST", "POST", "POST", "PUT", "DELETE", "OPTIONS", "HEAD"])
            path = rng.choice(PATHS)
            query = "&".join(f"{rng.choice(NAMES)}={rng.choice(VALUES[:8])}" for _ in range(rng.randrange(0, 3)))
            body, headers = _body(rng)
            headers["Accept"] = rng.choice(["application/vnd.pay+json", "*/*", "text/html"])
            with contextlib.suppress(requests.RequestException, UnicodeError, ValueError):
                answer = session.request(method, f"{root_url}{path}?{query}", data=body, headers=headers, timeout=10)
                with counts.get_lock():
                    counts[0] += 1
                    if answer.status_code >= 500:
                        counts[1] += 1


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(client: GatewayClient, until: float) -> list[float]:
    taken: list[float] = []
    while time.time() < until:
        started = time.perf_counter()
        with contextlib.suppress(ApiError):
            client.status(client_orderid="bench-no-such-order")
        taken.append(time.perf_counter() - started)
        time.sleep(0.02)
    return taken


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--bodies", type=int, default=1000)
    parser.add_argument("--idle", type=int, default=2000)
    parser.add_argument("--fuzzers", type=int, default=1)
    args = parser.parse_args()

    process, base_url = start_simulator()
    root_url = base_url.removesuffix("/paynet")
    port = int(root_url.rsplit(":", 1)[1])
    try:
        with GatewayClient(simulator_config(base_url)) as client:
            client.sale(sale_fields())
            quiet = measure(client, time.time() + 3)
            until = time.time() + args.seconds
            refused, opened = multiprocessing.Value("i", 0), multiprocessing.Value("i", 0)
            fuzzed = multiprocessing.Array("i", [0, 0])
            loads = [
                *([multiprocessing.Process(target=bodies, args=(port, args.bodies, until, refused))]
                  if args.bodies else []),
                *(multiprocessing.Process(target=idler, args=(port, source, args.idle // 2, until, opened))
                  for source in (("127.0.0.3", "127.0.0.5") if args.idle else ())),
                *(multiprocessing.Process(target=fuzzer, args=(root_url, until, seed, fuzzed))
                  for seed in range(args.fuzzers)),
            ]  # fmt: skip
            for load in loads:
                load.start()
            time.sleep(3.0)  # every load in flight: the bodies are 4.5 s each
            loaded = measure(client, until - 0.5)
            for load in loads:
                load.join(60)
            alive = process.poll() is None
    finally:
        process.terminate()
        process.wait(30)

    def ms(value: float) -> str:
        return f"{value * 1000:.1f} ms"

    p99 = percentile(loaded, 0.99)
    print(f"load: {args.bodies} chunked over-limit bodies at once (from 127.0.0.2), {args.idle} idle connections "
          f"(127.0.0.3 and .5), {args.fuzzers} fuzzer(s) (127.0.0.4), {args.seconds:g} s")  # fmt: skip
    print(f"  bodies refused with 413: {refused.value}; idle connections opened: {opened.value}; "
          f"fuzz requests: {fuzzed[0]}, answered 5xx: {fuzzed[1]}")  # fmt: skip
    print(f"status without load ({len(quiet)}): p50 {ms(statistics.median(quiet))}  p99 {ms(percentile(quiet, 0.99))}")
    print(f"status under abuse  ({len(loaded)}): p50 {ms(statistics.median(loaded))}  p99 {ms(p99)}"
          f"  max {ms(max(loaded))}")  # fmt: skip
    ok = p99 < TARGET_P99 and fuzzed[1] == 0 and alive
    print(f"{'PASS' if ok else 'FAIL'}: status p99 {ms(p99)} (target < {ms(TARGET_P99)}), "
          f"{fuzzed[1]} server errors to the fuzzer (target 0), simulator {'alive' if alive else 'DEAD'}")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
