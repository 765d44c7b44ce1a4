"""The refusals issue 8 names, by hand-built requests, and the lenient mode that lets them through with a warning.

Strict (the default): a missing ``login``, another merchant's ``login``, a follow-up whose
``client_orderid`` is not the order's, a misspelled mandatory field (the spellings gatekit's client
used to send on the 3-D Secure uploads included) are refused by name; an expired card is declined
with the expired-card reason, while two-digit years and one-digit months are fine (S10).
Lenient (``lenient = true`` in ``[simulator]`` or per merchant, ``gatekit simulate --lenient``):
the same requests are accepted and the journal (``GET /_sim/journal``) records a warning.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.wire.build import minimal, values_for
from tests.wire.gateway import CONTROL_KEY, LOGIN, PRIVATE_KEY, Answer, Gateway, names_field
from tests.wire.orders import Orders, new_id
from tests.wire.table import wire
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import load_settings

OTHER_LOGIN = "other-shop"
OTHER_KEY = "OTHER-SHOP-CONTROL-KEY-0001"
OTHER_ENDPOINT = "1002"
PUBLIC_KEY = PRIVATE_KEY.parent / "demo-public.pem"
FOLLOW_UPS = ("capture", "return", "void", "status", "create-card-ref")
MODES = (pytest.param(True, id="json"), pytest.param(False, id="legacy"))


def two_merchants(tmp: Path, *, simulator: str = "", other: str = "") -> Path:
    """A settings file with the demo merchant (endpoint 1001) and ``other-shop`` (endpoint 1002)."""
    path = tmp / "two-merchants.toml"
    path.write_text(
        f"[simulator]\n{simulator}\n\n"
        f'[[merchant]]\nlogin = "{LOGIN}"\ncontrol_key = "{CONTROL_KEY}"\nendpoint_ids = [1001]\n'
        f'endpoint_group_ids = [2001]\nrsa_public_key_file = "{PUBLIC_KEY}"\npayout_balance = "10000.00"\n\n'
        f'[[merchant]]\nlogin = "{OTHER_LOGIN}"\ncontrol_key = "{OTHER_KEY}"\nendpoint_ids = [{OTHER_ENDPOINT}]\n'
        f"{other}\n"
    )
    return path


@pytest.fixture(scope="module")
def simulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimulatorServer]:
    """Strict, with a second merchant (``other-shop``) beside the demo merchant."""
    with SimulatorServer(load_settings(two_merchants(tmp_path_factory.mktemp("strict")))) as running:
        yield running


def follow_up(gateway: Gateway, orders: Orders, name: str, **changes: str) -> dict[str, str]:
    """Follow-up ``name`` on a fresh order (mandatory fields and ``orderid``), ``changes`` applied, signed.

    A change to ``""`` leaves the field out; the control covers the fields as sent.
    """
    op = wire(name)
    values = values_for(op, orders)
    fields = {n: values[n] for n in (*op.mandatory, "orderid") if n != "control"}
    fields.update(changes)
    return gateway.with_control(op, {k: v for k, v in fields.items() if v != ""})


def refused(answer: Answer, name: str, *, json_mode: bool = True) -> None:
    assert answer.http_status == (400 if json_mode else 200), answer.describe()
    assert answer.type == "validation-error", answer.describe()
    assert names_field(answer.message, name), f"the refusal does not name {name}: {answer.describe()}"
    assert not names_field(answer.message, "control"), f"refused for its control, not {name}: {answer.describe()}"


def accepted(answer: Answer, expected: str = "async-response") -> None:
    assert answer.http_status == 200 and answer.type == expected, answer.describe()


# --- strict --------------------------------------------------------------------------------------


@pytest.mark.parametrize("json_mode", MODES)
@pytest.mark.parametrize("name", FOLLOW_UPS)
def test_a_follow_up_without_login_is_refused(gateway: Gateway, orders: Orders, name: str, json_mode: bool) -> None:
    answer = gateway.post(wire(name), follow_up(gateway, orders, name, login=""), json_mode=json_mode)
    refused(answer, "login", json_mode=json_mode)


@pytest.mark.parametrize("name", FOLLOW_UPS)
def test_another_merchants_login_is_refused_saying_which(simulator: SimulatorServer, orders: Orders, name: str) -> None:
    """other-shop signs with its own key but addresses the demo merchant's endpoint 1001."""
    request = follow_up(orders.gateway, orders, name)
    intruder = Gateway(simulator.base_url, login=OTHER_LOGIN, key=OTHER_KEY, endpoint_id=orders.gateway.endpoint_id)
    answer = intruder.post(wire(name), intruder.with_control(wire(name), {**request, "login": OTHER_LOGIN}))
    intruder.close()
    refused(answer, "login")
    assert OTHER_LOGIN in answer.message, f"the refusal does not say which login: {answer.describe()}"


