"""Property: no output path carries a generated card number or CVV (issue 9, item 4).

Hypothesis makes Luhn-valid card numbers of 13 to 19 digits (whole, or grouped by spaces or
dashes) and CVVs under CVV-like names, puts them in any field, amid any text, and sends them
through every path that writes what it was given: masking itself, exchange records and curl
commands, OAuth base strings, client and simulator errors, the simulator's journal and delivery
log, argparse's errors.  None may show the number or the CVV.
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from toolkit import cli
from toolkit.errors import GatewayError
from toolkit.exchange import Answered, Exchange, Sent
from toolkit.masking import _may_need_masking, mask_base_string, mask_fields, mask_text, mask_value
from toolkit.signing import OAuthParams, signature_base_string
from toolkit.simulator.delivery import Delivery
from toolkit.simulator.journal import entry, sent
from toolkit.simulator.rules.errors import SimError

SEPARATORS = " /:,;&?()[]{}<>'\"|\n\t"
CVV_BASES = ["cvv", "cvv2", "cvc", "cvc2", "cvn", "card_cvv", "cardCvv", "cvv_code", "security_code"]


def _luhn_digit(body: str) -> str:
    total = 0
    for index, char in enumerate(reversed(body)):
        digit = int(char)
        if index % 2 == 0:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return str((10 - total % 10) % 10)


@st.composite
def pans(draw: st.DrawFn) -> str:
    length = draw(st.integers(13, 19))
    body = draw(st.sampled_from("23456")) + draw(st.text("0123456789", min_size=length - 2, max_size=length - 2))
    return body + _luhn_digit(body)  # (a scheme's number: Mir 2, Amex 3, Visa 4, Mastercard 5, Discover 6)


def written(pan: str, style: str) -> str:
    """The number as a person might type it: whole, or in groups of four (Amex: 4-6-5)."""
    if style == "whole":
        return pan
    sep = " " if style == "spaces" else "-"
    if len(pan) == 15:
        return sep.join((pan[:4], pan[4:10], pan[10:]))
    return sep.join(pan[i : i + 4] for i in range(0, len(pan), 4))


@st.composite
def cvv_names(draw: st.DrawFn) -> str:
    base = draw(st.sampled_from(CVV_BASES))
    cased = "".join(c.upper() if draw(st.booleans()) else c for c in base)
    prefix = draw(st.sampled_from(["", "card_", "Card-", "x_"]))
    return prefix + cased


words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
field_names = st.from_regex(r"[a-z][a-z0-9_\-]{0,20}", fullmatch=True).filter(lambda n: "cv" not in n.lower())


@st.composite
def typed_pans(draw: st.DrawFn) -> tuple[str, str]:
    """(the bare number, the text that carries it: number amid words, as a token)."""
    pan = draw(pans())
    shown = written(pan, draw(st.sampled_from(["whole", "whole", "spaces", "dashes"])))
    before, after = draw(words), draw(words)
    assume(not carries_pan(before + " " + after, pan))  # the words are not another copy of it (glued to digits)
    left, right = draw(st.sampled_from(SEPARATORS)), draw(st.sampled_from(SEPARATORS))
    return pan, f"{before}{left}{shown}{right}{after}"


def carries_pan(text: str, pan: str) -> bool:
    """The number whole, or in its groups with any separator a text may carry (encoded ones too)."""
    groups = written(pan, "spaces").split(" ")
    separators = (" ", "-", "+", "%20", "%2520", "%2D", "%252D")
    return pan in text or any(sep.join(groups) in text for sep in separators)


def carries_cvv(text: str, name: str, cvv: str) -> bool:
    shapes = (f"{name}={cvv}", f"{name}%3D{cvv}", f"{name}%253D{cvv}", f'"{name}": "{cvv}"', f"'{name}': '{cvv}'")
    return any(shape in text for shape in shapes)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(typed_pans())
def test_free_text_never_carries_a_card_number(typed):
    pan, text = typed
    assert not carries_pan(mask_text(text), pan)


@SETTINGS
@given(typed_pans(), field_names, cvv_names(), st.text("0123456789", min_size=3, max_size=4))
def test_fields_records_and_curl_never_carry_card_data(typed, name, cvv_name, cvv):
    pan, text = typed
    fields = [(name, text), (cvv_name, cvv), ("amount", "1.00")]
    masked = mask_fields(fields)
    assert masked[cvv_name] == "***" and not carries_pan(str(masked), pan)
    exchange = Exchange.capture(
        "sale",
        Sent("POST", f"https://gw.example/api/v2/sale/1?{name}={pan}&{cvv_name}={cvv}", {"X-Trace": text}, fields),
        Answered(
            400,
            {"Location": f"https://m.example/?pan={pan}"},
            f'{{"error-message": "{text}", "{cvv_name}": "{cvv}"}}',
            error=text,
        ),
        elapsed=0.1,
    )
    out = repr(exchange) + exchange.as_curl()
    assert not carries_pan(out, pan) and not carries_cvv(out, cvv_name, cvv)


@SETTINGS
@given(typed_pans(), field_names, cvv_names(), st.text("0123456789", min_size=3, max_size=4))
def test_base_strings_and_errors_never_carry_card_data(typed, name, cvv_name, cvv):
    pan, text = typed
    oauth = OAuthParams("login", "HMAC-SHA1", "1700000000", "nonce")
    base = signature_base_string("POST", "https://gw.example/paynet", [(name, text), (cvv_name, cvv)], oauth)
    shown = mask_base_string(base)
    assert not carries_pan(shown, pan) and not carries_cvv(shown, cvv_name, cvv)
    for error in (GatewayError(f"{name}: {text!r} is wrong", operation="sale"), SimError(f"{name}: {text}")):
        assert not carries_pan(str(error), pan)


@SETTINGS
@given(typed_pans(), field_names, cvv_names(), st.text("0123456789", min_size=3, max_size=4))
def test_the_journal_and_the_delivery_log_never_carry_card_data(typed, name, cvv_name, cvv):
    pan, text = typed
    line = entry(
        at=0.0,
        login="m",
        operation="sale",
        path="/paynet/api/v2/sale/1",
        http_status=400,
        body={"type": "validation-error", "error-message": f"{name}: {text}"},
        sent=sent([(name, text), (cvv_name, cvv), ("client_orderid", text)]),
        warnings=[f"field {name} has blanks: {text}"],
    )
    assert not carries_pan(str(line), pan) and line["fields"][cvv_name] == "***"
    row = {
        "id": 1,
        "orderid": 1,
        "login": "m",
        "url": f"http://127.0.0.1:9/cb?{name}={text}&{cvv_name}={cvv}",
        "state": "failed",
        "attempts": 1,
        "next_at": 0.0,
        "created_at": 0.0,
        "params": '{"status": "approved"}',
    }
    view = str(Delivery._view(row, [{"error": mask_text(f"ConnectionError: {text}")}]))
    assert not carries_pan(view, pan) and not carries_cvv(view, cvv_name, cvv)


@settings(max_examples=40, deadline=None)
@given(typed_pans(), field_names, cvv_names(), st.text("0123456789", min_size=3, max_size=4))
def test_argparse_errors_never_carry_card_data(typed, name, cvv_name, cvv):
    pan, _ = typed
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit):
        cli.build_parser().parse_args(["call", "sale", "--bogus", f"{name}={pan}", f"{cvv_name}={cvv}"])
    assert not carries_pan(err.getvalue(), pan) and not carries_cvv(err.getvalue(), cvv_name, cvv)


# Text that comes near a card number or a CVV without being one: digit runs, separators, escapes, hex.
near_card_text = st.text(alphabet="0123456789 +-%25Dd/.:abcfCVvNnsecurityod_", max_size=60)


@SETTINGS
@given(
    st.lists(
        st.tuples(st.one_of(field_names, cvv_names(), st.sampled_from(["control", "card_no", "pan"])), near_card_text),
        max_size=12,
    ),
    typed_pans(),
)
def test_mask_fields_is_mask_value_of_each_field(pairs, typed):
    """``mask_fields`` looks at the free-text values together first: the result is ``mask_value`` of each."""
    pairs = [*pairs, ("order_desc", typed[1])]
    expected: dict[str, str] = {}
    for name, value in pairs:
        expected[name] = mask_value(name, value)
    assert mask_fields(pairs) == expected


@SETTINGS
@given(st.lists(st.tuples(st.one_of(field_names, st.sampled_from(["phone", "zip_code", "note"])), near_card_text),
                max_size=12))  # fmt: skip
def test_mask_fields_counts_digits_value_by_value(pairs):
    """Free-text values whose digits add up to a card number's only together (a phone, a zip, an IP address)
    are each looked at alone: the result is still ``mask_value`` of each."""
    expected = {name: mask_value(name, value) for name, value in pairs}
    assert mask_fields(pairs) == expected


def test_a_requests_digits_together_are_not_a_card_number():
    fields = {"phone": "5551234567", "zip_code": "12345", "ipaddress": "203.0.113.7", "order_desc": "Order 1"}
    assert mask_fields(fields) == fields


@SETTINGS
@given(st.one_of(near_card_text, typed_pans().map(lambda typed: typed[1]), st.text(max_size=80)))
def test_the_quick_test_never_passes_text_that_masking_changes(text):
    """``mask_fields`` keeps free text as it is when ``_may_need_masking`` says no: never text ``mask_text`` changes."""
    if mask_text(text) != text:
        assert _may_need_masking(text)


@pytest.mark.parametrize(
    "text",
    ["4538%20977399606732", "4538%209773%209960%206732", "4538%2D9773%2D9960%2D6732", "4538-9773-9960-6732",
     "4538 9773 9960 6732", "45389773.99606732", "4538_9773_9960_6732", "card 4538+9773+9960+6732",
     "4538/9773/9960/6732", "4538,9773,9960,6732", "4538\t9773\t9960\t6732"],
)  # fmt: skip
def test_the_quick_test_sees_card_numbers_in_every_grouping(text):
    assert mask_text(text) != text and _may_need_masking(text)


def test_a_digest_is_no_card_number_at_a_glance():
    """A control (SHA-1 hex) holds two dozen digits, its letters between them: the quick test lets it pass."""
    control = "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"
    assert not _may_need_masking(control) and mask_text(control) == control


# Prose about a CVV (issue 34, point 8): CVV words, and numbers that are no CVV after one (1 or 2 digits, 5 or more,
# a range, a date), joined by blanks.  A CVV is 3 or 4 digits after its word: none here, so nothing changes.
CVV_PROSE = ["CVV", "cvv2", "CVC", "cvc2", "CID", "security code", "Security-Code", "is", "required", "must", "be",
             "3", "4", "digits", "3-4", "(3", "or", "4)", "the", "card's", "missing", "wrong", "12", "12345",
             "2026-11-28", "1234567", "on", "back", "typed", "twice."]  # fmt: skip


@SETTINGS
@given(st.lists(st.sampled_from(CVV_PROSE), max_size=14), st.sampled_from([" ", "  ", "\t", " - ", ", "]))
def test_prose_about_a_cvv_is_never_changed(words_of_prose, blank):
    text = blank.join(words_of_prose)
    assert mask_text(text) == text
    assert mask_fields({"order_desc": text}) == {"order_desc": text}


@pytest.mark.parametrize("text", ["CVV is required", "cvv2 must be 3 digits", "cvv 3-4 digits",
                                  "the security code (3 or 4 digits) is on the back"])  # fmt: skip
def test_sentences_about_a_cvv_are_never_changed(text):
    assert mask_text(text) == text
