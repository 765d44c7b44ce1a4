"""toolkit.payer.reading and selectors: what the payer recognises on small pages it has never seen."""

from __future__ import annotations

import pytest

from toolkit.config import ConfigError
from toolkit.payer import reading
from toolkit.payer.forms import Page
from toolkit.payer.reading import NotFound, PayerSettings
from toolkit.payer.selectors import SelectorError, parse
from toolkit.testdata import Card

CARD = Card("4538977399606732", "03", "2031", "123", "ANN SMITH")
URL = "https://pay.example/checkout"


def page(body: str) -> Page:
    return Page.parse(URL, 200, f"<html><head><title>t</title></head><body>{body}</body></html>")


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ('<input name="exp" placeholder="MM/YY">', {"exp": "03/31"}),
        ('<input name="expiry" placeholder="MM / YYYY">', {"expiry": "03 / 2031"}),
        ('<input name="cc-exp" maxlength="4">', {"cc-exp": "0331"}),
        ('<input name="exp_month"><input name="exp_year" maxlength="2">', {"exp_month": "03", "exp_year": "31"}),
        ('<select name="m"><option value="">Month</option><option value="3">March (03)</option></select>'
         '<select name="y"><option>2030</option><option>2031</option></select>',
         {"m": "3", "y": "2031"}),
        ('<label>Month <select name="a"><option>01</option><option>03</option></select></label>'
         '<label>Year <select name="b"><option value="31">2031</option></select></label>',
         {"a": "03", "b": "31"}),
    ],
    ids=["MM/YY", "MM / YYYY", "MMYY", "month and short year", "selects by text", "selects by label"],
)  # fmt: skip
def test_the_expiry_is_entered_as_the_form_takes_it(inputs: str, expected: dict[str, str]) -> None:
    form = reading.payment_form(page(f'<form><input autocomplete="cc-number" name="n">{inputs}</form>'))
    entries = reading.card_entries(form, CARD)
    assert {name: value for name, value in entries.items() if name not in ("n",)} == expected


@pytest.mark.parametrize(
    "number_input",
    ['<input autocomplete="cc-number" name="x1">', '<input name="credit_card_number">', '<input id="pan" name="p">',
     '<label for="c">Card number</label><input id="c" name="field3">', '<input name="card[number]">',
     '<input placeholder="Card no." name="z">'],
)  # fmt: skip
def test_the_payment_form_is_the_one_with_a_card_number_input(number_input: str) -> None:
    shown = page(f'<form id="search"><input name="q"></form><form action="/pay">{number_input}'
                 '<input name="cvc"><input name="name"><button>Pay</button></form>')  # fmt: skip
    form = reading.payment_form(shown)
    assert form.action == "https://pay.example/pay"
    entries = reading.card_entries(form, CARD)
    assert CARD.number in entries.values() and entries["cvc"] == "123" and entries["name"] == "ANN SMITH"


def test_the_card_printed_name_is_not_taken_for_the_number() -> None:
    form = reading.payment_form(page('<form><input name="card_printed_name"><input name="credit_card_number"></form>'))
    assert reading.card_entries(form, CARD) == {"credit_card_number": CARD.number, "card_printed_name": "ANN SMITH"}


@pytest.mark.parametrize(
    ("inputs", "source", "destination"),
    [
        ('<input name="credit_card_number" autocomplete="cc-number"><input name="destination-card-no"'
         ' autocomplete="off"><label for="d">Card number to receive the money</label>', "credit_card_number",
         "destination-card-no"),
        ('<label>Send to card <input name="to_pan" autocomplete="off"></label>'
         '<label>Card number <input name="pan"></label>', "pan", "to_pan"),
        ('<input name="recipient_card_number"><input placeholder="Your card number" name="c1">', "c1",
         "recipient_card_number"),
    ],
    ids=["gatekit's page", "destination first", "by words only"],
)  # fmt: skip
def test_a_transfer_page_takes_the_payer_s_card_and_the_one_that_receives(
    inputs: str, source: str, destination: str
) -> None:
    """Behaviour section 12: the transfer page asks for the source card and the destination card."""
    form = reading.payment_form(page(f'<form>{inputs}<input name="cvv2"><input name="exp" placeholder="MM/YY">'
                                     '<input name="holder"></form>'))  # fmt: skip
    assert reading.card_number_control(form).name == source  # type: ignore[union-attr]
    assert reading.destination_control(form).name == destination  # type: ignore[union-attr]
    entries = reading.card_entries(form, CARD, "4444555566661111")
    assert entries == {source: CARD.number, destination: "4444555566661111", "cvv2": "123", "exp": "03/31",
                       "holder": "ANN SMITH"}  # fmt: skip
    assert reading.card_entries(form, CARD)[destination] == reading.DEFAULT_DESTINATION


def test_a_page_with_one_card_number_has_no_destination_even_when_it_receives_money() -> None:
    """A payout page's only card receives the payout: it is the card the payer types, not a destination."""
    form = reading.payment_form(page('<form><label>Card number to receive the payout <input name="pan"></label>'
                                     '<input name="exp" placeholder="MM/YY"></form>'))  # fmt: skip
    assert reading.destination_control(form) is None
    assert reading.card_entries(form, CARD, "4444555566661111") == {"pan": CARD.number, "exp": "03/31"}


