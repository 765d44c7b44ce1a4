"""Timings as drift measures them, and the ``[simulator]`` section it fits (issue 38, points 3 and 4).

An order's processing time is known only as finely as the merchant polled it: between the last poll that said
``processing`` and the first poll (or callback) that said it was final.  Two runs differ only when those spans are
apart, and the row says how finely each was measured.  The fitted section says, for each figure, how well the
recording knows it: ``latency`` from the orders no payer had to act on, ``answer_delay`` from A's answer times
alone, ``omit_fields`` and ``[simulator.outcomes]`` from the fields and outcomes that differed.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.test_drift_recordings import JSON, SALE, run_drift, write_recording
from toolkit.callbacks import Received
from toolkit.drift import drift_report
from toolkit.drift.report import settings_toml
from toolkit.exchange import Exchange
from toolkit.payer.visits import Visit
from toolkit.recording import har
from toolkit.simulator.settings import default_settings, simulator_table

BASE = "https://gateway.example/paynet"
T0 = datetime(2026, 11, 25, 21, 55, tzinfo=UTC)


def _exchange(at: float, operation: str, fields: dict[str, str], answer: dict[str, str], took: float) -> Exchange:
    return Exchange(operation, "POST", f"{BASE}/api/v2/{operation}/1001", {"Accept": JSON}, tuple(fields.items()),
                    200, {"Content-Type": JSON}, json.dumps(answer), took, at=T0 + timedelta(seconds=at))  # fmt: skip


def order(
    polls: Sequence[tuple[float, str]],
    *,
    took: float = 0.05,
    callback: float | None = None,
    operation: str = "sale",
    cvv2: str = "123",
    final: dict[str, str] | None = None,
    payer: bool = False,
    orderid: str = "8056020",
    start: float = 0.0,
) -> list[Any]:
    """One order's records: its request at ``start`` answered in ``took`` s, then a status poll sent ``at`` s after
    that answer for each ``(at, status)`` of ``polls`` (each answered in ``took`` s too), a callback ``callback`` s
    after the answer, the payer on the gateway's page first when ``payer``.  ``final``: what the final poll says
    besides its status (``descriptor``, ``error-code``...)."""
    end = start + took
    ack = {"type": "async-response", "paynet-order-id": orderid, "serial-number": "s-1", "merchant-order-id": "inv-1"}
    records: list[Any] = [_exchange(start, operation, {**SALE, "cvv2": cvv2}, ack, took)]
    if payer:
        records.append(Visit(T0 + timedelta(seconds=end + 0.01), "POST", "https://gateway.example/form/1", 200, 0.01,
                             "pay on the payment page", "gateway", action={"action": "pay"}))  # fmt: skip
    for at, status in polls:
        answer = {"type": "status-response", "paynet-order-id": orderid, "serial-number": f"s-{at}",
                  "status": status, "merchant-order-id": "inv-1", "transaction-type": "sale"}  # fmt: skip
        if status != "processing":
            answer |= final or {}
        records.append(_exchange(end + at, "status", {"client_orderid": "inv-1", "orderid": orderid}, answer, took))
    if callback is not None:
        params = {"type": "sale", "status": polls[-1][1], "orderid": orderid, "client_orderid": "inv-1"}
        came = T0 + timedelta(seconds=end + callback)
        records.append(Received("callback", "POST", "/callback", params, True, 0.0, came, url="http://x.example/cb"))
    return records


def recording(folder: Path, scenarios: dict[str, list[Any]]) -> Path:
    return write_recording(folder, {name: har.archive(records, title=name) for name, records in scenarios.items()})


def test_a_processing_time_within_what_the_polls_resolve_is_no_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sandbox profile polls every 3 s: an order decided in 0.1 s is seen final 3 s after the sale; the
    simulator's replay, polling every few ms, sees it final after 0.1 s.  Both saw what their polls could."""
    a = recording(tmp_path / "sandbox", {"a sale": order([(3.0, "approved")])})
    b = recording(tmp_path / "replay", {"a sale": order([(0.05, "processing"), (0.1, "approved")])})
    ran = run_drift(capsys, a, b, "--out", tmp_path / "out")
    assert (ran.code, ran.err) == (0, ""), ran.out
    assert "no difference" in ran.out


def test_a_processing_time_beyond_the_polls_resolution_is_a_difference_that_says_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = recording(tmp_path / "sandbox", {"a sale": order([(0.9, "processing"), (1.0, "approved")])})
    b = recording(tmp_path / "replay", {"a sale": order([(0.05, "processing"), (0.1, "approved")])})
    ran = run_drift(capsys, a, b, "--out", tmp_path / "out")
    assert ran.code == 1, ran.out
    found = json.loads((tmp_path / "out" / "drift.json").read_text())["differences"]
    assert [(d["kind"], d["operation"]) for d in found] == [("processing-time", "sale")]
    # (from each order's answer: its last poll saying processing answered 0.95 s after, the next one 1.05 s)
    assert (found[0]["a"], found[0]["b"]) == ("0.95-1.05 s", "0.1-0.15 s")
    assert "polls resolve 0.1 s" in found[0]["note"], found[0]
    row = next(line for line in ran.out.splitlines() if line.startswith("processing-time"))
    assert "0.95-1.05 s" in row and "polls resolve 0.1 s" in row, ran.out


