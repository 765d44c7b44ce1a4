"""``GatewayClient(record=...)`` and ``Recorder``: what a recording keeps, and what it never does."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.leaks import har_errors, leaks
from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.recording import Recorder, RecordingRun, read_index
from toolkit.simulator import SimulatorServer
from toolkit.testdata import sale_fields


def test_a_client_given_a_path_writes_its_exchanges_there_when_it_closes(tmp_path: Path) -> None:
    target = tmp_path / "client.har"
    with SimulatorServer() as simulator:
        client = GatewayClient(simulator.client_config(), record=target)
        ack = client.sale(sale_fields("approved"))
        client.wait_for_final_status(ack)
        with pytest.raises(ValidationError):  # the id is another order's: refused, and recorded all the same
            client.sale(sale_fields("approved", client_orderid=ack.client_orderid, amount="99.00"))
        assert not target.exists()  # written on close, whole
        client.close()
    assert har_errors(target) == []
    text = target.read_text()
    assert leaks(text, test_cvv2_allowed=True) == []
    entries = json.loads(text)["log"]["entries"]
    operations = [entry["_operation"] for entry in entries]
    assert operations[0] == "sale" and operations[-1] == "sale" and set(operations[1:-1]) == {"status"}
    assert entries[-1]["response"]["status"] == 400 and entries[0]["response"]["status"] == 200
    sent = {item["name"]: item["value"] for item in entries[0]["request"]["postData"]["params"]}
    assert sent["credit_card_number"].count("*") == 6 and sent["cvv2"] == "123" and len(sent["control"]) == 40


def test_a_recorder_takes_exchanges_from_several_threads_and_a_run_keeps_one_file_per_name(tmp_path: Path) -> None:
    recorder = Recorder()

    def record(number: int) -> None:
        for index in range(50):
            recorder.exchange(operation="status", method="POST", url=f"http://gw.example/api/v2/status/{number}",
                              headers={}, fields=[("client_orderid", f"{number}-{index}")], status=200,
                              response_headers={}, body="type=status-response\n", elapsed=0.001)  # fmt: skip

    threads = [threading.Thread(target=record, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(recorder) == 200
    run = RecordingRun(tmp_path, profile="proxy", base_url="http://gw.example")
    first = run.keep("order 1", recorder)
    again = run.keep("order 1", recorder)
    assert first == again and har_errors(first) == []
    assert [scenario["file"] for scenario in read_index(tmp_path)["scenarios"]] == [first.name]
