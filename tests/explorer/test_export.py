"""The exporter: phrases, refusals and names without a gateway, and exported scenarios that run green in the suite."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from toolkit.explorer import ExplorerModel, ExportError, GatewaySession
from toolkit.explorer.history import Action, Tracked
from toolkit.exporter.feature import export_feature, scenario_name
from toolkit.exporter.gherkin import stable_text
from toolkit.flows import Order
from toolkit.models import AsyncResponse, StatusResponse
from toolkit.testdata.cards import card_for
from toolkit.testdata.outcomes import CARD_OUTCOMES

ROOT = Path(__file__).resolve().parents[2]
EXPORTED = ROOT / "features" / "exported"


@pytest.fixture(scope="module")
def session() -> Iterator[GatewaySession]:
    with GatewaySession.embedded() as running:
        yield running


# --- the exporter without a gateway -------------------------------------------------------------


def _tracked(operation: str, status: str = "approved", card_outcome: str = "approved", **raw: str) -> Tracked:
    ack = AsyncResponse.from_mapping({"type": "async-response", "paynet-order-id": raw.pop("orderid", "8056020"),
                                      "merchant-order-id": "inv-1"})  # fmt: skip
    order = Order(operation, ack, {"amount": "10.00", "currency": raw.pop("currency", "EUR")}, card_for(card_outcome))
    status_raw = {"type": "status-response", "status": status, "paynet-order-id": ack.orderid, **raw}
    return Tracked(order, status=StatusResponse.from_mapping(status_raw))


def test_every_card_outcome_has_a_phrase_but_the_four_digit_cvv():
    for outcome in CARD_OUTCOMES:
        sale = _tracked("sale", "approved", outcome.name)
        action = Action("sale", created=sale, fields={"amount": "10.00", "currency": "EUR"})
        if outcome.name == "approved-4-digit-cvv":
            with pytest.raises(ExportError, match="no step gives a card with outcome 'approved-4-digit-cvv'"):
                export_feature([action])
        else:
            assert "Given a card that " in export_feature([action])


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (lambda s, o: [Action("transfer", created=s)], "has no step in the suite; the exporter expresses: sale"),
        (lambda s, o: [Action("sale", created=s), Action("capture", target=o, created=s)], "acted on order 8056021"),
        (lambda s, o: [Action("sale", created=o)], "still processing (the payer must act: follow it as the payer)"),
        (lambda s, o: [Action("sale", created=s), Action("return", s, s, {"amount": "1.00", "currency": "USD"})],
         "return in USD: the suite's return steps are written in EUR"),
        (lambda s, o: [], "nothing to export"),
        (lambda s, o: [Action("sale", created=s), Action("payer:challenge", s, detail={"road": "gateway-run"})],
         "the payer answered a challenge the status page was not shown for"),
    ],
    ids=["no-step", "other-order", "processing", "currency", "empty", "gateway-run-challenge-without-its-page"],
)  # fmt: skip
def test_the_exporter_refuses_with_a_clear_message(actions: Callable[..., list[Action]], message: str):
    sale = _tracked("sale")
    other = _tracked("sale", "processing", "3ds-challenge", orderid="8056021", html="<iframe src='x'></iframe>")
    with pytest.raises(ExportError, match=re.escape(message)):
        export_feature(actions(sale, other))


def test_messages_keep_only_their_stable_words():
    assert (
        stable_text("Insufficient funds: payout 10000.42 EUR exceeds the balance 9990.00 EUR") == "Insufficient funds"
    )
    assert stable_text("capture of 30.01 EUR exceeds the 10.42 EUR still available on orderid 8056036 (original)") == (
        "capture of 30.01 EUR exceeds the 10.42 EUR still available on orderid"
    )
    assert (
        stable_text("this payout-check was already paid (by request 3364e105-51f5-411e-a88f-b803ecac36a4)")
        == "this payout-check was already paid"
    )
    with pytest.raises(ExportError, match="no stable words"):
        stable_text("8056020")


def test_scenario_names_say_what_was_done():
    sale = _tracked("sale")
    actions = [Action("sale", created=sale), Action("payer:challenge", sale), Action("upload_cres_result", sale),
               Action("return", sale, refusal="no")]  # fmt: skip
    assert scenario_name(actions) == "Recorded in the explorer: sale with 3-D Secure, return (refused)"
    gateway_run = [Action("sale", created=sale), Action("payer:status-page", sale), Action("payer:challenge", sale)]
    assert scenario_name(gateway_run) == "Recorded in the explorer: sale with 3-D Secure run by the gateway"


# --- exported scenarios run green in the suite --------------------------------------------------

Recipe = Callable[[ExplorerModel], None]


def _sale_then_returns(m: ExplorerModel) -> None:
    m.set_value("amount", "10.00")
    m.send()
    for amount in ("3.00", "2.50", ""):
        m.run_step("return", amount)
    assert "return" not in m.next_steps(), "nothing is left to return: the button is not offered"
    m.select_operation("return")  # the form still sends it, to see the gateway refuse it
    m.set_value("amount", "0.01")
    m.set_value("currency", "EUR")
    m.send()


def _preauth_captured_in_part(m: ExplorerModel) -> None:
    m.select_operation("preauth")
    m.set_value("amount", "30.00")
    m.send()
    for amount in ("10.00", "15.00", "5.01"):
        m.run_step("capture", amount)


def _three_ds_challenge(m: ExplorerModel) -> None:
    m.road = "merchant-run"  # the method step reported, the CRes uploaded (behaviour 12)
    m.select_outcome("3-D Secure challenge")
    m.send()
    m.follow_as_payer()
    m.run_step("return", "4.00")


def _three_ds_gateway_run(m: ExplorerModel) -> None:
    """The default road: the status html shown, nothing uploaded; the payer comes back with the final status."""
    for password in ("right", "wrong"):
        m.password = password
        m.select_outcome("3-D Secure challenge")
        m.send()
        m.follow_as_payer()
        if password == "right":
            m.run_step("return", "4.00")


def _card_ref_and_rebill(m: ExplorerModel) -> None:
    m.set_value("amount", "15.00")
    m.send()
    m.run_step("card ref + rebill")


def _two_step_payout(m: ExplorerModel) -> None:
    m.select_operation("payout_check")
    m.set_value("amount", "25.00")
    m.send()
    m.run_step("payout-pay")
    m.select_order(m.orders[0].orderid)
    assert m.next_steps() == (), "the check is paid: payout-pay is not offered again"
    m.select_operation("payout_pay")
    m.send()


def _three_ds_v1(road: str) -> Recipe:
    def recipe(m: ExplorerModel) -> None:
        m.road = road
        for label in ("3-D Secure 1.0.2: fully authenticated (1.00)", "3-D Secure 1.0.2: authentication failed (1.02)"):
            m.select_outcome(label)
            m.send()
            m.follow_as_payer()

    return recipe


def _not_enrolled(m: ExplorerModel) -> None:
    m.select_outcome("not enrolled (no 3-D Secure step)")
    m.send()
    m.follow_as_payer()
    m.run_step("void")


def _declines_and_unknown(m: ExplorerModel) -> None:
    for label in ("expired card", "stolen card", "declined (any other CVV2)", "unknown (acquirer unreachable)"):
        m.select_outcome(label)
        m.send()


def _refusals(m: ExplorerModel) -> None:
    m.select_operation("preauth")
    m.set_value("amount", "30.00")
    m.send()
    m.run_step("void", "10.00")
    m.run_step("capture", "30.01")


def _payouts(m: ExplorerModel) -> None:
    m.select_operation("payout")
    m.send()
    m.select_outcome("insufficient funds")
    m.send()
    m.select_operation("sale")
    m.send()
    m.select_operation("payout_pay")
    m.send()


def _forms_verification_status(m: ExplorerModel) -> None:
    m.select_operation("account_verification")
    m.send()
    m.select_operation("preauth_form")
    m.send()
    m.follow_as_payer()
    m.run_step("capture", "5.00")
    m.select_operation("sale")
    m.send()
    m.select_operation("status")
    m.set_value("orderid", "")
    m.send()
    m.select_operation("create_card_ref_v4")
    m.send()


def _rebills(m: ExplorerModel) -> None:
    m.send()
    m.run_step("card ref + rebill", "10.13")
    m.select_operation("make_rebill")
    m.set_value("cardrefid", "999999999")
    m.send()


COMMITTED: dict[str, Recipe] = {
    "sale_then_returns": _sale_then_returns,
    "preauth_captured_in_part": _preauth_captured_in_part,
    "three_ds_challenge_then_return": _three_ds_challenge,
    "card_ref_and_rebill": _card_ref_and_rebill,
    "two_step_payout": _two_step_payout,
}
MORE: dict[str, Recipe] = {
    "three_ds_gateway_run": _three_ds_gateway_run,
    "three_ds_v1_gateway_run": _three_ds_v1("gateway-run"),
    "three_ds_v1_merchant_run": _three_ds_v1("merchant-run"),
    "not-enrolled": _not_enrolled,
    "declines_and_unknown": _declines_and_unknown,
    "refusals": _refusals,
    "payouts": _payouts,
    "forms_verification_status": _forms_verification_status,
    "rebills": _rebills,
}


def export(session: GatewaySession, recipe: Recipe) -> str:
    model = ExplorerModel(session)
    recipe(model)
    return model.export()


def run_exported(folder: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GATEWAY_", "GATEKIT_"))}
    env["GATEKIT_EXPORTED_FEATURES"] = str(folder)
    command = [sys.executable, "-m", "pytest", "steps/test_exported.py", "-q", "-p", "no:randomly"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_a_sale_and_a_return_exported_from_the_explorer_run_green(session: GatewaySession, tmp_path: Path):
    model = ExplorerModel(session)
    model.send()
    model.run_step("return", "3.00")
    (tmp_path / "sale_and_return.feature").write_text(model.export())
    run = run_exported(tmp_path)
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]


@pytest.mark.slow
def test_every_kind_of_export_runs_green(session: GatewaySession, tmp_path: Path):
    for name, recipe in {**COMMITTED, **MORE}.items():
        (tmp_path / f"{name}.feature").write_text(export(session, recipe))
    run = run_exported(tmp_path)
    expected = f"{len(COMMITTED) + len(MORE)} passed"  # one scenario per recipe
    assert run.returncode == 0 and expected in run.stdout, run.stdout[-4000:] + run.stderr[-2000:]


@pytest.mark.parametrize("name", list(COMMITTED), ids=list(COMMITTED))
def test_the_committed_examples_are_what_the_exporter_writes(session: GatewaySession, name: str):
    text = export(session, COMMITTED[name])
    path = EXPORTED / f"{name}.feature"
    if os.environ.get("GATEKIT_WRITE_EXPORTED") == "1":
        path.write_text(text)
    assert path.read_text() == text, f"{path} differs from the export; regenerate with GATEKIT_WRITE_EXPORTED=1"
