"""The public PHP library (and its Ruby port) against the strict simulator, unmodified, legacy form and JSON.

Each call goes through the emulated library: its field lists, its validators (``expire_year`` 99),
its control with ``login`` appended from the config, only non-empty fields, ``control`` last, its
parsing of the answer and its refusal of an answer that lacks a field it needs.  Where the library
itself disagrees with the documentation the test says so and expects the documented outcome.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from tests.interop.payments import QUERY_CONFIG, acs_answer, client_id, payment, wait_status
from tests.interop.php_library import PhpLibrary, RubyLibrary
from tests.interop.php_queries import PHP_QUERIES, RUBY_QUERIES
from tests.interop.transport import GatewayRefusal, Transport
from tests.wire.gateway import names_field
from tests.wire.orders import V1_CARD
from toolkit.simulator import SimulatorServer


def _make(kind: str, transport: Transport, simulator: SimulatorServer) -> PhpLibrary:
    if kind == "php":
        return PhpLibrary(transport, simulator.base_url, QUERY_CONFIG, PHP_QUERIES)
    return RubyLibrary(transport, simulator.base_url, QUERY_CONFIG, RUBY_QUERIES)


@pytest.fixture(params=["php", "ruby"])
def library(request: pytest.FixtureRequest, transport: Transport, simulator: SimulatorServer) -> Iterator[PhpLibrary]:
    yield _make(request.param, transport, simulator)


@pytest.fixture
def php(transport: Transport, simulator: SimulatorServer) -> PhpLibrary:
    return _make("php", transport, simulator)


@pytest.fixture
def ruby(transport: Transport, simulator: SimulatorServer) -> PhpLibrary:
    return _make("ruby", transport, simulator)


def approved(library: PhpLibrary, kind: str = "sale", **overrides: str) -> dict[str, str]:
    data = payment(**overrides)
    answer = library.call(kind, data)
    assert answer["type"] == "async-response"
    status = wait_status(library, data)
    assert status["status"] == "approved", status
    return data


def sent(library: PhpLibrary) -> dict[str, str]:
    return dict(library.transport.sent[-1][1])


def test_a_sale_with_a_two_digit_year_is_approved(library: PhpLibrary) -> None:
    approved(library)
    first = dict(library.transport.sent[0][1])
    assert first["expire_year"] == "99" and "login" not in first and list(first)[-1] == "control"


def test_preauth_then_return_releases_it(library: PhpLibrary) -> None:
    data = approved(library, "preauth")
    answer = library.call("return", data)
    assert answer["type"] == "async-response" and sent(library)["login"] == QUERY_CONFIG["login"]
    assert wait_status(library, data)["status"] == "approved"


def test_a_sale_is_returned(library: PhpLibrary) -> None:
    data = approved(library)
    library.call("return", data)
    assert {"amount", "currency", "comment", "login"} <= set(sent(library))
    assert wait_status(library, data)["status"] == "approved"


def test_a_sale_is_voided_with_the_documented_fields(library: PhpLibrary) -> None:
    """Neither library has a void query: it is written in their style from the docs' field list."""
    data = approved(library)
    library.call("void", data)
    status = wait_status(library, data)
    assert status["status"] == "approved" and status.get("transaction-type") == "void", status


def test_the_status_answer_satisfies_the_library(library: PhpLibrary) -> None:
    data = approved(library)
    status = library.run(library.queries["status"], data)
    assert status["type"] == "status-response" and status["merchant-order-id"] == data["payment.clientId"]


def test_a_card_reference_then_the_card_info_the_library_requires(library: PhpLibrary) -> None:
    data = approved(library)
    ref = library.call("create-card-ref", data)
    data["recurrentCard.paynetId"] = ref["card-ref-id"]
    info = library.run(library.queries["get-card-info"], data)  # refuses an answer without its card fields
    assert info["bin"] == data["creditCard.creditCardNumber"][:6]
    assert info["last-four-digits"] == data["creditCard.creditCardNumber"][-4:]