@pytest.mark.parametrize("json_mode", MODES)
@pytest.mark.parametrize("name", FOLLOW_UPS)
def test_a_follow_up_with_another_orders_client_orderid_is_refused(
    gateway: Gateway, orders: Orders, name: str, json_mode: bool
) -> None:
    other = orders.approved()
    answer = gateway.post(
        wire(name), follow_up(gateway, orders, name, client_orderid=other.client_orderid), json_mode=json_mode
    )
    refused(answer, "client_orderid", json_mode=json_mode)


@pytest.mark.parametrize("name", ("capture", "status"))
def test_a_follow_up_with_an_unknown_client_orderid_is_refused(gateway: Gateway, orders: Orders, name: str) -> None:
    answer = gateway.post(wire(name), follow_up(gateway, orders, name, client_orderid=new_id("unknown")))
    refused(answer, "client_orderid")


@pytest.mark.parametrize("year", ["2020", "20", str(dt.date.today().year - 1)])
def test_an_expired_card_is_declined_as_expired(orders: Orders, year: str) -> None:
    order = orders.payment("sale", expire_year=year, expire_month="01")
    status = orders.wait(order, lambda s: s["status"] != "processing")
    assert status["status"] == "declined", status.describe()
    assert "expired" in status.message.lower(), f"not the expired-card reason: {status.describe()}"


@pytest.mark.parametrize(("month", "year"), [("1", "99"), ("01", "99"), ("12", "2099"), ("7", "2099")])
def test_two_digit_years_and_one_digit_months_are_accepted(orders: Orders, month: str, year: str) -> None:
    order = orders.payment("sale", expire_month=month, expire_year=year)
    status = orders.wait(order, lambda s: s["status"] != "processing")
    assert status["status"] == "approved", status.describe()


@pytest.mark.parametrize("json_mode", MODES)
@pytest.mark.parametrize(
    ("name", "sent", "expected"),
    [
        pytest.param("upload-cres-result", "client_orderid", "client-order-id", id="cres-client_orderid"),
        pytest.param("upload-cres-result", "cres", "cRes", id="cres-cres"),
        pytest.param("upload-method-url-result", "client_orderid", "client-order-id", id="method-client_orderid"),
        pytest.param("capture", "Login", "login", id="capture-Login"),
        pytest.param("capture", "client-orderid", "client_orderid", id="capture-client-orderid"),
        pytest.param("status", "client_order_id", "client_orderid", id="status-client_order_id"),
    ],
)
def test_a_familiar_misspelling_is_refused_naming_the_documented_spelling(
    gateway: Gateway, orders: Orders, name: str, sent: str, expected: str, json_mode: bool
) -> None:
    """Spellings people (and gatekit's own client until issue 8) send: the gateway sees the field as missing."""
    op = wire(name)
    fields = minimal(op, orders)
    signed = gateway.with_control(op, {k: v for k, v in fields.items() if k != expected})
    answer = gateway.post(op, {**signed, sent: fields[expected]}, json_mode=json_mode)
    refused(answer, expected, json_mode=json_mode)


# --- lenient -------------------------------------------------------------------------------------


def journal_warnings(root_url: str, answer: Answer, login: str = LOGIN) -> list[str]:
    """The journal's warnings for the request that got ``answer`` (matched by its serial number)."""
    entries = requests.get(f"{root_url}/_sim/journal", params={"login": login, "limit": 200}, timeout=10).json()
    matching = [e for e in entries["entries"] if e.get("serial") == answer.fields.get("serial-number")]
    assert matching, f"no journal entry for serial {answer.fields.get('serial-number')}"
    return [str(w) for w in matching[-1]["warnings"]]


