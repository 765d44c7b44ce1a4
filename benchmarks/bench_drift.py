"""How ``gatekit drift`` copes with a large recording (issue 34, point 6: a 261 MB HAR ran over 300 s at 1.6 GB).

    .venv/bin/python benchmarks/bench_drift.py [--megabytes 261] [--under 60] [--shapes orders,pages,answer]
                                               [--replay] [--keep DIR]

For each shape a recording of one scenario is written whose archive is about that size (generated, not run):

- ``orders``: many orders, each a sale, two status polls and a callback (a proxy's long session);
- ``pages``: a hosted payment page with 3-D Secure whose pages are that large (the payer's four visits);
- ``answer``: a status whose answer is that large (a gateway's 3-D Secure ``html``; the proxy recorded a 300 MB
  answer, issue 34 point 5).

Then ``gatekit drift A B`` (two recordings compared, no replay) runs as a user starts it, in a fresh process;
the figures are its wall time and peak RSS (``os.wait4``), and its exit status.  Goals: an archive over the
limit (``--megabytes``, 261 by default) is refused (exit 2) within 1 s at under 100 MB; one under it
(``--under``, 60 MB) is compared within 30 s at under 1 GB.  ``--replay`` also runs ``gatekit drift A`` (a
replay on a fresh simulator) of the ``pages`` and ``answer`` shapes under the limit: a replay of thousands of
orders takes what the simulator takes to answer them, which is not a figure of reading.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from toolkit.callbacks import Received
from toolkit.exchange import Exchange
from toolkit.payer.visits import Visit
from toolkit.recording import har

BIN = Path(sys.executable).parent
GATEKIT = str(BIN / "gatekit")
SHAPES = ("orders", "pages", "answer")
REFUSED_SECONDS, REFUSED_MB = 1.0, 100
COMPARED_SECONDS, COMPARED_MB = 30.0, 1024
JSON = "application/vnd.pay+json"
BASE = "https://sandbox.gateway.example/paynet"
HOME = "http://127.0.0.1:9000"  # the merchant's receiver, as recorded


class Clock:
    """The recorded moments: one entry after another, 10 ms apart."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 25, 21, 55, tzinfo=UTC)

    def next(self) -> datetime:
        self.now += timedelta(milliseconds=10)
        return self.now


def _exchange(clock: Clock, operation: str, fields: dict[str, str], answer: dict[str, str]) -> dict[str, Any]:
    return har.entry(Exchange(
        operation, "POST", f"{BASE}/api/v2/{operation.replace('_', '-')}/1001",
        {"Accept": JSON, "Content-Type": har.FORM_TYPE}, tuple(fields.items()), 200, {"Content-Type": JSON},
        json.dumps(answer), 0.05, at=clock.next(),
    ))  # fmt: skip


def _sale_fields(number: int) -> dict[str, str]:
    return {
        "client_orderid": f"bench-{number}", "order_desc": "bench order", "amount": "10.42", "currency": "EUR",
        "address1": "1 Main St", "city": "Springfield", "state": "IL", "zip_code": "62701", "country": "US",
        "phone": "+15555550100",
        "email": "payer@example.com", "ipaddress": "203.0.113.7", "credit_card_number": "453897******6732",
        "card_printed_name": "JOHN SMITH", "expire_month": "12", "expire_year": "2099", "cvv2": "123",
        "server_callback_url": f"{HOME}/callback", "redirect_url": f"{HOME}/redirect/sale", "control": "0" * 40,
    }  # fmt: skip


def _status(clock: Clock, number: int, status: str, **extra: str) -> dict[str, Any]:
    fields = {"login": "merchant", "client_orderid": f"bench-{number}", "orderid": str(8_000_000 + number),
              "control": "1" * 40}  # fmt: skip
    answer = {"type": "status-response", "serial-number": f"{number:08d}-0000-4000-8000-000000000002",
              "paynet-order-id": str(8_000_000 + number), "merchant-order-id": f"bench-{number}", "status": status,
              "amount": "10.42", "currency": "EUR", "transaction-type": "sale", **extra}  # fmt: skip
    return _exchange(clock, "status", fields, answer)


