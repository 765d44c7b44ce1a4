"""``GatewayClient(record=...)`` and ``Recorder``: what a recording keeps, and what it never does; the records it
observes written by the HAR serializer (or another) and read back as the same records."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.leaks import har_errors, leaks
from tests.test_layout import import_graph, module_names
from toolkit.callbacks import Received
from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.exchange import Answered, Exchange, Sent
from toolkit.payer.visits import Visit
from toolkit.recording import Recorder, RecordingRun, har, har_read, read_index, register_serializer, serializers
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
            fields = [("client_orderid", f"{number}-{index}")]
            sent = Sent("POST", f"http://gw.example/api/v2/status/{number}", {}, fields)
            recorder(Exchange.capture("status", sent, Answered(200, {}, "type=status-response\n"), elapsed=0.001))

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


PAN = "4444555566661111"


def test_a_record_built_once_is_written_as_har_and_read_back_as_the_same_record(tmp_path: Path) -> None:
    sent = Sent("POST", "https://gw.example/paynet/api/v2/sale/1001", {"Accept": "application/vnd.pay+json"},
                [("client_orderid", "inv-1"), ("credit_card_number", PAN), ("cvv2", "123"), ("amount", "10.42")],
                signed_with="another key")  # fmt: skip
    answered = Answered(400, {"Content-Type": "application/vnd.pay+json"}, '{"type": "validation-error"}', "refused")
    exchange = Exchange.capture("sale", sent, answered, elapsed=0.0123, findings=[f"card {PAN} echoed"])
    recorder = Recorder()
    recorder(exchange)
    path = recorder.write(tmp_path / "one.har", title="a sale")
    assert har_errors(path) == [] and leaks(path.read_text(), test_cvv2_allowed=True) == []
    [entry] = json.loads(path.read_text())["log"]["entries"]
    assert har.fields_of(entry) == {"client_orderid": "inv-1", "credit_card_number": "444455******1111",
                                    "cvv2": "123", "amount": "10.42"}  # fmt: skip
    said = (entry["_signed_with"], entry["_error"], entry["_findings"])
    assert said == ("another key", "refused", ["card 444455******1111 echoed"])
    [back] = har_read.records(json.loads(path.read_text()))
    assert isinstance(back, Exchange) and back.at is not None and exchange.at is not None
    assert abs((back.at - exchange.at).total_seconds()) < 0.001 and round(back.elapsed, 6) == round(exchange.elapsed, 6)
    assert replace(back, at=exchange.at, elapsed=exchange.elapsed) == exchange


def test_the_recorder_observes_visits_and_arrivals_as_records_and_reads_them_back(tmp_path: Path) -> None:
    at = datetime(2030, 1, 1, tzinfo=UTC)
    visit = Visit(at, "POST", "http://gw/acs/1/answer", 200, 0.2, "answer the 3-D Secure challenge", "acs",
                  shows="the redirect to the merchant (approved)", orderid="8056020",
                  fields=(("password", "secret"), ("cvv2", "***")), final_url="http://gw/acs/1/answer", body="<p/>",
                  action={"action": "challenge", "answer": "right"}, outcome_values={"cvv2": "321"})  # fmt: skip
    callback = Received("callback", "GET", "/callback", {"orderid": "8056020", "status": "approved", "type": "sale"},
                        True, 0.0, at + timedelta(seconds=1), url="http://127.0.0.1:9/callback")  # fmt: skip
    recorder = Recorder()
    for record in (visit, callback, callback):
        recorder(record)
    entries = [har.entry(record) for record in recorder.records]
    assert [entry["_kind"] for entry in entries] == ["visit", "callback", "callback"]
    assert har.fields_of(entries[0]) == {"password": "***", "cvv2": "321"}  # (typed: out; a test CVV2: kept)
    assert entries[1]["request"]["queryString"][0] == {"name": "orderid", "value": "8056020"}
    back = har_read.records(har.archive(recorder.records))
    assert back[0] == replace(visit, fields=(("password", "***"), ("cvv2", "***")))
    assert back[1] == callback and back[2] == replace(callback, duplicate=True)  # (answered 200 before: a duplicate)


def test_har_is_one_serializer_of_the_records_and_another_can_be_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serializers, "_SERIALIZERS", dict(serializers._SERIALIZERS))
    register_serializer("lines", lambda records, title, comment: "".join(f"{title}: {r.operation}\n" for r in records))
    recorder = Recorder()
    recorder(Exchange("status", "POST", "http://gw/status", {}, (), 200))
    assert recorder.write(tmp_path / "x.txt", "a run", serializer="lines").read_text() == "a run: status\n"
    assert har_errors(recorder.write(tmp_path / "x.har")) == []
    with pytest.raises(KeyError, match="no serializer called 'yaml' \\(there are: har, lines\\)"):
        recorder.write(tmp_path / "x.yaml", serializer="yaml")


def test_records_do_not_import_what_observes_them() -> None:
    """Dependencies point one way: the records (the exchange, the payer's visits, the receiver's arrivals) know
    nothing of the recorder, its serializers or the diagrams that take them."""
    graph = import_graph(module_names())
    makers = [
        name for name in graph if name == "toolkit.exchange" or name.startswith(("toolkit.payer", "toolkit.callbacks"))
    ]
    upward = [
        (maker, used)
        for maker in makers
        for used in graph[maker]
        if used.startswith(("toolkit.recording", "toolkit.diagram"))
    ]
    assert makers and upward == []
