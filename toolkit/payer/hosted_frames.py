"""Typing into a gateway's Hosted Fields in a real browser: the card iframes on a merchant's checkout page.

A person sees three boxes on the merchant's page and types into each.  The browser payer finds them as the SDK
placed them: one iframe in each container, marked with the container's id (``data-hf-field``); which card field
it is comes from ``data-hf-type``, its ``title`` or the last part of its address (``/hf/pan``), or from the
merchant's own ``init`` fields when the test gives them (container id -> ``pan`` / ``exp`` / ``cvv``).  Inside each
iframe it clicks the one visible input and types, key by key.  The Pay button is the page's: by default the
submit button of the form that holds the card fields.

Selenium is imported only by the functions that drive it (``toolkit.payer.browser``'s ``BrowserPayer`` calls them).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from toolkit.hosted_fields import FIELD_TYPES
from toolkit.payer.forms import Page

SUBMIT = "button:not([type]), button[type=submit], input[type=submit]"
_HOLDS = re.compile(r"<iframe\b[^>]*\bdata-hf-field\s*=", re.IGNORECASE)
_INPUTS = "input:not([type=hidden]):not([type=submit]):not([type=button]):not([type=checkbox]):not([type=radio])"
# The card iframes the page holds now: [iframe, container id, data-hf-type, title, src] for each.
_FRAMES = """
var wanted = arguments[0], found = [];
if (wanted) {
  Object.keys(wanted).forEach(function (id) {
    var box = document.getElementById(id), frame = box && box.querySelector('iframe');
    if (frame) { found.push(frame); }
  });
} else {
  found = Array.prototype.slice.call(document.querySelectorAll('iframe[data-hf-field]'));
}
return found.map(function (frame) {
  var box = frame.getAttribute('data-hf-field') || (frame.parentElement && frame.parentElement.id) || '';
  return [frame, box, frame.getAttribute('data-hf-type') || '', frame.title || '', frame.src || ''];
});
"""
_PAY = """
var first = arguments[0], form = first && first.closest('form');
return form ? form.querySelector(arguments[1]) : null;
"""
_HIDE = """
return arguments[0].map(function (frame) {
  var before = frame.style.visibility; frame.style.visibility = 'hidden'; return before;
});
"""
_SHOW = "var before = arguments[1]; arguments[0].forEach(function (frame, i) { frame.style.visibility = before[i]; });"


@dataclass(frozen=True)
class CardFrame:
    """One card field on the merchant's page: the container it is in, its type, the iframe element."""

    container: str
    kind: str
    element: Any


def kind_of(declared: str, title: str, src: str) -> str:
    """``pan``, ``exp`` or ``cvv`` from what the iframe says of itself; ``""`` when it says nothing of it."""
    last = urlsplit(src).path.rstrip("/").rpartition("/")[2].lower()
    for said in (declared.lower(), title.lower(), last):
        if said in FIELD_TYPES:
            return said
    return ""


def card_frames(driver: Any, fields: Mapping[str, str] | None = None) -> list[CardFrame] | None:
    """The three card iframes of the page (one of each type), or None while the page does not show them all."""
    driver.switch_to.default_content()
    frames = []
    for element, container, declared, title, src in driver.execute_script(_FRAMES, dict(fields) if fields else None):
        kind = (fields or {}).get(container) or kind_of(declared, title, src)
        frames.append(CardFrame(container, kind, element))
    kinds = sorted(frame.kind for frame in frames)
    return frames if kinds == sorted(FIELD_TYPES) else None


def holds_card_frames(page: Page) -> bool:
    """The page holds a gateway's Hosted Fields iframes (``data-hf-field``): a merchant's checkout, never an ACS."""
    return bool(_HOLDS.search(page.html))


def card_input(driver: Any) -> Any | None:
    """The input the payer types into, inside the frame the driver is switched to: ``#value``, else the first
    visible text input; None while the field's document has none."""
    from selenium.common.exceptions import WebDriverException

    try:
        named = driver.find_elements("css selector", "input#value")
        candidates = named or driver.find_elements("css selector", _INPUTS)
        return next((element for element in candidates if element.is_displayed()), None)
    except WebDriverException:  # (the frame is loading its document)
        return None


def ready(driver: Any, frames: Sequence[CardFrame]) -> bool:
    """Every frame shows its input (the field's document has loaded)."""
    from selenium.common.exceptions import WebDriverException

    try:
        for frame in frames:
            driver.switch_to.frame(frame.element)
            try:
                if card_input(driver) is None:
                    return False
            finally:
                driver.switch_to.default_content()
    except WebDriverException:  # (an iframe the SDK replaced)
        return False
    return True


def type_into(driver: Any, frame: CardFrame, value: str) -> None:
    """Click into the frame's input, empty it and type ``value`` key by key, as the payer does."""
    from selenium.webdriver.common.keys import Keys

    driver.switch_to.frame(frame.element)
    try:
        field = card_input(driver)
        if field is None:
            raise LookupError(f"the card field in #{frame.container} shows no input")
        field.click()
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys(Keys.DELETE)
        field.send_keys(value)
    finally:
        driver.switch_to.default_content()


def pay_button(driver: Any, frames: Sequence[CardFrame], selector: str | None = None) -> Any | None:
    """The page's Pay button: ``selector`` (CSS), or the submit button of the form that holds the card fields."""
    if selector:
        found = driver.find_elements("css selector", selector)
        return found[0] if found else None
    return driver.execute_script(_PAY, frames[0].element if frames else None, SUBMIT)


@contextlib.contextmanager
def hidden(driver: Any, frames: Sequence[CardFrame]) -> Iterator[None]:
    """The card iframes the payer typed into hidden while the block runs (a screenshot of the page then shows no
    card), then shown as they were; frames of a page the browser has left are nothing to hide."""
    from selenium.common.exceptions import WebDriverException

    elements = [frame.element for frame in frames]
    try:
        before = driver.execute_script(_HIDE, elements) if elements else None
    except WebDriverException:  # (stale: the page is gone, and its frames with it)
        before = None
    try:
        yield
    finally:
        if before is not None:
            with contextlib.suppress(WebDriverException):
                driver.execute_script(_SHOW, elements, before)
