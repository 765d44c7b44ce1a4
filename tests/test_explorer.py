"""The explorer: forms from the catalogue, every button of the panel, masking, and exports that run in the suite."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.test_notebooks import leaks
from toolkit.explorer import Explorer, ExplorerModel, ExportError, GatewaySession
from toolkit.explorer.export import export_feature, scenario_name
from toolkit.explorer.gherkin import stable_text
from toolkit.explorer.history import Action, Tracked
from toolkit.fields import luhn_ok
from toolkit.flows import Order
from toolkit.models import AsyncResponse, StatusResponse
from toolkit.operations import OPERATIONS
from toolkit.testdata.cards import card_for
from toolkit.testdata.outcomes import CARD_OUTCOMES, outcome_for_cvv

ROOT = Path(__file__).resolve().parents[1]
EXPORTED = ROOT / "features" / "exported"


def plain(text: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<style>.*?</style>|<[^>]+>", " ", text)).strip())


@pytest.fixture(scope="module")
def session() -> Iterator[GatewaySession]:
    with GatewaySession.embedded() as running:
        yield running


@pytest.fixture
def panel(session: GatewaySession) -> Iterator[Explorer]:
    explorer = Explorer(session)
    yield explorer
    explorer.close()


@pytest.fixture
def model(session: GatewaySession) -> ExplorerModel:
    return ExplorerModel(session)


# --- forms from the catalogue -------------------------------------------------------------------


@pytest.mark.parametrize("name", list(OPERATIONS), ids=list(OPERATIONS))
def test_every_operation_gets_its_form_from_the_catalogue(panel: Explorer, name: str):
    panel.operation.value = name
    op = OPERATIONS[name]
    assert list(panel.inputs) == list(op.fields)
    assert [w.description.split(" ")[0] for w in panel.form.children] == list(op.fields)
    for required in op.required:
        assert panel.inputs[required].description.endswith("*")
    assert not leaks(" ".join(panel.texts()))


def test_the_operation_list_is_the_catalogue(panel: Explorer):
    assert [value for _, value in panel.operation.options] == list(OPERATIONS)


def test_card_operations_offer_the_outcome_table(panel: Explorer):
    labels = list(panel.outcome.options)
    assert labels[:3] == ["approved", "approved (4-digit CVV2)", "3-D Secure challenge"]
    assert "frictionless (3-D Secure, no challenge)" in labels
    assert "insufficient funds" in labels and "declined (any other CVV2)" in labels
    assert sum(label.startswith("3-D Secure 1.0.2") for label in labels) == 4
    panel.outcome.value = "insufficient funds"
    assert outcome_for_cvv(panel.model.values["cvv2"]).name == "insufficient-funds"
    assert panel.inputs["cvv2"].value == "***" and panel.inputs["cvv2"].disabled
    panel.outcome.value = "3-D Secure 1.0.2: authentication failed (1.02)"
    assert (panel.inputs["amount"].value, panel.inputs["credit_card_number"].value) == ("1.02", "444400******4444")


def test_amount_rules_for_card_less_operations_and_none_for_follow_ups(panel: Explorer):
    panel.operation.value = "payout"
    assert list(panel.outcome.options) == ["approved", "insufficient funds", "unknown (acquirer unreachable)"]
    panel.outcome.value = "insufficient funds"
    assert panel.inputs["amount"].value == "10.13"
    panel.operation.value = "capture"
    assert panel.outcome.disabled and panel.card.disabled


def test_card_list_changes_the_card_without_showing_it(panel: Explorer):
    panel.card.value = "a random Luhn-valid card"
    shown = panel.inputs["credit_card_number"].value
    assert "******" in shown and shown not in ("453897******6732", "444455******1111")
    assert luhn_ok(panel.model.values["credit_card_number"])
    panel.card.value = panel.card.options[1]
    assert panel.inputs["credit_card_number"].value == "444455******1111"


def test_card_data_cannot_be_typed_into_the_panel(panel: Explorer):
    panel.inputs["credit_card_number"].value = "4111111111111111"
    assert "card data: choose it with the outcome and card lists" in plain(panel.message.value)
    assert panel.inputs["credit_card_number"].value == "453897******6732"


# --- every button -------------------------------------------------------------------------------


def test_send_shows_request_signature_response_and_timeline(panel: Explorer):
    panel.send_button.click()
    assert "sale sent: order" in plain(panel.message.value)
    assert panel.orders.label.endswith("10.42 EUR, approved")
    request = plain(panel.panes["request"].value)
    assert "credit_card_number 453897******6732" in request and "cvv2 ***" in request
    signature = plain(panel.panes["signature"].value)
    assert "SHA-1(endpointId + client_orderid + amount_in_minor_units + email + merchant_control_key)" in signature
    assert "amount 1042" in signature and "<merchant_control_key>" in signature
    assert "async-response" in plain(panel.panes["response"].value)
    assert "approved" in plain(panel.panes["response"].value)
    assert "→ request sale 10.42 EUR" in plain(panel.panes["timeline"].value)


def test_new_test_data_gives_a_new_payer_and_order_id(panel: Explorer):
    before = (panel.inputs["client_orderid"].value, panel.inputs["email"].value)
    panel.new_data_button.click()
    after = (panel.inputs["client_orderid"].value, panel.inputs["email"].value)
    assert after[0] != before[0] and after[1].endswith((".com", ".org", ".net"))


def test_a_field_edited_in_the_panel_is_sent_and_noted_in_the_export(panel: Explorer):
    panel.inputs["order_desc"].value = "edited by hand"
    panel.send_button.click()
    assert ("order_desc", "edited by hand") in panel.model.last.exchange.request_fields  # type: ignore[union-attr]
    panel.export_button.click()
    assert "# edited in the explorer, not expressed by the steps: order_desc" in panel.exported.value


def test_the_client_refuses_bad_input_before_sending(panel: Explorer):
    panel.inputs["amount"].value = "ten"
    panel.send_button.click()
    message = plain(panel.message.value)
    assert "sale not sent" in message and "amount" in message
    assert panel.model.history == []


def test_status_button_brings_the_order_up_to_date(panel: Explorer):
    assert panel.status_button.disabled
    panel.send_button.click()
    panel.status_button.click()
    assert "status of sale" in plain(panel.message.value) and "approved" in plain(panel.message.value)


def test_payer_button_passes_the_3ds_challenge(panel: Explorer):
    panel.outcome.value = "3-D Secure challenge"
    panel.send_button.click()
    assert "the payer must act" in panel.orders.label
    panel.payer_button.click()
    assert panel.model.require_selected().state.value == "approved"  # type: ignore[union-attr]
    timeline = plain(panel.panes["timeline"].value)
    assert "payer answered the 3-D Secure 2 page with the right password" in timeline
    assert "payer redirect: status processing (control verified)" in timeline
    assert [a.operation for a in panel.model.history][1:] == [
        "payer:method", "upload_method_url_result", "payer:challenge", "upload_cres_result"
    ]  # fmt: skip


def test_password_and_method_lists_change_what_the_payer_does(panel: Explorer):
    panel.outcome.value = "3-D Secure challenge"
    panel.password.value, panel.method.value = "wrong", "absent"
    panel.send_button.click()
    panel.payer_button.click()
    assert panel.model.require_selected().status.error_message == "3-D Secure authentication failed"  # type: ignore[union-attr]
    panel.export_button.click()
    assert "And the merchant reports the method step as absent" in panel.exported.value
    assert "And the payer answers the challenge with a wrong password" in panel.exported.value
    assert 'Then the order is declined with "3-D Secure authentication failed"' in panel.exported.value


def test_payer_button_pays_on_the_hosted_page(panel: Explorer):
    panel.operation.value = "sale_form"
    panel.send_button.click()
    panel.payer_button.click()
    assert panel.orders.label.endswith("approved")
    assert "payer paid on the hosted page" in plain(panel.panes["timeline"].value)


STEP_FLOWS = {
    "capture": ("preauth", "10.00", "capture"),
    "return": ("sale", "3.00", "return"),
    "void": ("sale", "", "void"),
    "card ref + rebill": ("sale", "", "make_rebill"),
    "payout-pay": ("payout_check", "", "payout_pay"),
}


@pytest.mark.parametrize("step", list(STEP_FLOWS), ids=list(STEP_FLOWS))
def test_each_next_step_button_runs_on_the_selected_order(panel: Explorer, step: str):
    operation, amount, made = STEP_FLOWS[step]
    panel.operation.value = operation
    panel.send_button.click()
    enabled = {name for name, button in panel.step_buttons.items() if not button.disabled}
    assert step in enabled and enabled == set(panel.model.next_steps())
    panel.amount.value = amount
    panel.step_buttons[step].click()
    assert panel.model.history[-1].operation == made and panel.model.history[-1].created is not None
    assert panel.model.history[-1].created.state.value == "approved"  # type: ignore[union-attr]
    assert made in plain(panel.message.value)


def test_next_step_buttons_are_disabled_where_they_do_not_apply(panel: Explorer):
    assert all(button.disabled for button in panel.step_buttons.values())
    panel.send_button.click()
    assert panel.step_buttons["capture"].disabled and panel.step_buttons["payout-pay"].disabled
    refusal = panel.model.run_step("capture").message
    assert refusal == "capture does not apply to a sale; it takes: return, void, card ref + rebill"


def test_a_refused_step_shows_the_gateway_message(panel: Explorer):
    panel.send_button.click()
    panel.amount.value = "99.00"
    panel.step_buttons["return"].click()
    assert "exceeds the 10.42 EUR still available" in plain(panel.message.value)
    assert panel.model.history[-1].refusal


def test_orders_list_selects_the_order_steps_and_timeline_work_on(panel: Explorer):
    panel.send_button.click()
    first = panel.orders.value
    panel.send_button.click()
    assert panel.orders.value != first
    panel.orders.value = first
    assert panel.model.require_selected().orderid == first
    assert f"timeline of sale {first}" in plain(panel.panes["timeline"].value)


def test_export_new_scenario_and_save_buttons(panel: Explorer, tmp_path: Path):
    panel.send_button.click()
    panel.amount.value = "3.00"
    panel.step_buttons["return"].click()
    panel.export_button.click()
    assert panel.tabs.selected_index == 4
    assert panel.exported.value.splitlines()[-5:] == [
        "    Given a card that is approved",
        "    When the merchant sends a sale of 10.42 EUR",
        "    Then the order is approved",
        "    When the merchant returns 3.00 EUR",
        "    Then every return is approved",
    ]
    panel.save_path.value = str(tmp_path / "sub" / "explorer.feature")
    panel.save_button.click()
    assert (tmp_path / "sub" / "explorer.feature").read_text() == panel.exported.value
    panel.new_scenario_button.click()
    assert panel.exported.value == "" and panel.model.history == []
    panel.export_button.click()
    assert "ExportError: nothing to export: send an order first" in plain(panel.message.value)


def test_callbacks_checkbox_adds_the_callback_steps(panel: Explorer):
    panel.include_callbacks.value = True
    panel.send_button.click()
    panel.model.session.receiver.wait_for_callback(orderid=panel.orders.value)
    panel.export_button.click()
    assert 'And the gateway calls the merchant back with a signed "approved"' in panel.exported.value
    assert "And the callback matches the status" in panel.exported.value


def test_export_refuses_what_it_cannot_express(panel: Explorer):
    panel.operation.value = "preauth"
    panel.outcome.value = "insufficient funds"
    panel.send_button.click()
    panel.export_button.click()
    assert "the suite sends preauths only as 'Given an approved preauth of ...'" in plain(panel.message.value)


def test_nothing_in_the_panel_shows_card_data_or_the_key(panel: Explorer):
    seen: list[str] = []

    def look() -> None:
        seen.extend(panel.texts())

    for outcome in ("approved", "3-D Secure challenge", "insufficient funds"):
        panel.outcome.value = outcome
        panel.send_button.click()
        look()
    panel.orders.value = panel.orders.options[1][1]
    panel.payer_button.click()
    look()
    for name in ("payout", "payout_check", "transfer", "make_rebill", "create_card_ref_v4"):
        panel.operation.value = name
        look()
        panel.send_button.click()
        look()
    texts = "\n".join(seen)
    assert "453897******6732" in texts and "cvv2 ***" in plain(texts) and "RSA-SHA256" in texts
    assert leaks(texts) == []


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
    ],
    ids=["no-step", "other-order", "processing", "currency", "empty"],
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
        stable_text("payout-check orderid 8056032 was already paid by orderid 8056033") == "was already paid by orderid"
    )
    with pytest.raises(ExportError, match="no stable words"):
        stable_text("8056020")


def test_scenario_names_say_what_was_done():
    sale = _tracked("sale")
    actions = [Action("sale", created=sale), Action("payer:challenge", sale), Action("upload_cres_result", sale),
               Action("return", sale, refusal="no")]  # fmt: skip
    assert scenario_name(actions) == "Recorded in the explorer: sale with 3-D Secure, return (refused)"


# --- exported scenarios run green in the suite --------------------------------------------------

Recipe = Callable[[ExplorerModel], None]


def _sale_then_returns(m: ExplorerModel) -> None:
    m.set_value("amount", "10.00")
    m.send()
    for amount in ("3.00", "2.50", "", "0.01"):
        m.run_step("return", amount)


def _preauth_captured_in_part(m: ExplorerModel) -> None:
    m.select_operation("preauth")
    m.set_value("amount", "30.00")
    m.send()
    for amount in ("10.00", "15.00", "5.01"):
        m.run_step("capture", amount)


def _three_ds_challenge(m: ExplorerModel) -> None:
    m.select_outcome("3-D Secure challenge")
    m.send()
    m.follow_as_payer()
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
    m.run_step("payout-pay")


def _three_ds_v1(m: ExplorerModel) -> None:
    for label in ("3-D Secure 1.0.2: fully authenticated (1.00)", "3-D Secure 1.0.2: authentication failed (1.02)"):
        m.select_outcome(label)
        m.send()
        m.follow_as_payer()


def _frictionless(m: ExplorerModel) -> None:
    m.select_outcome("frictionless (3-D Secure, no challenge)")
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
    "three_ds_v1": _three_ds_v1,
    "frictionless": _frictionless,
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