def test_php_make_rebill_is_approved(php: PhpLibrary) -> None:
    data = approved(php)
    data["recurrentCard.paynetId"] = php.call("create-card-ref", data)["card-ref-id"]
    rebill = {**payment(), "recurrentCard.paynetId": data["recurrentCard.paynetId"], "payment.clientId": client_id()}
    assert php.call("make-rebill", rebill)["type"] == "async-response"
    assert wait_status(php, rebill)["status"] == "approved"


def test_the_3ds_challenge_results_are_uploaded_as_documented(library: PhpLibrary, session: requests.Session) -> None:
    """Sale with CVV2 321: method result, then the payer's challenge, then the CRes (cRes, client-order-id)."""
    data = payment(**{"creditCard.cvv2": "321"})
    library.call("sale", data)
    method = wait_status(library, data, lambda s: bool(s.get("html")) or s.get("status") != "processing")
    session.get(method["three-ds-method-url"], timeout=10).raise_for_status()  # the payer's hidden frame loads it
    data["tds.compInd"] = "Y"
    assert library.call("upload-method-url-result", data)["type"] == "async-response"
    challenge = wait_status(library, data, lambda s: "redirect-to" in s or s.get("status") != "processing")
    data["tds.cres"] = acs_answer(session, challenge["redirect-to"], "cres")
    assert library.call("upload-cres-result", data)["type"] == "async-response"
    assert {"client-order-id", "cRes", "login"} <= set(sent(library))
    assert wait_status(library, data)["status"] == "approved"


def test_the_3ds_v1_pares_is_uploaded_as_documented(library: PhpLibrary, session: requests.Session) -> None:
    data = payment(**{"creditCard.creditCardNumber": V1_CARD, "payment.amount": "1.00"})
    library.call("sale", data)
    acs = wait_status(library, data, lambda s: "redirect-to" in s or s.get("status") != "processing")
    data["tds.pares"] = acs_answer(session, acs["redirect-to"], "pares")
    assert library.call("upload-pares-result", data)["type"] == "async-response"
    assert wait_status(library, data)["status"] == "approved"


# --- where the libraries disagree with the documentation ---------------------------------------------


def journal_warnings(simulator: SimulatorServer, serial: str) -> list[str]:
    """The simulator's journal line of one request (its control API, read over plain HTTP)."""
    answer = requests.get(simulator.root_url + "/_sim/journal", params={"limit": 100}, timeout=10)
    line = next(entry for entry in answer.json()["entries"] if entry["serial"] == serial)
    return list(line["warnings"])


def test_capture_signs_an_amount_it_does_not_send_and_is_taken_with_a_warning(
    library: PhpLibrary, simulator: SimulatorServer
) -> None:
    """CaptureQuery.php / capture_query.rb send client_orderid, orderid and login only, but sign
    amountInCents and currency too; the docs (api_v2_capture) and the vectors sign them only when sent.
    The family's own library must work: the simulator takes that control and warns in its journal."""
    data = approved(library, "preauth")
    answer = library.call("capture", data)
    assert "amount" not in sent(library) and answer["type"] == "async-response", answer
    assert wait_status(library, data)["status"] == "approved"
    warnings = journal_warnings(simulator, answer["serial-number"])
    assert any("control signs the order's amount and currency" in warning for warning in warnings), warnings


def test_ruby_make_rebill_signs_the_old_formula_and_is_refused(ruby: PhpLibrary) -> None:
    """make_rebill_query.rb signs end_point + client_id + amount_in_cents + cardrefid; the spec (4.3), the
    docs and the PHP library sign login + client_orderid + cardrefid + amount + currency."""
    data = approved(ruby)
    ref = ruby.call("create-card-ref", data)["card-ref-id"]
    rebill = {**payment(), "recurrentCard.paynetId": ref, "payment.clientId": client_id()}
    with pytest.raises(GatewayRefusal) as refusal:
        ruby.call("make-rebill", rebill)
    assert names_field(refusal.value.answer.get("error-message", ""), "control"), refusal.value.answer
