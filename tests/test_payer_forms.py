"""toolkit.payer.forms: what a payer without a browser reads from a page, on small static pages."""

from __future__ import annotations

import pytest

from toolkit.payer.forms import Form, Page

URL = "https://gateway.example/paynet/form/tok"

PAYMENT_PAGE = """<!doctype html>
<html><body>
<div id="form-errors"><h2>Please correct:</h2>
  <p class="field-error" id="error-credit_card_number">Card number
     fails the Luhn check</p>
  <p class="field-error" id="error-cvv2">CVV2 has 3 digits</p>
</div>
<form id="payment-form" method="POST" action="/paynet/form/tok/pay">
  <label for="cvv2">CVV2</label>
  <input id="credit_card_number" name="credit_card_number" type="text" value="">
  <input name="expire_month" type="text" value="13">
  <select name="expire_year"><option>2099</option></select>
  <textarea name="note"></textarea>
  <input type="submit" value="Pay">
  <button id="pay" type="submit">Pay</button>
</form>
<form id="search"><input name="q" value="x"></form>
<input name="outside" type="hidden" value="kept">
<iframe id="method" src="/3ds/v2/method/m1"></iframe><iframe id="empty"></iframe>
<p><a id="page-error-link" href="../acs/a1">the open page</a> <a href="/no-id">no id</a></p>
</body></html>
"""


@pytest.fixture
def page() -> Page:
    return Page.parse(URL, 200, PAYMENT_PAGE)


def test_forms_with_their_named_fields_and_resolved_actions(page: Page) -> None:
    assert page.form("payment-form") == Form(
        "payment-form",
        "https://gateway.example/paynet/form/tok/pay",
        "post",
        {"credit_card_number": "", "expire_month": "13", "expire_year": "2099", "note": ""},  # a select: its option
    )
    assert page.form("search") == Form("search", URL, "get", {"q": "x"})  # no action: the page itself
    assert page.form() is page.forms[0]


def test_a_missing_form_is_a_lookup_error_naming_the_forms_there(page: Page) -> None:
    with pytest.raises(LookupError, match=r"no form challenge-form on the page \(forms: payment-form, search\)"):
        page.form("challenge-form")
    with pytest.raises(LookupError, match=r"forms: none"):
        Page.parse(URL, 200, "<p>nothing</p>").form()


def test_every_input_with_its_attributes_in_or_out_of_a_form(page: Page) -> None:
    names = [attrs.get("name", "") for attrs in page.inputs]
    assert names == ["credit_card_number", "expire_month", "expire_year", "note", "", "q", "outside"]
    assert page.inputs[-1] == {"name": "outside", "type": "hidden", "value": "kept"}


def test_iframes_and_links_by_id_are_resolved_against_the_page(page: Page) -> None:
    assert page.iframes == ["https://gateway.example/3ds/v2/method/m1"]
    assert page.links == {"page-error-link": "https://gateway.example/paynet/acs/a1"}


def test_texts_of_elements_with_an_id_as_a_browser_shows_them(page: Page) -> None:
    assert page.text("error-credit_card_number") == "Card number fails the Luhn check"
    assert page.text("page-error-link") == "the open page"
    assert page.text("pay") == "Pay"
    assert page.has("form-errors") and "CVV2 has 3 digits" in page.text("form-errors")
    assert (page.has("amount"), page.text("amount")) == (False, "")


def test_field_errors_by_field_name(page: Page) -> None:
    assert page.field_errors() == {
        "credit_card_number": "Card number fails the Luhn check",
        "cvv2": "CVV2 has 3 digits",
    }


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        (
            '<input id="password"><p id="hint">the password is <code>hint</code></p>',
            {"password": "", "hint": "the password is hint"},
        ),
        ('<div id="outer"><div>inner</div> after</div>', {"outer": "inner after"}),
        ('<div id="outer"><p>open paragraph</div><p id="next">next</p>', {"outer": "open paragraph", "next": "next"}),
        ('<p id="p">one</span> two</p>', {"p": "one two"}),
        ('<p id="amp">A &amp; B&nbsp;C</p>', {"amp": "A & B C"}),
    ],
    ids=["void-element-holds-no-text", "nested-same-tag", "unclosed-inner-tag", "stray-end-tag", "entities"],
)
def test_text_belongs_to_the_elements_that_enclose_it(html: str, expected: dict[str, str]) -> None:
    page = Page.parse(URL, 200, html)
    assert {element_id: page.text(element_id) for element_id in expected} == expected


def test_redirects_are_what_the_caller_says() -> None:
    assert Page.parse(URL, 200, "").redirects == ()
    assert Page.parse(URL, 200, "", redirects=(303,)).redirects == (303,)
