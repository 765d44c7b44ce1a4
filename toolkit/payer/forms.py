"""Just enough HTML reading for a payer without a browser: forms, inputs, iframes, links, elements by id."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin

# Elements without an end tag: they hold no text.
VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"})
INPUT_TAGS = ("input", "textarea", "select")


@dataclass
class Form:
    """A ``<form>``: where it goes, how, and its named inputs with their current values."""

    id: str
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        self.inputs: list[dict[str, str]] = []
        self.iframes: list[str] = []
        self.links: dict[str, str] = {}
        self.texts: dict[str, str] = {}
        self._open: list[tuple[str, str]] = []  # (tag, id or "") of the elements not yet closed
        self._form: Form | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        element_id = attributes.get("id", "")
        if tag == "form":
            method = attributes.get("method", "get").lower()
            self._form = Form(element_id, attributes.get("action", ""), method)
            self.forms.append(self._form)
        elif tag in INPUT_TAGS:
            self.inputs.append(attributes)
            if self._form is not None and attributes.get("name"):
                self._form.fields[attributes["name"]] = attributes.get("value", "")
        elif tag == "iframe" and attributes.get("src"):
            self.iframes.append(attributes["src"])
        elif tag == "a" and element_id:
            self.links[element_id] = attributes.get("href", "")
        if element_id:
            self.texts.setdefault(element_id, "")
        if tag not in VOID_TAGS:
            self._open.append((tag, element_id))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        if any(open_tag == tag for open_tag, _ in self._open):  # a stray end tag closes nothing
            while self._open.pop()[0] != tag:
                pass

    def handle_data(self, data: str) -> None:
        for _, element_id in self._open:
            if element_id:
                self.texts[element_id] += data


@dataclass
class Page:
    """A fetched page: its URL, HTTP status, forms, inputs, iframes, links and the text of every element with an id.

    URLs (form actions, iframe sources, link targets) are resolved against the page's URL;
    ``redirects`` are the HTTP statuses of the redirects that led to the page.
    """

    url: str
    status_code: int
    html: str = field(repr=False)
    forms: list[Form]
    iframes: list[str]
    texts: dict[str, str] = field(repr=False)
    inputs: list[dict[str, str]] = field(default_factory=list, repr=False)  # every input, select, textarea
    links: dict[str, str] = field(default_factory=dict, repr=False)  # id of an <a> -> href
    redirects: tuple[int, ...] = ()

    @classmethod
    def parse(cls, url: str, status_code: int, html: str, *, redirects: tuple[int, ...] = ()) -> Page:
        reader = _Reader()
        reader.feed(html)
        reader.close()
        for form in reader.forms:
            form.action = urljoin(url, form.action) if form.action else url
        return cls(
            url,
            status_code,
            html,
            reader.forms,
            [urljoin(url, src) for src in reader.iframes],
            reader.texts,
            reader.inputs,
            {element_id: urljoin(url, href) for element_id, href in reader.links.items()},
            redirects,
        )

    def form(self, form_id: str | None = None) -> Form:
        """The form with this id (or the only/first form); LookupError names what the page has."""
        for form in self.forms:
            if form_id is None or form.id == form_id:
                return form
        ids = ", ".join(f.id or "(no id)" for f in self.forms) or "none"
        raise LookupError(f"{self.url}: no form {form_id or ''} on the page (forms: {ids})")

    def has(self, element_id: str) -> bool:
        return element_id in self.texts

    def text(self, element_id: str) -> str:
        """The element's text as a browser shows it (runs of white space as one space); "" if there is none."""
        return _shown(self.texts.get(element_id, ""))

    def field_errors(self) -> dict[str, str]:
        """``{field: message}`` from elements ``error-<field>`` (hosted pages' validation)."""
        return {k.removeprefix("error-"): _shown(v) for k, v in self.texts.items() if k.startswith("error-")}


def _shown(text: str) -> str:
    return " ".join(text.split())
