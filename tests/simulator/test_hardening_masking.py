"""Card data never stored or echoed by the simulator (issue 9, item 4, the simulator's side).

A CVV under any CVV-like name is never journaled; a failed OAuth check shows its base string with
card data masked, whatever the field is called; a card number typed into another field is masked
in answers and in the journal.
"""

from __future__ import annotations

import json

import pytest

from toolkit import demo, signing
from toolkit.operations import get_operation
from toolkit.simulator import SimulatorServer
from toolkit.testdata import sale_fields

PAN = "4538977399606732"


def journal_line(server: SimulatorServer, serial: str) -> dict[str, object]:
    return next(line for line in server.journal.entries(limit=1000) if line["serial"] == serial)


@pytest.mark.parametrize("name", ["cvv", "CVV2", "cvc", "card_cvv", "Card-CVC"])
def test_a_cvv_under_any_name_is_never_journaled(server: SimulatorServer, post, with_control, name):
    fields = {k: v for k, v in with_control("sale", sale_fields()).items() if k != "cvv2" or name == "cvv"}
    fields[name] = "987"
    answer = post("/api/v2/sale/1001", fields)
    line = journal_line(server, answer.json()["serial-number"])
    assert line["fields"][name] == "***"  # type: ignore[index]
    assert '"987"' not in json.dumps(line) and "=987" not in json.dumps(line)


def test_a_failed_oauth_check_shows_a_masked_base_string(server: SimulatorServer, post):
    op = get_operation("payout")
    pairs = {"client_orderid": "p-1", "amount": "1.00", "currency": "EUR", "destination_card_no": PAN, "cvv": "432"}
    oauth = signing.make_oauth_params(demo.LOGIN, op.auth.value)
    header = signing.authorization_header(oauth, "d3Jvbmc=")
    answer = post("/api/v2/payout/1001", pairs, headers={"Authorization": header})
    assert answer.status_code == 401
    message = answer.json()["error-message"]
    assert "oauth_signature does not verify" in message
    assert PAN not in message and "cvv%3D432" not in message  # not just "432": oauth_timestamp may hold it
    assert "destination_card_no%3D453897******6732" in message and "cvv%3D***" in message
    line = journal_line(server, answer.json()["serial-number"])
    assert PAN not in json.dumps(line) and "cvv%3D432" not in json.dumps(line) and line["fields"]["cvv"] == "***"  # type: ignore[index]


@pytest.mark.parametrize("field", ["email", "client_orderid", "order_desc"])
def test_a_card_number_typed_into_another_field_is_masked(server: SimulatorServer, post, with_control, field):
    answer = post("/api/v2/sale/1001", with_control("sale", sale_fields(**{field: PAN})))
    line = journal_line(server, answer.json()["serial-number"])
    assert PAN not in json.dumps(line)
    assert PAN not in answer.text  # (merchant-order-id answers the client_orderid as the simulator keeps it)
    assert line["fields"][field] == "453897******6732"  # type: ignore[index]


def test_an_order_id_that_passes_the_luhn_check_but_is_no_card_number_is_answered_as_sent(
    server: SimulatorServer, post, with_control
):
    """A millisecond timestamp as client_orderid passes the Luhn check one time in ten; it begins with 1, which no
    card scheme issues, so the gateway's echo (merchant-order-id) is what the merchant sent, as the real gateway's
    is (a library that compares them refused the masked echo)."""
    timestamp = "1732600000001"
    answer = post("/api/v2/sale/1001", with_control("sale", sale_fields(client_orderid=timestamp))).json()
    assert answer["merchant-order-id"] == timestamp
    asked = {"login": "gatekit-demo", "client_orderid": timestamp, "orderid": answer["paynet-order-id"]}
    status = post("/api/v2/status/1001", with_control("status", asked)).json()
    assert status["merchant-order-id"] == timestamp and status["status"] == "approved"


# --- second round (issue 19, #4): the store, the receiver, reprs ---------------------------------------------

FORMS = (PAN, "4538.9773.9960.6732", "4538977 399606732", "４５３８９７７３９９６０６７３２")


def test_the_db_file_keeps_no_card_number_typed_into_free_text(tmp_path, with_control) -> None:
    """client_orderid, email, the callback and redirect addresses: a card number in them is masked before it is
    stored; the order is still found by the client_orderid sent."""
    from toolkit.client import GatewayClient
    from toolkit.simulator.server import SimulatorServer as Server

    db = tmp_path / "sim.db"
    with Server(db=db) as server, GatewayClient(server.client_config(), validate=False) as client:
        for index, written in enumerate(FORMS):
            fields = sale_fields(client_orderid=f"{written}-{index}")
            if written.isascii() and " " not in written:  # (what an e-mail address and a URL can hold)
                fields.update(email=f"a{written}@example.com", server_callback_url=f"http://127.0.0.1:9/cb?pan={written}",
                              redirect_url=f"http://127.0.0.1:9/back/{written}")  # fmt: skip
            ack = client.sale(fields)
            status = client.status(client_orderid=f"{written}-{index}", orderid=ack.orderid)
            assert status.orderid == ack.orderid and PAN not in repr(status)
    raw = "".join(path.read_bytes().decode("utf-8", "replace") for path in tmp_path.glob("sim.db*"))  # (-wal too)
    digits_only = "".join(ch for ch in raw if ch.isdecimal()).translate(
        str.maketrans("０１２３４５６７８９", "0123456789")
    )
    assert PAN not in raw and "4538.9773.9960.6732" not in raw and "４５３８９７７３９９６０６７３２" not in raw
    assert PAN not in digits_only.replace("453897", "")  # (BIN and last four are kept: never the whole number)


def test_gatekit_listen_prints_merchant_order_and_card_cvv_masked() -> None:
    import io
    import threading

    from toolkit.callbacks import CallbackReceiver
    from toolkit.commands.listen import JsonLines

    out = io.StringIO()
    with CallbackReceiver() as receiver:
        printer = JsonLines(out)
        receiver.observers.append(printer.arrival)
        import requests

        requests.post(receiver.callback_url + f"/{PAN}", data={"merchant_order": PAN, "client_orderid": PAN,
                      "card[cvv]": "987", "status": "approved", "orderid": "8056020"}, timeout=10)  # fmt: skip
        done = threading.Event()
        assert receiver.wait_for_callback(orderid="8056020", timeout=5)
        done.set()
    line = out.getvalue()
    assert PAN not in line and '"987"' not in line and '"card[cvv]": "***"' in line, line