def warned_about(warnings: list[str], *names: str) -> bool:
    return any(names_field(w, n) for w in warnings for n in names)


def test_lenient_accepts_a_missing_login_and_warns(lenient: SimulatorServer, lenient_orders: Orders) -> None:
    gateway = lenient_orders.gateway
    answer = gateway.post(wire("capture"), follow_up(gateway, lenient_orders, "capture", login=""))
    accepted(answer)
    assert warned_about(journal_warnings(lenient.root_url, answer), "login")


def test_lenient_accepts_another_orders_client_orderid_and_warns(
    lenient: SimulatorServer, lenient_orders: Orders
) -> None:
    gateway, other = lenient_orders.gateway, lenient_orders.approved()
    request = follow_up(gateway, lenient_orders, "status", client_orderid=other.client_orderid)
    answer = gateway.post(wire("status"), request)
    accepted(answer, "status-response")
    assert warned_about(journal_warnings(lenient.root_url, answer), "client_orderid")


def test_lenient_accepts_the_old_3ds_spellings_and_warns(lenient: SimulatorServer, lenient_orders: Orders) -> None:
    gateway, op = lenient_orders.gateway, wire("upload-cres-result")
    fields = minimal(op, lenient_orders)
    signed = gateway.with_control(op, fields)  # the control is the same whatever the spelling
    old = {"login": signed["login"], "client_orderid": fields["client-order-id"], "orderid": fields["orderid"]}
    answer = gateway.post(op, {**old, "cres": fields["cRes"], "control": signed["control"]})
    accepted(answer)
    assert warned_about(journal_warnings(lenient.root_url, answer), "client-order-id", "cRes", "client_orderid", "cres")


def test_lenient_accepts_a_sale_without_the_address_fields_and_warns(
    lenient: SimulatorServer, lenient_orders: Orders
) -> None:
    gateway, op = lenient_orders.gateway, wire("sale")
    fields = {k: v for k, v in minimal(op, lenient_orders).items() if k not in ("address1", "city", "zip_code")}
    answer = gateway.post(op, gateway.with_control(op, fields))
    accepted(answer)
    assert warned_about(journal_warnings(lenient.root_url, answer), "address1", "city", "zip_code")


def _missing_login_on(gateway: Gateway) -> Answer:
    orders = Orders(gateway)
    return gateway.post(wire("capture"), follow_up(gateway, orders, "capture", login=""))


def test_lenient_from_the_simulator_table_of_the_settings_file(tmp_path: Path) -> None:
    settings = load_settings(two_merchants(tmp_path, simulator="lenient = true"))
    with SimulatorServer(settings) as server:
        gateway = Gateway(server.base_url)
        answer = _missing_login_on(gateway)
        gateway.close()
        accepted(answer)
        assert warned_about(journal_warnings(server.root_url, answer), "login")


def test_lenient_per_merchant_leaves_the_other_merchants_strict(tmp_path: Path) -> None:
    settings = load_settings(two_merchants(tmp_path, other="lenient = true"))
    with SimulatorServer(settings) as server:
        demo = Gateway(server.base_url)
        other = Gateway(server.base_url, login=OTHER_LOGIN, key=OTHER_KEY, endpoint_id=OTHER_ENDPOINT)
        strict_answer, lenient_answer = _missing_login_on(demo), _missing_login_on(other)
        demo.close()
        other.close()
    refused(strict_answer, "login")
    accepted(lenient_answer)


def test_gatekit_simulate_lenient_on_the_command_line() -> None:
    gatekit = Path(sys.executable).parent / "gatekit"
    process = subprocess.Popen(
        [str(gatekit), "simulate", "--port", "0", "--lenient"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = process.stdout.readline() if process.stdout else ""
        assert first.startswith("simulator: "), f"gatekit simulate --lenient did not start: {first!r}"
        base_url = first.split(": ", 1)[1].strip()
        gateway = Gateway(base_url)
        answer = _missing_login_on(gateway)
        gateway.close()
        accepted(answer)
        assert warned_about(journal_warnings(base_url.removesuffix("/paynet"), answer), "login")
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=15)
    assert "Traceback" not in errors, errors
