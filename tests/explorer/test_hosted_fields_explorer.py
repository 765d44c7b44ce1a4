"""A Hosted Fields checkout in the explorer (``toolkit.explorer.hostedflow``): the ticket, the payer's tokenize, the
v4 sale and status, the challenge by redirect-to; the panel's button; the export, which runs green in the suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.explorer.test_export import run_exported
from tests.test_notebooks import leaks
from toolkit.explorer import Explorer, ExplorerModel, ExportError, GatewaySession
from toolkit.explorer.history import HOSTED_FIELDS, PAYER_CHALLENGE, PAYER_TOKENIZE, Action
from toolkit.exporter.feature import export_feature
from toolkit.models import HostedSaleResponse, HostedStatusResponse, Status


@pytest.fixture(scope="module")
def session() -> Iterator[GatewaySession]:
    with GatewaySession.embedded() as running:
        yield running


@pytest.fixture
def model(session: GatewaySession) -> ExplorerModel:
    return ExplorerModel(session, operation="create_ephemeral_ticket")


def checkout(model: ExplorerModel, outcome: str) -> None:
    """A ticket, the payer's card of ``outcome`` typed into the Hosted Fields, the v4 sale of its token."""
    assert model.send().ok
    model.select_outcome(outcome)
    assert model.tokenize().ok
    assert model.send().ok


def test_a_ticket_leads_to_the_sale_v4_form_whose_outcome_chooses_the_card_the_payer_types(model: ExplorerModel):
    assert not model.can_tokenize() and model.outcomes == ()  # (the ticket's form: no card, nothing to choose)
    sent = model.send()
    assert sent.ok and "tokenize as the payer" in sent.message
    assert model.operation.name == "sale_v4" and model.checkout.ticket.startswith("tkt_") and model.can_tokenize()
    labels = [choice.label for choice in model.outcomes]
    assert "3-D Secure challenge" in labels and not any("1.0.2" in label for label in labels)
    assert model.values["hosted_fields_token"] == "" and model.values["customer_browser_info"] == "true"
    model.select_outcome("declined (any other CVV2)")
    tokenized = model.tokenize()
    assert tokenized.ok and model.values["hosted_fields_token"].startswith("hf_")
    assert model.history[-1] == Action(PAYER_TOKENIZE, detail={"outcome": "declined"})
    sale = model.send()
    assert sale.ok and isinstance(model.selected.order.ack, HostedSaleResponse)  # type: ignore[union-attr]
    assert model.selected is not None and model.selected.state is Status.DECLINED
    assert isinstance(model.selected.status, HostedStatusResponse), "followed with status_v4"
    assert model.checkout.token == "" and model.values["hosted_fields_token"].startswith("hf_")  # (sent again: refused)


def test_without_a_ticket_or_off_the_sale_form_there_is_nothing_to_tokenize(session: GatewaySession):
    model = ExplorerModel(session, operation="sale_v4")
    refused = model.tokenize()
    assert not refused.ok and "send create_ephemeral_ticket first" in refused.message
    model.select_operation("sale")
    assert not model.tokenize().ok and not model.can_tokenize()


def test_the_payer_follows_redirect_to_through_the_challenge_and_the_return_is_signed(model: ExplorerModel):
    checkout(model, "3-D Secure challenge")
    tracked = model.selected
    assert tracked is not None and tracked.status is not None and tracked.status.redirect_to
    assert model.payer_can_act()
    model.password = "wrong"
    done = model.follow_as_payer()
    assert done.ok and "came back to the merchant with a signed declined" in done.message
    assert tracked.state is Status.DECLINED and tracked.redirect is not None and tracked.redirect.control_ok
    assert set(tracked.redirect.params) == {"status", "orderid", "merchant_order", "control"}
    assert model.history[-1].operation == PAYER_CHALLENGE and model.history[-1].detail["road"] == HOSTED_FIELDS
    model.select_operation("status_v4")
    assert model.values["orderid"] == tracked.orderid
    status = model.send()
    assert status.ok and status.status is not None and status.status.status is Status.DECLINED


