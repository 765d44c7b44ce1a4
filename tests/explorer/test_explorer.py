"""The explorer panel: forms from the catalogue, every button, and masking (the exporter: test_explorer_export.py)."""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_notebooks import leaks
from toolkit.explorer import Explorer, ExplorerModel, GatewaySession
from toolkit.fields import luhn_ok
from toolkit.operations import OPERATIONS
from toolkit.testdata.outcomes import outcome_for_cvv


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
    shown = [*panel.required.children, *panel.optional.children]
    assert [w.description.split(" ")[0] for w in shown] == list(op.fields)
    assert [w.description for w in panel.optional.children] == list(op.optional)
    assert panel.form.selected_index is None, "the fields are folded until opened"
    for required in op.required:
        assert panel.inputs[required].description.endswith("*")
    assert not leaks(" ".join(panel.texts()))


def test_the_operation_list_is_the_catalogue(panel: Explorer):
    assert [value for _, value in panel.operation.options] == list(OPERATIONS)


def test_card_operations_offer_the_outcome_table(panel: Explorer):
    labels = list(panel.outcome.options)
    assert labels[:3] == ["approved", "approved (4-digit CVV2)", "3-D Secure challenge"]
    assert "not enrolled (no 3-D Secure step)" in labels
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
    payer = ("first_name", "last_name", "email", "address1", "phone")
    before = {name: panel.inputs[name].value for name in ("client_orderid", *payer)}
    panel.new_data_button.click()
    after = {name: panel.inputs[name].value for name in ("client_orderid", *payer)}
    assert after["client_orderid"] != before["client_orderid"] and after["email"].endswith((".com", ".org", ".net"))
    assert [after[name] for name in payer] != [before[name] for name in payer]


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


def test_payer_button_passes_the_3ds_challenge_on_the_gateway_run_road_by_default(panel: Explorer):
    """The shop plugins' way (behaviour 12): the status html shown, the challenge answered, nothing uploaded."""
    assert panel.road.value == "gateway-run"
    panel.outcome.value = "3-D Secure challenge"
    panel.send_button.click()
    assert "the payer must act" in panel.orders.label
    assert "run by the gateway" in plain(panel.message.value)
    panel.payer_button.click()
    assert panel.model.require_selected().state.value == "approved"  # type: ignore[union-attr]
    assert "nothing uploaded" in plain(panel.message.value)
    timeline = plain(panel.panes["timeline"].value)
    assert "it loaded the 3-D Secure method URL and went on to the gateway by itself" in timeline
    assert "payer answered the 3-D Secure 2 page with the right password" in timeline
    assert "payer redirect: status approved (control verified)" in timeline
    assert [a.operation for a in panel.model.history][1:] == ["payer:status-page", "payer:challenge"]
    assert not [e for e in panel.model.session.exchanges if e.operation.startswith("upload_")
                and ("orderid", panel.model.require_selected().orderid) in e.request_fields]  # fmt: skip


def test_payer_button_passes_the_3ds_challenge_on_the_merchant_run_road(panel: Explorer):
    panel.road.value = "merchant-run"
    panel.outcome.value = "3-D Secure challenge"
    panel.send_button.click()
    assert "the merchant reported the method step as completed at once" in plain(panel.message.value)
    panel.payer_button.click()
    assert panel.model.require_selected().state.value == "approved"  # type: ignore[union-attr]
    timeline = plain(panel.panes["timeline"].value)
    assert "payer answered the 3-D Secure 2 page with the right password" in timeline
    assert "payer redirect: status processing (control verified)" in timeline
    assert [a.operation for a in panel.model.history][1:] == [
        "payer:method", "upload_method_url_result", "payer:challenge", "upload_cres_result"
    ]  # fmt: skip


def test_a_road_the_explorer_does_not_know_is_refused(model: ExplorerModel):
    with pytest.raises(ValueError, match="the roads are: gateway-run, merchant-run"):
        model.road = "merchant"
    assert model.road == "gateway-run"


def test_password_and_method_lists_change_what_the_payer_does(panel: Explorer):
    panel.outcome.value = "3-D Secure challenge"
    panel.road.value = "merchant-run"
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
    assert refusal == (
        "capture does not apply: capture applies to preauth, preauth_form or make_rebill_preauth, not to a sale; "
        "it takes: return, void, card ref + rebill"
    )


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
    panel.orders.value = first  # the list's values are the transactions' serial-numbers
    selected = panel.model.require_selected()
    assert selected.key == first
    assert f"timeline of sale {selected.orderid}" in plain(panel.panes["timeline"].value)


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
    panel.model.session.receiver.wait_for_callback(orderid=panel.model.require_selected().orderid)
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


# --- next steps offered only where they apply ---------------------------------------------------


def test_a_fully_captured_preauth_offers_return_and_void_not_capture(model: ExplorerModel):
    model.select_operation("preauth")
    model.set_value("amount", "30.00")
    model.send()
    assert model.next_steps() == ("capture", "return", "void", "card ref + rebill")  # a preauth's card may be stored
    model.run_step("capture", "")  # the whole amount
    preauth = model.find(model.orders[0].orderid)
    assert preauth is not None
    assert model.next_steps(preauth) == ("return", "void", "card ref + rebill")
    assert model.why_not("capture", preauth) == "all of 30.00 EUR is captured"
    model.select_order(preauth.key)
    reversal = model.run_step("return", "10.00")  # a reversal of what was captured: the gateway approves it
    assert reversal.ok and reversal.status is not None and reversal.status.transaction_type == "reversal"
    assert model.next_steps(preauth) == ("return", "card ref + rebill")
    assert model.why_not("void", preauth) == "10.00 EUR was returned: a void no longer applies (use return)"
    model.select_order(preauth.key)
    assert model.run_step("return", "").ok
    assert model.next_steps(preauth) == ("card ref + rebill",)
    assert model.why_not("return", preauth) == "nothing left to return: 30.00 EUR charged, 30.00 EUR returned"


