"""Reading a page as a person does: which form takes the card, which is the 3-D Secure challenge, which
submits itself, and which goes back to the merchant, on pages the payer has never seen.

- the payment form is the form with a card-number input (``autocomplete="cc-number"``, or a name, id, label
  or placeholder that says card number: ``credit_card_number``, ``pan``, ``cardnumber``...); its expiry is one
  ``MM/YY`` field or a month and a year, each an input or a select in whatever format it offers; a second
  card-number input is the card that receives the money (a transfer page: ``destination_control``);
- the challenge is the form with a password or one-time-code input (``type=password``,
  ``autocomplete="one-time-code"``, otp, code, pin, password...), or, when the page has none, its only form
  with a submit button (an ACS that asks for a click on Approve);
- a page submits a form by itself when its ``onload`` or a script calls ``submit()``; a meta refresh sends
  the browser on;
- the way back to the merchant is the form whose action is the merchant's address (its ``redirect_url``).

What no heuristic can know comes from ``PayerSettings`` (``[profiles.NAME.payer]`` in ``gatekit.toml``):
the challenge password or code, and selectors for the payment form, the challenge form and the approve
button.  Everything here is pure: pages in, choices out; ``NotFound`` says what was looked for and what the
page has, masked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from toolkit.masking import mask_text
from toolkit.payer.forms import Button, Control, Form, Page
from toolkit.payer.selectors import Selector, parse
from toolkit.testdata.cards import Card
from toolkit.testdata.outcomes import CHALLENGE_PASSWORD, EXAMPLE_CARDS

WRONG_PASSWORD = "not-the-password"
# What the payer types as the card that receives the money, when a transfer page asks and it was given none.
DEFAULT_DESTINATION = EXAMPLE_CARDS[1]

# Matched against ``words``: a control's name, id, label, placeholder, autocomplete... in lower case, with every run
# of other characters one space (``card[number]``, ``cc-number`` and ``credit_card_number`` read as words).
_CARD_NUMBER = re.compile(
    r"\b(cc ?number|cc ?num|credit ?card(?: ?(?:number|no|num))?|card ?(?:number|no|num)|cardnumber|pan"
    r"|account ?number)\b"
)
_NOT_NUMBER = re.compile(r"\b(cvv|cvc|csc|exp|expiry|expiration|month|year|holder|name|code|pin|otp)\b")
# A card number that is not the payer's own: the one that receives the money on a transfer page.
_DESTINATION = re.compile(
    r"\b(destination|dest|recipient|receiver|receiving|receive|payee|beneficiary|send ?to|to ?card|to ?pan)\b"
)
_CVV = re.compile(r"\b(cc ?csc|cvv2?|cvc2?|csc|cid|cvn|security ?code|card ?code|verification)\b")
_HOLDER = re.compile(r"\b(cc ?name|card ?printed ?name|card ?holder|cardholder|holder|name ?on ?card)\b")
_MONTH = re.compile(r"\b(exp(?:ire|iry|iration)? ?month|month|mm)\b")
_YEAR = re.compile(r"\b(exp(?:ire|iry|iration)? ?year|year|yy|yyyy)\b")
_EXPIRY = re.compile(r"\b(cc ?exp|exp|expire|expiry|expiration|expires|valid ?(?:thru|until)|mmyy(?:yy)?)\b")
_SECRET = re.compile(r"\b(one ?time ?code|otp|one ?time|passcode|password|pass|pin|sms|code|secret|tan)\b")
_APPROVE = re.compile(r"\b(approve|approved|authenticate|authorise|authorize|confirm|continue|submit|ok|verify|"
                      r"success|successful|yes|send|pay|proceed|next)\b")  # fmt: skip
_DECLINE = re.compile(r"\b(decline|declined|deny|reject|cancel|fail|failed|failure|abort|no|back)\b")
_SUBMIT_CALL = re.compile(r"\.submit\s*\(|submit\.call\s*\(|\.requestSubmit\s*\(")
_FORM_REF = re.compile(
    r"getElementById\(\s*['\"]([^'\"]+)['\"]\s*\)|forms\[\s*(\d+)\s*\]|forms\[\s*['\"]([^'\"]+)['\"]\s*\]"
    r"|forms\.([A-Za-z_]\w*)|querySelector\(\s*['\"]form#([\w-]+)['\"]\s*\)"
)
# A meta refresh longer than this is a page that waits for a person, not one that moves on.
AUTO_REFRESH_SECONDS = 10.0


@dataclass(frozen=True)
class PayerSettings:
    """What a profile tells the payer that no heuristic can know (``[profiles.NAME.payer]``).

    ``challenge_password``: what the payer types on the ACS page to pass (default: the outcome table's
    ``hint``); ``wrong_password`` to fail it.  Selectors (CSS: ``#id``, ``form.pay``, ``form#acs
    button[name=approve]``) name the payment form, the challenge form and the button that approves.
    """

    challenge_password: str = CHALLENGE_PASSWORD
    wrong_password: str = WRONG_PASSWORD
    payment_form: str = ""
    challenge_form: str = ""
    approve_button: str = ""

    def __post_init__(self) -> None:
        for name in ("payment_form", "challenge_form", "approve_button"):
            if getattr(self, name):
                parse(getattr(self, name))  # SelectorError now, not on the first page

    def password(self, which: str) -> str:
        """``right`` or ``wrong``: what the payer types (a literal password is typed as given)."""
        return {"right": self.challenge_password, "wrong": self.wrong_password}.get(which, which)


DEFAULT_SETTINGS = PayerSettings()


class NotFound(LookupError):
    """The page does not offer what the payer looks for; the message says what and lists the page's forms
    (or the form's inputs, when a form is the place looked in), masked."""

    def __init__(self, looked_for: str, page: Page | None = None, *, form: Form | None = None) -> None:
        self.looked_for = looked_for
        self.page = page
        where = describe(page) if page is not None else form.describe() if form is not None else ""
        super().__init__(mask_text(f"{looked_for}; {where}" if where else looked_for))


def describe(page: Page) -> str:
    """``the page https://... (HTTP 200, "Title") has forms: ...``: what a person would say is there, masked."""
    title = f', "{page.title}"' if page.title else ""
    forms = "; ".join(form.describe() for form in page.forms) or "no form"
    inputs_outside = [c.get("name") or c.get("id") or "(no name)" for c in _outside_inputs(page)]
    outside = f"; inputs outside a form: {', '.join(inputs_outside)}" if inputs_outside else ""
    text = page.visible_text()
    shown = f'; it reads "{text[:160]}{"..." if len(text) > 160 else ""}"' if text else ""
    return mask_text(f"the page {page.url} (HTTP {page.status_code}{title}) has {forms}{outside}{shown}")


def _outside_inputs(page: Page) -> list[dict[str, str]]:
    inside = {id(control.attributes) for form in page.forms for control in form.controls}
    return [attrs for attrs in page.inputs if id(attrs) not in inside and attrs.get("type") != "hidden"]


def words(text: str) -> str:
    """Lower case, every run of characters other than letters and digits one space: ``card[exp_month]`` ->
    ``card exp month``."""
    return " ".join(re.split(r"[^a-z0-9]+", text.lower())).strip()


def control_words(control: Control) -> str:
    """What names a control, as ``words``; a select's options too (a person reads ``Month``, ``2031``...)."""
    said = words(control.words())
    if control.type == "select" and not (_MONTH.search(said) or _YEAR.search(said)):
        said += " " + words(" ".join(text for _, text in control.options[:3]))
        if _options_are_months(control):
            said += " month"
        elif _options_are_years(control):
            said += " year"
    return said


def _options_are_months(control: Control) -> bool:
    numbers = {int(m.group(1)) for value, _ in control.options if (m := re.fullmatch(r"0?(\d{1,2})", value.strip()))}
    return set(range(1, 13)) <= numbers


def _options_are_years(control: Control) -> bool:
    years = [value for value, text in control.options if re.fullmatch(r"20\d\d|[2-9]\d", value.strip() or text.strip())]
    return len(years) >= 2 and not _options_are_months(control)


def _typed(control: Control) -> bool:
    """A control a person types or picks a value in (not hidden, not a button, not a box)."""
    return control.type in ("text", "tel", "number", "password", "email", "search", "select", "textarea", "")


# --- the payment form ---------------------------------------------------------------------------------------


def _matches(form: Form, selector: Selector) -> bool:
    attributes = {"id": form.id, "name": form.name, "class": form.classes, "action": form.action}
    if selector.ancestor is not None:
        return selector.ancestor.matches("form", attributes)
    return selector.target.matches("form", {k: v for k, v in attributes.items() if v})


def _says_card_number(control: Control) -> bool:
    said = control_words(control)
    return bool(_CARD_NUMBER.search(said)) and not _NOT_NUMBER.search(_CARD_NUMBER.sub(" ", said))


def card_number_control(form: Form) -> Control | None:
    """The input that takes the card number: ``cc-number`` first, then by what names it (the payer's own card
    before one that receives money)."""
    typed = [control for control in form.controls if _typed(control) and control.type != "select"]
    for control in typed:
        if control.attributes.get("autocomplete", "").lower() == "cc-number":
            return control
    numbers = [control for control in typed if _says_card_number(control)]
    own = [control for control in numbers if not _DESTINATION.search(control_words(control))]
    return next(iter(own or numbers), None)


def destination_control(form: Form) -> Control | None:
    """The input for the number of the card that receives the money (a transfer page): a card-number input besides
    the payer's own (``card_number_control``); None on a page that takes one card."""
    own = card_number_control(form)
    typed = [c for c in form.controls if _typed(c) and c.type != "select" and c is not own]
    return next((control for control in typed if _says_card_number(control)), None)


def payment_form(page: Page, settings: PayerSettings = DEFAULT_SETTINGS) -> Form:
    """The form that takes the card (``settings.payment_form`` when set); NotFound otherwise."""
    if settings.payment_form:
        selector = parse(settings.payment_form)
        found = [form for form in page.forms if _matches(form, selector)]
        if found:
            return found[0]
        raise NotFound(f"no form matches payment_form = {settings.payment_form!r}", page)
    for form in page.forms:
        if card_number_control(form) is not None:
            return form
    raise NotFound(
        "no payment form: looked for a form with a card-number input (autocomplete cc-number, or a name, id, "
        "label or placeholder such as card number, credit_card_number, pan)",
        page,
    )


def is_payment_page(page: Page, settings: PayerSettings = DEFAULT_SETTINGS) -> bool:
    try:
        payment_form(page, settings)
    except NotFound:
        return False
    return True


def card_entries(form: Form, card: Card, destination: str | None = None) -> dict[str, str]:
    """What the payer types into the payment form for ``card``: number, expiry as the form takes it, CVV2, name;
    on a transfer page, the number of the card that receives the money too (``destination``, default
    ``DEFAULT_DESTINATION``).

    NotFound (naming the form) when it has no card-number input; an expiry the form does not ask for is not
    entered (a page that knows the card's expiry from elsewhere).
    """
    number = card_number_control(form)
    receiving = destination_control(form)
    entries: dict[str, str] = {}
    if number is not None:
        entries[number.name] = card.number
    if receiving is not None:
        entries[receiving.name] = destination or DEFAULT_DESTINATION
    rest = [c for c in form.controls if _typed(c) and c is not number and c is not receiving and c.name]
    combined = _first(rest, _combined_expiry_control)
    if combined is not None and combined.type != "select":
        entries[combined.name] = _combined_expiry(combined, card)
    else:
        month = _first(rest, _month_only)
        year = _first(rest, _year_only)
        if month is not None:
            entries[month.name] = _month(month, card.expire_month)
        if year is not None:
            entries[year.name] = _year(year, card.expire_year)
    cvv = _first(rest, lambda c: bool(_CVV.search(control_words(c))))
    if cvv is not None and card.cvv2:
        entries[cvv.name] = card.cvv2
    holder = _first(rest, lambda c: bool(_HOLDER.search(control_words(c))) and c.name not in entries)
    if holder is None:
        holder = _first(rest, lambda c: "name" in control_words(c).split() and c.name not in entries)
    if holder is not None and card.holder:
        entries[holder.name] = card.holder
    return entries


def _month_only(control: Control) -> bool:
    said = control_words(control)
    return bool(_MONTH.search(said)) and not _YEAR.search(said)


def _year_only(control: Control) -> bool:
    said = control_words(control)
    return bool(_YEAR.search(said)) and not _MONTH.search(said)


def _combined_expiry_control(control: Control) -> bool:
    """One field for the whole expiry: it names a month and a year (``MM / YY``), or an expiry and neither."""
    said = control_words(control)
    month, year = bool(_MONTH.search(said)), bool(_YEAR.search(said))
    return (month and year) or (bool(_EXPIRY.search(said)) and not month and not year)


def _first(controls: Sequence[Control], test: Callable[[Control], bool]) -> Control | None:
    return next((control for control in controls if test(control)), None)


def _month(control: Control, month: str) -> str:
    """The month as the control takes it: a select's option (``1``, ``01``, ``Jan``...), else two digits."""
    number = int(month)
    if control.type == "select":
        for value, text in control.options:
            for candidate in (value, text):
                digits = re.search(r"(?<!\d)0?(\d{1,2})(?!\d)", candidate)
                if digits and int(digits.group(1)) == number:
                    return value
        raise NotFound(f"the month select {control.name} offers no month {number}")
    return f"{number:02d}" if control.attributes.get("maxlength") != "1" or number > 9 else str(number)


def _year(control: Control, year: str) -> str:
    """The year as the control takes it: a select's option (2029 or 29), an input of 2 or 4 digits."""
    full = year if len(year) == 4 else f"20{year}"
    if control.type == "select":
        for value, text in control.options:
            if value.strip() in (full, full[2:]) or text.strip() in (full, full[2:]):
                return value
        raise NotFound(f"the year select {control.name} offers no year {full}")
    short = control.attributes.get("maxlength") == "2" or re.search(
        r"\byy\b", control.attributes.get("placeholder", "").lower()
    )
    return full[2:] if short else full


def _combined_expiry(control: Control, card: Card) -> str:
    """One expiry field: ``MM/YY`` by default; the placeholder or the length decides (``MM / YYYY``, ``MMYY``)."""
    month = f"{int(card.expire_month):02d}"
    year = card.expire_year if len(card.expire_year) == 4 else "20" + card.expire_year
    placeholder = control.attributes.get("placeholder", "").upper()
    maxlength = control.attributes.get("maxlength", "")
    separator = " / " if " / " in placeholder else "-" if "MM-YY" in placeholder else "/"
    long_year = "YYYY" in placeholder or maxlength in ("6", "7", "9")
    short = year if long_year else year[2:]
    if maxlength in ("4", "6") and "/" not in placeholder:
        return month + short
    return f"{month}{separator}{short}"


# --- the 3-D Secure challenge --------------------------------------------------------------------------------


def secret_control(form: Form) -> Control | None:
    """The password or one-time-code input of a form, or None."""
    typed = [control for control in form.controls if _typed(control) and control.type != "select"]
    for control in typed:
        if control.type == "password" or control.attributes.get("autocomplete", "").lower() == "one-time-code":
            return control
    return next((control for control in typed if _SECRET.search(control_words(control))), None)


def challenge_form(page: Page, settings: PayerSettings = DEFAULT_SETTINGS) -> Form:
    """The issuer's challenge: the form with a password or code input, else the page's only form with a submit
    button (an approve-only ACS); ``settings.challenge_form`` when set.  NotFound otherwise."""
    if settings.challenge_form:
        selector = parse(settings.challenge_form)
        found = [form for form in page.forms if _matches(form, selector)]
        if found:
            return found[0]
        raise NotFound(f"no form matches challenge_form = {settings.challenge_form!r}", page)
    candidates = [form for form in page.forms if card_number_control(form) is None]
    with_secret = [form for form in candidates if secret_control(form) is not None]
    if with_secret:
        return with_secret[0]
    with_button = [form for form in candidates if form.buttons and not submits_itself(page, form)]
    if len(with_button) == 1:
        return with_button[0]
    raise NotFound(
        "no 3-D Secure challenge: looked for a form with a password or one-time-code input (type=password, "
        "autocomplete one-time-code, or a name such as otp, code, pin, password), or a page whose only form "
        f"has a submit button (found {len(with_button)} such forms)",
        page,
    )


def shows_challenge(page: Page, settings: PayerSettings = DEFAULT_SETTINGS) -> bool:
    try:
        challenge_form(page, settings)
    except NotFound:
        return False
    return True


def challenge_answer(
    form: Form, password: str, *, failing: bool, settings: PayerSettings = DEFAULT_SETTINGS
) -> tuple[dict[str, str], Button | None]:
    """The entries and the button that answer the challenge: the password typed and the approve button pressed
    (``failing``: the wrong password, or the decline button of a page that has no password input).

    NotFound when ``failing`` is asked of a page that offers only an approve button."""
    entries: dict[str, str] = {}
    secret = secret_control(form)
    if secret is not None:
        entries[secret.name] = password
    button = _approve_button(form, settings) if secret is not None or not failing else _decline_button(form)
    if secret is None and failing and button is None:
        raise NotFound(
            "the challenge has no password input and no decline button: a failed authentication cannot be chosen "
            "here (it passes with its approve button)",
            form=form,
        )
    return entries, button


def _approve_button(form: Form, settings: PayerSettings) -> Button | None:
    if settings.approve_button:
        selector = parse(settings.approve_button)
        for button in form.buttons:
            if selector.target.matches(button.tag, button.attributes) and (
                selector.ancestor is None or _matches(form, selector)
            ):
                return button
        raise NotFound(f"no button matches approve_button = {settings.approve_button!r}", form=form)
    approving = [b for b in form.buttons if _APPROVE.search(words(b.words())) and not _DECLINE.search(words(b.words()))]
    if approving:
        return approving[0]
    neutral = [b for b in form.buttons if not _DECLINE.search(words(b.words()))]
    return neutral[0] if neutral else None


def _decline_button(form: Form) -> Button | None:
    return next((b for b in form.buttons if _DECLINE.search(words(b.words()))), None)


def submit_button(form: Form) -> Button | None:
    """The button a person presses to send a form (pay, continue...): the first that does not decline."""
    return _approve_button(form, DEFAULT_SETTINGS)


def error_texts(page: Page) -> list[str]:
    """What a page says is wrong, when it has no ``error-<field>`` elements: texts of its error-looking parts."""
    found = re.findall(
        r"<(\w+)[^>]*\b(?:class|role|id)=['\"][^'\"]*\b(?:error|errors|invalid|alert)\b[^'\"]*['\"][^>]*>(.*?)</\1>",
        page.html,
        flags=re.IGNORECASE | re.DOTALL,
    )
    texts = [" ".join(re.sub(r"<[^>]+>", " ", inner).split()) for _, inner in found]
    return [mask_text(text) for text in texts if text]


def submission(form: Form, entries: dict[str, str], button: Button | None = None) -> dict[str, str]:
    """What the browser sends: the form's fields, what was typed, and the pressed button's name=value."""
    data = {**form.fields, **entries}
    if button is not None and button.name:
        data[button.name] = button.value
    return data


# --- pages that move on by themselves ------------------------------------------------------------------------


def self_submitting(page: Page) -> Form | None:
    """The form the page submits by itself (``onload`` or a script calling ``submit()``), or None.

    The form a script names (``getElementById('x')``, ``forms[0]``, ``forms['x']``, ``forms.x``); the first form
    when it names none.  A form the page posts into one of its frames (``frame_submissions``) is not it: the page
    stays."""
    scripts = [page.onload, *page.scripts]
    calling = [script for script in scripts if _SUBMIT_CALL.search(script)]
    own = [form for form in page.forms if not _into_frame(page, form)]
    if not calling or not own:
        return None
    for script in calling:
        for match in _FORM_REF.finditer(script):
            found = _named_form(page, match)
            if found is not None and found in own:
                return found
    return own[0]


def _into_frame(page: Page, form: Form) -> bool:
    return bool(form.target) and form.target in page.frames


def frame_submissions(page: Page) -> list[Form]:
    """The forms a page's scripts post into its own (hidden) frames as it loads (a 3-D Secure method step posted
    as ``threeDSMethodData``): the browser sends them, the page stays."""
    scripts = [page.onload, *page.scripts]
    if not any(_SUBMIT_CALL.search(script) for script in scripts):
        return []
    return [form for form in page.forms if _into_frame(page, form)]


def _named_form(page: Page, match: re.Match[str]) -> Form | None:
    by_id, index, by_name, by_attribute, by_query = match.groups()
    if index is not None:
        number = int(index)
        return page.forms[number] if number < len(page.forms) else None
    wanted = by_id or by_name or by_attribute or by_query
    return next((form for form in page.forms if wanted in (form.id, form.name)), None)


def submits_itself(page: Page, form: Form) -> bool:
    return self_submitting(page) is form


def refreshes_to(page: Page) -> str | None:
    """Where a meta refresh sends the browser on (within ``AUTO_REFRESH_SECONDS``), or None."""
    if page.refresh is None or page.refresh[0] > AUTO_REFRESH_SECONDS:
        return None
    return page.refresh[1]


# --- the way back to the merchant ----------------------------------------------------------------------------


def goes_to(url: str, places: Sequence[str]) -> bool:
    """``url`` is one of ``places`` or below it (same scheme, host and port; the path starts with the place's)."""
    target = urlsplit(url)
    for place in places:
        known = urlsplit(place)
        if (target.scheme, target.netloc) == (known.scheme, known.netloc) and target.path.startswith(
            known.path.rstrip("/") or "/"
        ):
            return True
    return False


def carries_outcome(form: Form) -> bool:
    """A form that carries what the merchant receives: a CRes or PaRes, or a signed status (behaviour 5)."""
    names = {name.lower() for name in form.fields}
    return bool({"cres", "pares"} & names) or {"status", "orderid"} <= names or "control" in names


def hands_result_on(form: Form, page: Page, merchant_urls: Sequence[str] = ()) -> bool:
    """The ACS hands its result (a CRes or PaRes, without the signed outcome of behaviour 5) on to the gateway, not
    to the merchant (the gateway-run road of behaviour 12): the form goes elsewhere than the merchant's known
    addresses, or, with none known, to the page's own site."""
    names = {name.lower() for name in form.fields}
    if not {"cres", "pares"} & names or "control" in names:
        return False
    if merchant_urls:
        return not goes_to(form.action, merchant_urls)
    there, here = urlsplit(form.action), urlsplit(page.url)
    return (there.scheme, there.netloc) == (here.scheme, here.netloc)


def asks_the_acs(form: Form) -> bool:
    """The form takes the payer to an ACS: it carries a 3-D Secure 2 CReq or a 1.0.2 PaReq (the gateway's page
    that sends the payer on to the challenge, on the gateway-run road of behaviour 12)."""
    return bool({"creq", "pareq"} & {name.lower() for name in form.fields})


def merchant_form(page: Page, merchant_urls: Sequence[str] = ()) -> Form:
    """The form that takes the payer back to the merchant: the one whose action is a merchant address
    (``merchant_urls``: the merchant's ``redirect_url``), else the form the page submits by itself.
    NotFound otherwise."""
    if merchant_urls:
        for form in page.forms:
            if goes_to(form.action, merchant_urls):
                return form
    auto = self_submitting(page)
    if auto is not None and (hands_result_on(auto, page, merchant_urls) or asks_the_acs(auto)):
        auto = None  # (on its way to the gateway, which takes the payer back later, or to the ACS)
    if auto is not None and (not merchant_urls or not goes_to(page.url, merchant_urls)):
        return auto
    where = ", ".join(merchant_urls) or "the merchant (no redirect_url known: the form that submits itself)"
    raise NotFound(f"no way back to the merchant: looked for a form going to {where}", page)


def returns_to_merchant(page: Page, merchant_urls: Sequence[str] = ()) -> bool:
    try:
        merchant_form(page, merchant_urls)
    except NotFound:
        return False
    return True
