"""Just enough HTML reading for a payer without a browser: forms, inputs, iframes, elements by id."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin


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
        self.iframes: list[str] = []
        self.texts: dict[str, str] = {}
        self._open_ids: list[tuple[str, str]] = []  # (tag, id) whose text is being collected
        self._form: Form | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "form":
            method = attributes.get("method", "get").lower()
            self._form = Form(attributes.get("id", ""), attributes.get("action", ""), method)
            self.forms.append(self._form)
        elif tag in ("input", "textarea", "select") and self._form is not None and attributes.get("name"):
            self._form.fields[attributes["name"]] = attributes.get("value", "")
        elif tag == "iframe" and attributes.get("src"):
            self.iframes.append(attributes["src"])
        if attributes.get("id"):
            self.texts.setdefault(attributes["id"], "")
            self._open_ids.append((tag, attributes["id"]))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        for index in range(len(self._open_ids) - 1, -1, -1):
            if self._open_ids[index][0] == tag:
                del self._open_ids[index]
                break

    def handle_data(self, data: str) -> None:
        for _, element_id in self._open_ids:
            self.texts[element_id] += data


@dataclass
class Page:
    """A fetched page: its URL, HTTP status, forms, iframes and the text of every element with an id."""

    url: str
    status_code: int
    html: str
    forms: list[Form]
    iframes: list[str]
    texts: dict[str, str]

    @classmethod
    def parse(cls, url: str, status_code: int, html: str) -> Page:
        reader = _Reader()
        reader.feed(html)
        for form in reader.forms:
            form.action = urljoin(url, form.action) if form.action else url
        return cls(url, status_code, html, reader.forms, [urljoin(url, s) for s in reader.iframes], reader.texts)

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
        return self.texts.get(element_id, "").strip()

    def field_errors(self) -> dict[str, str]:
        """``{field: message}`` from elements ``error-<field>`` (hosted pages' validation)."""
        return {k.removeprefix("error-"): v.strip() for k, v in self.texts.items() if k.startswith("error-")}
