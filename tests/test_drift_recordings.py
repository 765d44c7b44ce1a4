"""Recordings made in a test, without a run: a scenario's archive as ``toolkit.recording`` writes it (a sale, its
status and its callback), and a folder with ``index.json``.  The other ``test_drift_*`` files break them in one
place each; the tests here say that, unbroken, they are read and compared as a recorded run is.

``run_drift`` runs ``gatekit drift`` as the command line does (``toolkit.cli.main``) in this process, so that a
test sees its exit status, what it printed and which files it opened.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from toolkit import cli
from toolkit.callbacks import Received
from toolkit.drift import read_recording, traces
from toolkit.exchange import Exchange
from toolkit.recording import har

JSON = "application/vnd.pay+json"
BASE = "https://sandbox.gateway.example/paynet"
SALE = {"client_orderid": "inv-1", "order_desc": "Order 1", "amount": "10.42", "currency": "EUR",
        "address1": "1 Main St", "city": "Springfield", "state": "IL", "zip_code": "62701", "country": "US",
        "phone": "+15555550100", "email": "payer@example.com", "ipaddress": "203.0.113.7",
        "credit_card_number": "453897******6732", "card_printed_name": "JOHN SMITH", "expire_month": "12",
        "expire_year": "2099", "cvv2": "123", "server_callback_url": "http://127.0.0.1:9000/callback",
        "control": "0" * 40}  # fmt: skip


def sale_archive(title: str = "a sale", *, status: str = "approved", message: str = "", operation: str = "sale",
                 answer_extra: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    """A scenario's archive: a sale (``operation``), one status poll that ends on ``status`` (with ``message`` as
    its error-message), and the callback."""
    at = datetime(2026, 11, 25, 21, 55, tzinfo=UTC)
    ack = {"type": "async-response", "paynet-order-id": "8056020", "serial-number": "s-1", "merchant-order-id": "inv-1"}
    final = {"type": "status-response", "paynet-order-id": "8056020", "serial-number": "s-2", "status": status,
             "merchant-order-id": "inv-1", "transaction-type": "sale", **(answer_extra or {})}  # fmt: skip
    if message:
        final["error-message"] = message
    callback = {"type": "sale", "status": status, "orderid": "8056020", "client_orderid": "inv-1"}
    records = [
        _exchange(at, operation, SALE, ack),
        _exchange(at + timedelta(seconds=1), "status", {"client_orderid": "inv-1", "orderid": "8056020"}, final),
        Received("callback", "POST", "/callback", callback, True, 0.0, at + timedelta(seconds=2),
                 url="http://127.0.0.1:9000/callback"),
    ]  # fmt: skip
    return har.archive(records, title=title)


def _exchange(at: datetime, operation: str, fields: dict[str, str], answer: dict[str, str]) -> Exchange:
    """A record as the client makes it (by hand: the fields as a recording keeps them, a test CVV2 as sent)."""
    return Exchange(operation, "POST", f"{BASE}/api/v2/{operation}/1001", {"Accept": JSON}, tuple(fields.items()),
                    200, {"Content-Type": JSON}, json.dumps(answer), 0.05, at=at)  # fmt: skip


def write_recording(folder: Path, archives: dict[str, Any], *, files: dict[str, str] | None = None) -> Path:
    """A recorded run in ``folder``: ``archives`` by scenario name (a HAR document, or bytes written as they are),
    each in ``files[name]`` (default: ``scenario-N.har``), and ``index.json`` naming them."""
    folder.mkdir(parents=True, exist_ok=True)
    scenarios = []
    for number, (name, archive) in enumerate(archives.items()):
        file = (files or {}).get(name, f"scenario-{number}.har")
        if archive is not None:
            data = archive if isinstance(archive, bytes) else json.dumps(archive, indent=1).encode()
            (folder / file).parent.mkdir(parents=True, exist_ok=True)
            (folder / file).write_bytes(data)
        scenarios.append({"name": name, "nodeid": "", "file": file, "outcome": "passed",
                          "started": f"2026-11-25T21:55:0{number}.000+00:00", "tags": []})  # fmt: skip
    index = {"profile": "test", "base_url": BASE, "started": "2026-11-25T21:55:00.000+00:00", "gatekit": "test",
             "simulator": None, "scenarios": scenarios}  # fmt: skip
    (folder / "index.json").write_text(json.dumps(index, indent=1), encoding="utf-8")
    return folder


@dataclass
class Ran:
    code: int
    out: str
    err: str


def run_drift(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> Ran:
    """``gatekit drift ARGV`` in this process: its exit status and what it printed."""
    capsys.readouterr()
    code = cli.main(["drift", *(str(arg) for arg in argv)])
    captured = capsys.readouterr()
    return Ran(code, captured.out, captured.err)


_watching: list[list[str]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _watching and isinstance(args[0], (str, bytes, os.PathLike)):
        _watching[-1].append(os.path.realpath(os.fsdecode(args[0])))


@contextlib.contextmanager
def files_opened() -> Iterator[list[str]]:
    """Every file this process opens meanwhile (the interpreter's audit events: whatever code opens it), by its
    real path."""
    if not getattr(sys, "_drift_tests_audit", False):
        sys.addaudithook(_audit)  # (a hook stays for the process: it records only while a test watches)
        sys._drift_tests_audit = True  # type: ignore[attr-defined]
    seen: list[str] = []
    _watching.append(seen)
    try:
        yield seen
    finally:
        _watching.remove(seen)


def test_a_built_recording_is_read_as_a_recorded_run(tmp_path: Path) -> None:
    folder = write_recording(tmp_path / "a", {"a sale": sale_archive(), "a declined sale": sale_archive(
        status="declined", message="Do not honor")})  # fmt: skip
    recording = read_recording(folder)
    assert [scenario.name for scenario in recording.scenarios] == ["a sale", "a declined sale"]
    assert [len(scenario.archive.entries) for scenario in recording.scenarios] == [3, 3]
    steps = traces(folder)[1].steps
    assert [type(step).__name__ for step in steps] == ["Call", "Wait", "Arrival"]
    assert steps[1].answer["error-message"] == "Do not honor"  # type: ignore[union-attr]


def test_two_built_recordings_of_one_run_show_no_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archives = {"a sale": sale_archive()}
    ran = run_drift(capsys, write_recording(tmp_path / "a", archives), write_recording(tmp_path / "b", archives),
                    "--out", tmp_path / "out")  # fmt: skip
    assert (ran.code, ran.err) == (0, ""), ran.out
    assert "drift: 1 scenario of a (A) against b (B): no difference" in ran.out


def test_a_status_that_differs_is_drift_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_recording(tmp_path / "a", {"a sale": sale_archive(status="approved")})
    b = write_recording(tmp_path / "b", {"a sale": sale_archive(status="declined")})
    ran = run_drift(capsys, a, b, "--out", tmp_path / "out")
    assert ran.code == 1 and "differences not accepted" in ran.out, ran.err