def _fitted(tmp_path: Path, a: dict[str, list[Any]], b: dict[str, list[Any]]) -> tuple[dict[str, Any], list[str]]:
    report = drift_report(recording(tmp_path / "a", a), recording(tmp_path / "b", b))
    lines = settings_toml(report.fitted)
    return tomllib.loads("\n".join(lines))["simulator"], lines


def _said(lines: list[str], name: str) -> str:
    """The comment above a setting of the fitted section: what its figure rests on."""
    number = next(number for number, line in enumerate(lines) if line.startswith(f"{name} = "))
    assert lines[number - 1].startswith("# "), lines
    return lines[number - 1]


def test_the_answer_delay_is_fitted_to_as_answers_alone(tmp_path: Path) -> None:
    """Two recordings of gateways that both answer in 0.25 s: a simulator like A waits 0.25 s, whatever B does
    (it suggested 0: A's answers less B's)."""
    slow = {"a sale": order([(0.1, "approved")], took=0.25)}
    fitted, lines = _fitted(tmp_path, slow, slow)
    assert fitted["answer_delay"] == 0.25
    said = _said(lines, "answer_delay")
    assert "0.25 s" in said and "rounded to 0.05 s" in said, said


def test_the_latency_leaves_out_orders_the_payer_acted_on(tmp_path: Path) -> None:
    """A stand-in deciding at once (latency 0): its callback comes as the sale is answered; a hosted page the payer
    filled in for a second is no measure of the gateway's latency (it suggested 0.1, then the payer's time)."""
    a = {
        "a sale": order([(0.1, "approved")], callback=0.005),
        "a hosted page": order([(1.5, "approved")], operation="sale-form", payer=True, orderid="8056021"),
    }
    fitted, lines = _fitted(tmp_path, a, a)
    assert fitted["latency"] == 0
    said = _said(lines, "latency")
    assert "1 order" in said, said


def test_late_callbacks_of_a_busy_machine_do_not_move_the_latency(tmp_path: Path) -> None:
    """A stand-in deciding at once, its callbacks to two orders 60 ms late (a loaded machine): the orders together
    allow 0-4 ms, which the prompt one says (the medians of their spans said 0-60 ms: latency 0.05)."""
    a = {
        "a sale": order([(0.1, "approved")], callback=0.004),
        "another sale": order([(0.1, "approved")], callback=0.06, orderid="8056021"),
        "a third sale": order([(0.1, "approved")], callback=0.07, orderid="8056022"),
    }
    fitted, lines = _fitted(tmp_path, a, a)
    assert fitted["latency"] == 0 and "3 orders without a payer step: the span they all allow" in _said(
        lines, "latency"
    )


def test_the_latency_of_one_poll_is_the_middle_of_what_it_can_be_and_says_so(tmp_path: Path) -> None:
    """A proxy recording: the sale answered in 0.25 s, one poll 2 s later (answered in 0.25 s too) saw it final.
    The gateway decided somewhere in those 2.25 s (1.5 injected): it suggested 2.25, as if it knew."""
    a = {"order 1": order([(2.0, "approved")], took=0.25)}
    fitted, lines = _fitted(tmp_path, a, a)
    assert 1.0 <= fitted["latency"] <= 1.25
    said = _said(lines, "latency")
    assert "0-2.25 s" in said and "resolve 2.25 s" in said, said


def test_a_field_left_out_and_another_outcome_are_fitted_and_the_section_loads(tmp_path: Path) -> None:
    declined_a = {"status": "declined", "error-code": "05", "error-message": "Do not honor"}
    declined_b = {"status": "declined", "error-code": "51", "error-message": "Insufficient funds",
                  "descriptor": "GATEKIT"}  # fmt: skip
    a = {"a decline": order([(0.1, "declined")], cvv2="116", final=declined_a)}
    b = {"a decline": order([(0.1, "declined")], cvv2="116", final=declined_b)}
    fitted, lines = _fitted(tmp_path, a, b)
    assert fitted["omit_fields"] == ["descriptor"]
    assert fitted["outcomes"] == {"116": {"status": "declined", "error_code": "05", "error_message": "Do not honor"}}
    settings = default_settings(**simulator_table(fitted, "the fitted section"))
    assert settings.outcome_for_cvv("116").error_code == "05" and settings.omit_fields == ("descriptor",)
    assert "never sent" in _said(lines, "omit_fields")