def test_a_ticket_typed_into_twice_is_refused_and_recorded(model: ExplorerModel):
    model.send()
    assert model.tokenize().ok
    again = model.tokenize()
    assert not again.ok and again.title == "tokenize refused: 4003"
    assert model.history[-1].operation == PAYER_TOKENIZE and model.history[-1].detail["code"] == "4003"


def test_nothing_the_explorer_keeps_or_exports_shows_the_card(model: ExplorerModel):
    checkout(model, "3-D Secure challenge")
    model.follow_as_payer()
    kept = repr(model.history) + repr(model.orders) + repr(model.session.timeline.events()) + model.export()
    kept += repr(model.session.payer.visits) + repr(model.display_values())
    assert leaks(kept) == []


def test_the_panel_offers_tokenize_once_a_ticket_is_out(session: GatewaySession):
    panel = Explorer(session, operation="create_ephemeral_ticket")
    try:
        assert panel.tokenize_button.disabled
        panel.send_button.click()
        assert panel.operation.value == "sale_v4" and not panel.tokenize_button.disabled
        panel.tokenize_button.click()
        assert panel.inputs["hosted_fields_token"].value.startswith("hf_")
        panel.send_button.click()
        assert panel.model.selected is not None and panel.model.selected.state is Status.APPROVED
    finally:
        panel.close()


def test_the_exporter_refuses_what_no_step_says():
    with pytest.raises(ExportError, match="no checkout page of the scenario"):
        export_feature([Action(PAYER_TOKENIZE, detail={"outcome": "approved"})])
    with pytest.raises(ExportError, match="the steps charge a token twice, nothing else"):
        export_feature([Action("sale_v4", fields={"hosted_fields_token": "hf_1"}, refusal="Field amount is wrong")])
    page = [Action("create_ephemeral_ticket"), Action(PAYER_TOKENIZE, detail={"outcome": "approved"})]
    with pytest.raises(ExportError, match="one card per page load"):
        export_feature([*page, Action(PAYER_TOKENIZE, detail={"outcome": "approved"})])


RECIPES = {
    "challenge passed": lambda m: (checkout(m, "3-D Secure challenge"), m.follow_as_payer()),
    "challenge failed": lambda m: (
        setattr(m, "password", "wrong"),
        checkout(m, "3-D Secure challenge"),
        m.follow_as_payer(),
    ),
    "declined": lambda m: checkout(m, "declined (any other CVV2)"),
    "ticket twice": lambda m: (m.send(), m.tokenize(), m.tokenize()),
    "token twice": lambda m: (checkout(m, "approved"), m.send()),  # (the form keeps the token it sent)
}
ANSWERS = "And the payer's browser follows redirect-to and answers the challenge with the right password"
PHRASES = {
    "challenge passed": ("Given a card that requires a 3-D Secure challenge", ANSWERS,
                         'And the payer\'s browser posts a signed "approved" back to the merchant\'s redirect_url'),
    "challenge failed": ('Then the order is declined with "3-D Secure authentication failed"',
                         'And the payer\'s browser posts a signed "declined" back to the merchant\'s redirect_url'),
    "declined": ('Then the order is declined with "Do not honor"',),
    "ticket twice": ("And the payer types the card into the Hosted Fields again on the same page",
                     "Then the gateway refuses the card typed into the Hosted Fields with code 4003"),
    "token twice": ("When the merchant charges the same hosted fields token for another order",
                    'Then the gateway refuses the request saying "Unknown or already spent hosted_fields_token."'),
}  # fmt: skip


@pytest.mark.slow
def test_hosted_fields_checkouts_exported_from_the_explorer_say_what_was_done_and_run_green(
    session: GatewaySession, tmp_path: Path
):
    for name, recipe in RECIPES.items():
        model = ExplorerModel(session, operation="create_ephemeral_ticket")
        recipe(model)
        text = model.export()
        for phrase in PHRASES[name]:
            assert phrase in text, f"{name}: {phrase!r} not in\n{text}"
        assert "When the merchant's checkout page for 10.42 EUR gets a fresh ephemeral ticket" in text
        (tmp_path / f"{name.replace(' ', '_')}.feature").write_text(text)
    run = run_exported(tmp_path)
    assert run.returncode == 0 and f"{len(RECIPES)} passed" in run.stdout, run.stdout[-4000:] + run.stderr[-2000:]