@pytest.mark.parametrize(
    ("body", "typed", "pressed"),
    [
        ('<form><input type="password" name="p"><button>Submit</button></form>', {"p": "hint"}, "Submit"),
        ('<form><input autocomplete="one-time-code" name="c"><button name="go">Go</button></form>',
         {"c": "hint"}, "Go"),
        ('<form id="acsForm"><input type="hidden" name="t" value="1"><input type="submit" value="Approve"></form>',
         {}, "Approve"),
        ('<form><input name="otp"><button name="cancel">Cancel</button><button name="ok">Confirm</button></form>',
         {"otp": "hint"}, "Confirm"),
    ],
    ids=["password", "one-time-code", "approve only", "approve beside cancel"],
)  # fmt: skip
def test_the_challenge_and_the_button_that_approves(body: str, typed: dict[str, str], pressed: str) -> None:
    shown = page(body)
    assert reading.shows_challenge(shown)
    entries, button = reading.challenge_answer(reading.challenge_form(shown), "hint", failing=False)
    assert entries == typed and button is not None and button.text == pressed


def test_failing_a_challenge_presses_decline_or_says_it_cannot() -> None:
    with_decline = page('<form><input type="submit" value="Approve"><input type="submit" value="Decline"></form>')
    _, button = reading.challenge_answer(reading.challenge_form(with_decline), "x", failing=True)
    assert button is not None and button.text == "Decline"
    approve_only = page('<form id="acsForm"><input type="submit" value="Approve"></form>')
    with pytest.raises(NotFound, match="no password input and no decline button"):
        reading.challenge_answer(reading.challenge_form(approve_only), "x", failing=True)


def test_self_submitting_forms_are_found_by_what_the_script_names() -> None:
    assert reading.self_submitting(page("<form id=a></form><form id=b></form><script>document.getElementById('b')"
                                        ".submit()</script>")).id == "b"  # fmt: skip
    two = page('<form name="x"></form><form name="acs"></form><script>document.forms.acs.submit();</script>')
    assert reading.self_submitting(two).name == "acs"
    assert reading.self_submitting(page("<form id=z></form>")) is None
    onload = Page.parse(URL, 200, '<body onload="document.forms[0].submit()"><form id=f></form></body>')
    assert reading.self_submitting(onload).id == "f"


def test_a_meta_refresh_moves_on_only_when_it_is_quick() -> None:
    quick = Page.parse(URL, 200, '<meta http-equiv="refresh" content="1; url=/done">')
    slow = Page.parse(URL, 200, '<meta http-equiv="Refresh" content="600;URL=\'/later\'">')
    assert reading.refreshes_to(quick) == "https://pay.example/done" and reading.refreshes_to(slow) is None


def test_the_way_back_is_found_by_where_it_goes() -> None:
    shown = page('<form id="other" action="https://tracker.example/x"></form>'
                 '<form action="https://shop.example/return/order-1" method="post"><input type=hidden name=s value=1>'
                 "</form>")  # fmt: skip
    assert reading.merchant_form(shown, ["https://shop.example/return"]).fields == {"s": "1"}
    with pytest.raises(NotFound, match="no way back to the merchant"):
        reading.merchant_form(shown, ["https://elsewhere.example/"])


def test_selectors_name_forms_and_buttons_a_heuristic_cannot() -> None:
    settings = PayerSettings(payment_form="form.card", challenge_form="#acs", approve_button="#acs input[value=OK]")
    shown = page('<form class="card main"><input name="number_field"><input name="date"></form>'
                 '<form id="acs"><input type="submit" value="Nope"><input type="submit" value="OK"></form>'
                 )  # fmt: skip
    assert reading.payment_form(shown, settings).classes == "card main"
    _, button = reading.challenge_answer(reading.challenge_form(shown, settings), "x", failing=False, settings=settings)
    assert button is not None and button.value == "OK"
    with pytest.raises(NotFound, match=r"no form matches payment_form = '#gone'"):
        reading.payment_form(shown, PayerSettings(payment_form="#gone"))


@pytest.mark.parametrize("text", ["form > button", "div::after", "a ~ b", ""])
def test_selectors_it_cannot_read_are_refused_at_once(text: str) -> None:
    with pytest.raises(SelectorError):
        parse(text)
    if text:
        with pytest.raises(SelectorError):
            PayerSettings(approve_button=text)


def test_a_profile_s_payer_table_is_checked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from toolkit.certify.target import load_payer_settings

    path = tmp_path / "gatekit.toml"
    path.write_text('[profiles.s]\nbase = "simulator"\n[profiles.s.payer]\nchallenge_password = "1234"\n')
    assert load_payer_settings("s", config_file=path).challenge_password == "1234"
    path.write_text('[profiles.s]\nbase = "simulator"\n[profiles.s.payer]\npasword = "1234"\n')
    with pytest.raises(ConfigError, match=r"\[profiles.s.payer\]: unknown settings pasword; known: challenge_password"):
        load_payer_settings("s", config_file=path)
    path.write_text('[profiles.s]\nbase = "simulator"\n[profiles.s.payer]\napprove_button = "a > b"\n')
    with pytest.raises(ConfigError, match="one compound selector"):
        load_payer_settings("s", config_file=path)


def test_the_message_says_what_the_page_has_and_masks_card_data() -> None:
    shown = page('<p>card 4538977399606732</p><form id="f"><label for="q">Find</label><input id="q" name="q"></form>')
    with pytest.raises(NotFound) as caught:
        reading.payment_form(shown)
    message = str(caught.value)
    assert "4538977399606732" not in message and "453897******6732" in message
    assert "form #f (GET https://pay.example/checkout): inputs q (text, 'Find'); buttons none" in message
