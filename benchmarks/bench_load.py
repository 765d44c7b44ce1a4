"""A status request under hostile load (issue 9): p50/p99 while big bodies, idle connections and long-polls run.

    .venv/bin/python benchmarks/bench_load.py [--seconds 20] [--idle 200] [--polls 45] [--bombers 2]

``gatekit simulate --port 0`` runs in its own process, as a user starts it.  Beside it, each
load in its own process:
  bombers   POST 10 MB bodies (a million ``fN=1`` pairs) to sale, one after another each
  idle      keeps N connections open that send nothing (reopened when the simulator closes them)
  polls     N control long-polls (``/_sim/callbacks?...&attempts=1&timeout=30``) that never end early
Meanwhile this process sends a signed ``status`` through ``GatewayClient`` every 20 ms and a
hosted payment page GET every 100 ms, and reads the simulator's memory (VmRSS, VmHWM) from /proc.
Target: status p99 under 100 ms.  Loopback only; every loop ends with ``--seconds``.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
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
from toolkit.testdata import form_fields, sale_fields

BODY = "&".join(f"f{i}=1" for i in range(1_000_000)).encode()  # 9.9 MB
TARGET_P99 = 0.100


def start_simulator() -> tuple[subprocess.Popen[str], str]:
    gatekit = Path(sys.executable).parent / "gatekit"
    process = subprocess.Popen([str(gatekit), "simulate", "--port", "0"], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    first = process.stdout.readline().strip()
    if not first.startswith("simulator: "):
        process.kill()
        raise SystemExit(f"gatekit simulate did not start: {first!r}")
    threading.Thread(target=process.stdout.read, daemon=True).start()  # drain the rest
    return process, first.removeprefix("simulator: ")


def bomber(base_url: str, until: float, sent: multiprocessing.Value) -> None:  # type: ignore[valid-type]
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/vnd.pay+json"}
    with requests.Session() as session:
        while time.time() < until:
            with contextlib.suppress(requests.RequestException):
                answer = session.post(f"{base_url}/api/v2/sale/1001", data=BODY, headers=headers, timeout=30)
                if answer.status_code == 413:
                    with sent.get_lock():
                        sent.value += 1


def idler(host: str, port: int, count: int, until: float, opened: multiprocessing.Value) -> None:  # type: ignore[valid-type]
    sockets: list[socket.socket] = []
    while time.time() < until:
        alive = []
        for sock in sockets:
            try:
                sock.setblocking(False)
                if sock.recv(1) == b"":  # closed by the simulator (request_timeout)
                    sock.close()
                    continue
            except BlockingIOError:
                pass
            except OSError:
                sock.close()
                continue
            alive.append(sock)
        sockets = alive
        while len(sockets) < count:
            sockets.append(socket.create_connection((host, port), timeout=5))
            with opened.get_lock():
                opened.value += 1
        time.sleep(0.2)
    for sock in sockets:
        sock.close()


def poller(root_url: str, orderid: str, count: int, until: float) -> None:
    def poll() -> None:
        with requests.Session() as session:
            while time.time() < until:
                with contextlib.suppress(requests.RequestException):
                    session.get(
                        f"{root_url}/_sim/callbacks",
                        params={"orderid": orderid, "attempts": 1, "timeout": min(30, max(1, until - time.time()))},
                        timeout=40,
                    )

    threads = [threading.Thread(target=poll) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def memory(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a process in KiB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(rest.split()[0])
    return values


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(client: GatewayClient, page_url: str, until: float) -> tuple[list[float], list[float]]:
    statuses: list[float] = []
    pages: list[float] = []
    next_page = time.time()
    with requests.Session() as session:
        while time.time() < until:
            started = time.perf_counter()
            with contextlib.suppress(ApiError):
                client.status(client_orderid="bench-no-such-order")
            statuses.append(time.perf_counter() - started)
            if time.time() >= next_page:
                started = time.perf_counter()
                session.get(page_url, timeout=10)
                pages.append(time.perf_counter() - started)
                next_page = time.time() + 0.1
            time.sleep(0.02)
    return statuses, pages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--idle", type=int, default=200)
    parser.add_argument("--polls", type=int, default=45)
    parser.add_argument("--bombers", type=int, default=2)
    args = parser.parse_args()

    process, base_url = start_simulator()
    root_url = base_url.removesuffix("/paynet")
    host, port = root_url.removeprefix("http://").split(":")
    try:
        with GatewayClient(simulator_config(base_url)) as client:
            ack = client.sale(sale_fields())  # no callback url: long-polls on it wait their whole timeout
            page_url = client.sale_form(form_fields()).redirect_url
            quiet_statuses, _ = measure(client, page_url, time.time() + 3)
            before = memory(process.pid)
            until = time.time() + args.seconds
            bodies, opened = multiprocessing.Value("i", 0), multiprocessing.Value("i", 0)
            loads = [
                *(multiprocessing.Process(target=bomber, args=(base_url, until, bodies)) for _ in range(args.bombers)),
                multiprocessing.Process(target=idler, args=(host, int(port), args.idle, until, opened)),
                multiprocessing.Process(target=poller, args=(root_url, ack.orderid, args.polls, until)),
            ]
            for load in loads:
                load.start()
            time.sleep(1.0)  # the load is in flight
            statuses, pages = measure(client, page_url, until - 0.5)
            during = memory(process.pid)
            for load in loads:
                load.join(60)
            after = memory(process.pid)
    finally:
        process.terminate()
        process.wait(30)

    def ms(value: float) -> str:
        return f"{value * 1000:.1f} ms"

    p99 = percentile(statuses, 0.99)
    print(f"load: {args.bombers} bombers (10 MB bodies), {args.idle} idle connections, {args.polls} long-polls")
    print(f"  10 MB bodies refused with 413: {bodies.value}; idle connections opened: {opened.value}")
    print(f"status without load  ({len(quiet_statuses)}): p50 {ms(statistics.median(quiet_statuses))}"
          f"  p99 {ms(percentile(quiet_statuses, 0.99))}")  # fmt: skip
    print(f"status under load    ({len(statuses)}): p50 {ms(statistics.median(statuses))}  p99 {ms(p99)}"
          f"  max {ms(max(statuses))}")  # fmt: skip
    print(f"hosted page under load ({len(pages)}): p50 {ms(statistics.median(pages))}"
          f"  p99 {ms(percentile(pages, 0.99))}")  # fmt: skip
    print(f"simulator memory: before {before['VmRSS'] // 1024} MiB, under load {during['VmRSS'] // 1024} MiB, "
          f"after {after['VmRSS'] // 1024} MiB, peak {after['VmHWM'] // 1024} MiB")  # fmt: skip
    verdict = "PASS" if p99 < TARGET_P99 else "FAIL"
    print(f"{verdict}: status p99 {ms(p99)} (target < {ms(TARGET_P99)})")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
