"""Pages the payer was shown, for notebooks: what the page is, its forms (masked), and the page itself.

``PageView`` draws the page in a sandboxed ``<iframe srcdoc>`` (no script runs, nothing is fetched:
a Content-Security-Policy forbids it), under a summary and the page's forms.  ``Screenshot`` holds a
PNG of the page taken by headless Chromium (``toolkit.payer.browser.screenshot_html``): an image
shows everywhere, in JupyterLab, in nbconvert's HTML and on a code host.  The page's HTML is made
safe first: card data masked in the text and in every input's value, scripts removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape

from toolkit.display.html import Tone, esc, folded, line, page, section, table
from toolkit.masking import mask_text, mask_value
from toolkit.payer.forms import Page
from toolkit.payer.visits import page_orderid, shows

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'"
_INPUT = re.compile(r"<input\b[^>]*>", re.IGNORECASE)
_ATTRIBUTE = re.compile(r"""\b(name|value)\s*=\s*("[^"]*"|'[^']*')""", re.IGNORECASE)
_SCRIPT = re.compile(r"<script\b.*?</script\s*>", re.IGNORECASE | re.DOTALL)
_HEAD = re.compile(r"<head\b[^>]*>", re.IGNORECASE)


def _masked_input(tag: str) -> str:
    """An ``<input>`` whose value is masked by its name (a card number to BIN and last four, a CVV2 to ***)."""
    found = {m.group(1).lower(): m.group(2)[1:-1] for m in _ATTRIBUTE.finditer(tag)}
    name, value = found.get("name", ""), found.get("value", "")
    masked = mask_value(name, value)
    if masked == value:
        return tag
    return _ATTRIBUTE.sub(lambda m: m.group(0) if m.group(1).lower() == "name" else f'value="{escape(masked)}"', tag)


def safe_html(html: str) -> str:
    """The page as it may be shown: inputs masked by name, card numbers in text masked, no scripts, no fetching."""
    cleaned = _SCRIPT.sub("", _INPUT.sub(lambda m: _masked_input(m.group(0)), html))
    policy = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
    cleaned = _HEAD.sub(lambda m: m.group(0) + policy, cleaned, count=1) if _HEAD.search(cleaned) else policy + cleaned
    return mask_text(cleaned)


def page_rows(shown: Page) -> list[tuple[str, str]]:
    rows = [("URL", shown.url), ("HTTP status", str(shown.status_code))]
    if shown.redirects:
        rows.append(("after redirects", ", ".join(str(code) for code in shown.redirects)))
    rows += [("shows", shows(shown) or "-"), ("order", page_orderid(shown) or "-")]
    return rows


def forms_html(shown: Page) -> str:
    rows = []
    for form in shown.forms:
        fields = ", ".join(f"{name}={mask_value(name, value)}" for name, value in form.fields.items()) or "-"
        rows.append((form.id or "(no id)", f"{form.method.upper()} {form.action}", fields))
    return table(rows, ("form", "sends to", "fields")) if rows else "<p>no form</p>"


@dataclass(frozen=True)
class PageView:
    """A page the payer was shown: a summary, its forms, and the page drawn in a sandboxed frame."""

    shown: Page
    height: int = 460

    def frame(self) -> str:
        source = escape(safe_html(self.shown.html), quote=True)
        return (
            f'<iframe sandbox="" srcdoc="{source}" title="{esc(self.shown.url)}" '
            f'style="width:100%;max-width:760px;height:{self.height}px;border:1px solid #c9ced6;border-radius:6px">'
            "</iframe>"
        )

    def _repr_html_(self) -> str:
        tone: Tone = "bad" if self.shown.status_code >= 400 else "plain"
        head = line(f"page: HTTP {self.shown.status_code} · {shows(self.shown) or self.shown.url}", tone)
        summary = table(page_rows(self.shown))
        return page(
            head, summary, section("forms", forms_html(self.shown)), folded("the page", self.frame(), open_=True)
        )

    def __repr__(self) -> str:
        return mask_text(f"PageView({self.shown.url!r}, HTTP {self.shown.status_code}, {shows(self.shown)!r})")


@dataclass(frozen=True)
class Screenshot:
    """A PNG of a page as headless Chromium draws it (shown as an image in a notebook)."""

    png: bytes
    title: str = ""

    def _repr_png_(self) -> bytes:
        return self.png

    def save(self, path: str) -> str:
        with open(path, "wb") as out:
            out.write(self.png)
        return path

    def __repr__(self) -> str:
        return f"Screenshot({self.title!r}, {len(self.png)} bytes)"