def test_declined_voided_and_paid_orders_offer_nothing_more(model: ExplorerModel):
    model.select_outcome("insufficient funds")
    model.send()
    assert model.next_steps() == ()
    assert model.why_not("return").endswith("is declined, not approved")
    model.select_outcome("approved")
    model.send()
    assert model.run_step("void").ok and model.next_steps() == ()
    model.select_operation("payout_check")
    model.send()
    assert model.next_steps() == ("payout-pay",) and model.run_step("payout-pay").ok
    model.select_order(model.orders[-2].key)
    assert model.next_steps() == () and model.why_not("payout-pay").endswith("was paid already")


def test_a_hold_on_a_stored_card_is_offered_capture_and_the_gateway_takes_it(model: ExplorerModel):
    """make-rebill-preauth makes a ``preauth`` (behaviour section 11): the explorer offers what applies to one."""
    model.send()
    assert model.run_step("card ref + rebill").ok
    model.select_operation("make_rebill_preauth")  # the form takes the card reference just made
    model.send()
    hold = model.require_selected()
    assert (hold.operation, hold.status.transaction_type) == ("make_rebill_preauth", "preauth")  # type: ignore[union-attr]
    assert model.next_steps() == ("capture", "return", "void", "card ref + rebill")
    capture = model.run_step("capture", "")
    assert capture.ok and capture.status is not None and capture.status.transaction_type == "capture"
    assert model.next_steps(hold) == ("return", "void", "card ref + rebill")


# --- what the panel shows -----------------------------------------------------------------------


def test_the_panel_is_compact_with_send_on_top(panel: Explorer):
    top = panel.widget.children[1]
    assert list(top.children) == [panel.operation, panel.outcome, panel.send_button]
    assert panel.form.selected_index is None and panel.options.selected_index is None
    sale = OPERATIONS["sale"]
    assert panel.form.titles == (
        f"required fields ({len(sale.required)}, pre-filled)",
        f"optional ({len(sale.optional)})",
    )


def test_messages_take_the_colour_of_the_outcome(panel: Explorer):
    panel.outcome.value = "insufficient funds"
    panel.send_button.click()
    assert "is declined (Insufficient funds)" in plain(panel.message.value)
    assert "#b00020" in panel.message.value and "#1b7f3b" not in panel.message.value
    assert panel.payer_button.disabled, "nothing for the payer to do on a declined order"
    panel.outcome.value = "approved"
    panel.send_button.click()
    assert "is approved" in plain(panel.message.value) and "#1b7f3b" in panel.message.value
    panel.outcome.value = "3-D Secure challenge"
    panel.send_button.click()
    assert "waits for the payer" in plain(panel.message.value) and "#946200" in panel.message.value
    assert not panel.payer_button.disabled
    assert "3-D Secure, run by the gateway: act as the payer" in plain(panel.message.value)


def test_every_button_says_what_it_did(panel: Explorer, tmp_path: Path):
    panel.new_data_button.click()
    assert plain(panel.message.value).startswith("New test data first_name ")
    assert "credit_card_number 453897******6732" in plain(panel.message.value)
    panel.send_button.click()
    request = panel.panes["request"].value
    panel.export_button.click()
    assert "Exported (see the export tab) Scenario: Recorded in the explorer: sale" in plain(panel.message.value)
    panel.save_path.value = str(tmp_path / "saved.feature")
    panel.save_button.click()
    assert f"Saved {tmp_path / 'saved.feature'} (3 steps)" in plain(panel.message.value)
    assert f"gatekit certify --suite {tmp_path} --suite-only" in plain(panel.message.value)
    panel.new_scenario_button.click()
    assert "New scenario 1 recorded action forgotten; the orders stay selectable" in plain(panel.message.value)
    assert panel.panes["request"].value == request, "a confirmation leaves the last exchange in the tabs"


def test_the_timeline_tab_draws_the_order_and_a_static_view_stands_in_for_widgets(panel: Explorer):
    panel.send_button.click()
    timeline = panel.panes["timeline"].value
    assert "<svg" in timeline and 'data-label="sale 10.42 EUR"' in timeline
    # the sale is answered processing, decided a moment later, and its callback comes after: both views are drawn
    # once all of it is in the timeline (a view drawn while it changes would differ from the other for that alone)
    deadline = time.monotonic() + 10
    while "10.42 EUR, approved" not in panel._repr_mimebundle_()["text/html"] or not any(
        event.kind == "callback" for event in panel.model.timeline()
    ):
        assert time.monotonic() < deadline, "the order was never approved, or its callback never came"
        time.sleep(0.02)
    bundle = panel._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    static = bundle["text/html"]
    assert "a static view" in static and "<svg" in static and "next steps that apply: return, void" in static
    assert panel.snapshot()._repr_html_() == static and leaks(static) == []