def _callback(clock: Clock, number: int) -> dict[str, Any]:
    params = {"type": "sale", "status": "approved", "orderid": str(8_000_000 + number),
              "client_orderid": f"bench-{number}", "amount": "10.42", "control": "2" * 40}  # fmt: skip
    return har.entry(Received("callback", "GET", "/callback", params, True, 0.0, clock.next(), url=f"{HOME}/callback"))


def _visit(clock: Clock, url: str, action: dict[str, Any], step: str, body: str) -> dict[str, Any]:
    return har.entry(Visit(clock.next(), "GET", url, 200, 0.02, step, "gateway", body=body, action=action))


def orders(size: int) -> Iterator[dict[str, Any]]:
    clock, number, written = Clock(), 0, 0
    while written < size:
        sale = _exchange(clock, "sale", _sale_fields(number), {"type": "async-response", "paynet-order-id":
                         str(8_000_000 + number), "serial-number": f"{number:08d}-0000-4000-8000-000000000001",
                         "merchant-order-id": f"bench-{number}"})  # fmt: skip
        for entry in (sale, _status(clock, number, "processing"), _status(clock, number, "approved"),
                      _callback(clock, number)):  # fmt: skip
            written += len(json.dumps(entry, indent=1))
            yield entry
        number += 1


def pages(size: int) -> Iterator[dict[str, Any]]:
    clock, page = Clock(), "<html><body>" + "<p>a page of the sandbox's</p>" * (size // 4 // 30) + "</body></html>"
    form = f"{BASE}/form/kIFqsSOq3Nbx8UNeqCRHsqwK"
    yield _exchange(clock, "sale_form", _sale_fields(0), {"type": "async-form-response", "paynet-order-id":
                    "8000000", "serial-number": "00000000-0000-4000-8000-000000000001", "merchant-order-id":
                    "bench-0", "redirect-url": form})  # fmt: skip
    card = {"number": "453897******6732", "luhn": True, "expire_month": "12", "expire_year": "2099", "cvv2": "321",
            "holder": "JOHN SMITH"}  # fmt: skip
    yield _visit(clock, form, {"action": "open"}, "open the hosted payment page", page)
    yield _visit(clock, form, {"action": "pay", "card": card}, "pay on the hosted page", page)
    yield _visit(clock, f"{BASE}/3ds/v2/acs/x/answer", {"action": "challenge", "answer": "right"}, "answer", page)
    yield _visit(clock, f"{HOME}/redirect/sale_form", {"action": "return"}, "go back to the merchant", page)
    yield _callback(clock, 0)
    yield _status(clock, 0, "approved")


def answer(size: int) -> Iterator[dict[str, Any]]:
    clock = Clock()
    ack = {"type": "async-response", "paynet-order-id": "8000000", "merchant-order-id": "bench-0",
           "serial-number": "00000000-0000-4000-8000-000000000001"}  # fmt: skip
    yield _exchange(clock, "sale", _sale_fields(0), ack)
    yield _status(clock, 0, "processing", html="<html>" + "<p>a method page</p>" * (size // 20) + "</html>")
    yield _status(clock, 0, "approved")


def write_recording(folder: Path, shape: str, megabytes: float) -> Path:
    """A recording of one scenario in ``folder`` whose archive is about ``megabytes`` MB; its archive's path."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = {"orders": orders, "pages": pages, "answer": answer}[shape](int(megabytes * 1024 * 1024))
    archive = folder / f"{shape}.har"
    with archive.open("w", encoding="utf-8") as out:
        out.write('{"log": {"version": "1.2", "creator": {"name": "gatekit", "version": "bench"}, "pages": [{"title": ')
        out.write(json.dumps(f"a {shape} scenario") + ', "id": "scenario"}], "entries": [\n')
        for number, entry in enumerate(entries):
            out.write((",\n" if number else "") + json.dumps(entry, indent=1, ensure_ascii=False))
        out.write("\n]}}\n")
    index = {"profile": "bench", "base_url": BASE, "started": "2026-11-25T21:55:00.000+00:00", "gatekit": "bench",
             "simulator": None, "scenarios": [{"name": f"a {shape} scenario", "nodeid": "", "file": archive.name,
             "outcome": "passed", "started": "2026-11-25T21:55:00.000+00:00", "tags": []}]}  # fmt: skip
    (folder / "index.json").write_text(json.dumps(index, indent=1), encoding="utf-8")
    return archive


def _written(folder: Path, shape: str, megabytes: float) -> Path:
    """``write_recording`` in a child process: this one stays small, for a child's peak RSS counts the pages it
    shares with its parent until it executes the command measured."""
    command = [sys.executable, __file__, "--write", shape, str(megabytes), str(folder)]
    subprocess.run(command, check=True, timeout=1800)
    return folder / f"{shape}.har"


def measure(argv: list[str], cwd: Path) -> tuple[float, float, int, str]:
    """Wall seconds, peak RSS (MB), exit status and the last line of stderr of one run of ``argv``."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    return seconds, usage.ru_maxrss / 1024, process.returncode, (errors.strip().splitlines() or [""])[-1]


def run(shapes: list[str], over: float, under: float, replay: bool, work: Path) -> bool:
    met = True
    print(f"gatekit drift on large recordings (goals: over the limit refused within {REFUSED_SECONDS:g} s at "
          f"< {REFUSED_MB} MB; under it compared within {COMPARED_SECONDS:g} s at < {COMPARED_MB} MB)")  # fmt: skip
    for shape in shapes:
        for label, megabytes in (("over", over), ("under", under)):
            folder = work / f"{shape}-{megabytes:g}"
            archive = _written(folder / "a", shape, megabytes)
            shutil.copytree(folder / "a", folder / "b")
            size = archive.stat().st_size / 1024 / 1024
            seconds, rss, code, said = measure([GATEKIT, "drift", "a", "b", "--out", "out"], folder)
            refused = code == 2 and "larger than gatekit drift reads" in said
            if label == "over":
                ok = refused and seconds <= REFUSED_SECONDS and rss < REFUSED_MB
            else:
                ok = code in (0, 1) and seconds <= COMPARED_SECONDS and rss < COMPARED_MB
            met &= ok
            print(f"{shape:7} {size:6.0f} MB  drift A B   {seconds:7.2f} s  {rss:7.0f} MB  exit {code}  "
                  f"{'met' if ok else 'NOT met'}{'  ' + said[:100] if code not in (0, 1) else ''}")  # fmt: skip
            if replay and label == "under" and shape != "orders":
                seconds, rss, code, said = measure([GATEKIT, "drift", "a", "--out", "replayed"], folder)
                print(f"{shape:7} {size:6.0f} MB  drift A     {seconds:7.2f} s  {rss:7.0f} MB  exit {code}  (a replay)")
            shutil.rmtree(folder)
    print("goals: " + ("met" if met else "NOT met"))
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=261, help="an archive over drift's limit")
    parser.add_argument("--under", type=float, default=60, help="an archive under drift's limit")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--replay", action="store_true", help="also replay the pages and answer shapes")
    parser.add_argument("--keep", type=Path, help="work in this folder (default: a temporary one, removed)")
    parser.add_argument("--write", nargs=3, metavar=("SHAPE", "MB", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:  # (the child of _written)
        write_recording(Path(args.write[2]), args.write[0], float(args.write[1]))
        return 0
    shapes = [shape for shape in args.shapes.split(",") if shape]
    if args.keep:
        return 0 if run(shapes, args.megabytes, args.under, args.replay, args.keep) else 1
    with tempfile.TemporaryDirectory(prefix="bench-drift-") as work:
        return 0 if run(shapes, args.megabytes, args.under, args.replay, Path(work)) else 1


if __name__ == "__main__":
    sys.exit(main())
