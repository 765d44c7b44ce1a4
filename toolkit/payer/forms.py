"""Just enough HTML reading for a payer without a browser: forms with their controls and buttons, labels,
iframes, links, the text of elements by id, and what makes a page move on by itself (an ``onload`` or script
``submit()``, a meta refresh).

What a page *is* (a payment form, a 3-D Secure challenge, the way back to the merchant) is read from these
by ``toolkit.payer.reading``; this module only parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin

# Elements without an end tag: they hold no text.
VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"})
INPUT_TAGS = ("input", "textarea", "select")
BUTTON_TYPES = ("submit", "image")
UNSENT_TYPES = ("submit", "image", "button", "reset", "file")  # inputs a form does not send by themselves
_REFRESH = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:[;,]\s*(?:url\s*=\s*)?['\"]?([^'\"]*)['\"]?)?\s*$", re.IGNORECASE)


@dataclass
class Control:
    """One ``input``, ``select`` or ``textarea``: its attributes, its label and (for a select) its options."""

    tag: str
    attributes: dict[str, str]
    label: str = ""
    options: list[tuple[str, str]] = field(default_factory=list)  # (value, text) of a select
    text: str = ""  # a textarea's content

    @property
    def name(self) -> str:
        return self.attributes.get("name", "")

    @property
    def id(self) -> str:
        return self.attributes.get("id", "")

    @property
    def type(self) -> str:
        """``text`` by default; ``select`` and ``textarea`` for those elements."""
        return self.tag if self.tag != "input" else self.attributes.get("type", "text").lower()

    @property
    def value(self) -> str:
        """What the form sends: a select's chosen (or first) option, a textarea's text, an input's value."""
        if self.tag == "select":
            chosen = self.attributes.get("_selected")
            return chosen if chosen is not None else (self.options[0][0] if self.options else "")
        return self.text if self.tag == "textarea" else self.attributes.get("value", "")

    @property
    def sent(self) -> bool:
        """Sent with its form: named, not a button, not an unchecked box, not disabled."""
        if not self.name or self.type in UNSENT_TYPES or "disabled" in self.attributes:
            return False
        return self.type not in ("checkbox", "radio") or "checked" in self.attributes

    def words(self) -> str:
        """Everything that names the control, lower case: name, id, label, placeholder, autocomplete, aria-label."""
        names = ("name", "id", "placeholder", "autocomplete", "aria-label", "title", "class")
        return " ".join([self.label, *(self.attributes.get(name, "") for name in names)]).lower()


@dataclass
class Button:
    """A submit button of a form (``<button>`` or ``<input type=submit|image>``): sent as name=value when pressed."""

    attributes: dict[str, str]
    text: str = ""
    tag: str = "button"  # or "input" (type=submit or image)

    @property
    def name(self) -> str:
        return self.attributes.get("name", "")

    @property
    def value(self) -> str:
        return self.attributes.get("value", "")

    @property
    def id(self) -> str:
        return self.attributes.get("id", "")

    def words(self) -> str:
        names = ("name", "id", "value", "title", "aria-label", "class", "alt")
        return " ".join([self.text, *(self.attributes.get(name, "") for name in names)]).lower()


@dataclass
class Form:
    """A ``<form>``: where it goes, how, its named fields with their current values, its controls and buttons.

    ``fields`` is what the form sends when submitted with no button (the browser's successful controls);
    ``target`` names the frame it loads into (``""``: the page itself); ``classes`` its class attribute.
    """

    id: str
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)
    controls: list[Control] = field(default_factory=list, compare=False, repr=False)
    buttons: list[Button] = field(default_factory=list, compare=False, repr=False)
    target: str = field(default="", compare=False)
    name: str = field(default="", compare=False)
    classes: str = field(default="", compare=False, repr=False)
    index: int = field(default=0, compare=False, repr=False)  # its place among the page's forms

    def control(self, name: str) -> Control | None:
        return next((control for control in self.controls if control.name == name), None)

    @property
    def visible_controls(self) -> list[Control]:
        """The controls a person sees and may type into (not hidden, not buttons)."""
        return [c for c in self.controls if c.type not in ("hidden", *UNSENT_TYPES)]

    def describe(self) -> str:
        """``form #payment-form (POST .../pay): inputs pan (text, "Card number"), exp...; buttons Pay``."""
        inputs = ", ".join(
            f"{c.name or c.id or '(no name)'} ({c.type}{', ' + repr(c.label) if c.label else ''})"
            for c in self.controls
            if c.type not in UNSENT_TYPES
        )
        buttons = ", ".join(b.text or b.value or b.name or "(unnamed)" for b in self.buttons)
        where = f"#{self.id}" if self.id else f"number {self.index + 1}"
        return (
            f"form {where} ({self.method.upper()} {self.action}): inputs {inputs or 'none'}; "
            f"buttons {buttons or 'none'}"
        )


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        self.inputs: list[dict[str, str]] = []
        self.iframes: list[str] = []
        self.frames: dict[str, str] = {}  # name -> src of named iframes (a form's target)
        self.links: dict[str, str] = {}
        self.texts: dict[str, str] = {}
        self.labels: dict[str, str] = {}  # for= id -> label text
        self.scripts: list[str] = []
        self.onload = ""
        self.refresh = ""
        self.title = ""
        self._open: list[tuple[str, str]] = []  # (tag, id or "") of the elements not yet closed
        self._form: Form | None = None
        self._select: Control | None = None
        self._option: list[str] | None = None  # [value or None marker, text]
        self._textarea: Control | None = None
        self._button: Button | None = None
        self._label: list[str] | None = None  # [for, text]
        self._label_controls: list[Control] = []
        self._script: list[str] | None = None
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        element_id = attributes.get("id", "")
        if tag == "form":
            method = attributes.get("method", "get").lower() or "get"
            self._form = Form(
                element_id,
                attributes.get("action", ""),
                method,
                target=attributes.get("target", ""),
                name=attributes.get("name", ""),
                classes=attributes.get("class", ""),
                index=len(self.forms),
            )
            self.forms.append(self._form)
        elif tag in INPUT_TAGS:
            self._control(tag, attributes)
        elif tag == "button":
            self._button = Button(attributes)
            if attributes.get("type", "submit").lower() == "submit" and self._form is not None:
                self._form.buttons.append(self._button)
        elif tag == "option" and self._select is not None:
            self._option = [attributes.get("value", "\0"), ""]
            if "selected" in attributes:
                self._select.attributes["_selected"] = "\0pending"
        elif tag == "iframe":
            if attributes.get("src"):
                self.iframes.append(attributes["src"])
            if attributes.get("name"):
                self.frames[attributes["name"]] = attributes.get("src", "")
        elif tag == "a" and element_id:
            self.links[element_id] = attributes.get("href", "")
        elif tag == "label":
            self._label = [attributes.get("for", ""), ""]
            self._label_controls = []
        elif tag == "script":
            self._script = []
        elif tag == "body":
            self.onload = attributes.get("onload", "")
        elif tag == "meta" and attributes.get("http-equiv", "").lower() == "refresh":
            self.refresh = attributes.get("content", "")
        elif tag == "title":
            self._in_title = True
        if element_id:
            self.texts.setdefault(element_id, "")
        if tag not in VOID_TAGS:
            self._open.append((tag, element_id))

    def _control(self, tag: str, attributes: dict[str, str]) -> None:
        self.inputs.append(attributes)
        control = Control(tag, dict(attributes))
        if self._label is not None:
            self._label_controls.append(control)
        if tag == "select":
            self._select = control
        elif tag == "textarea":
            self._textarea = control
        if self._form is None:
            return
        self._form.controls.append(control)
        if tag == "input" and control.type in BUTTON_TYPES:
            self._form.buttons.append(Button(attributes, attributes.get("value", ""), "input"))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        elif tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None
        elif tag == "button":
            self._button = None
        elif tag == "option":
            self._end_option()
        elif tag == "label" and self._label is not None:
            text = _shown(self._label[1])
            if self._label[0]:
                self.labels[self._label[0]] = text
            for control in self._label_controls:
                control.label = control.label or text
            self._label = None
        elif tag == "script" and self._script is not None:
            self.scripts.append("".join(self._script))
            self._script = None
        elif tag == "title":
            self._in_title = False
        if any(open_tag == tag for open_tag, _ in self._open):  # a stray end tag closes nothing
            while self._open.pop()[0] != tag:
                pass

    def _end_option(self) -> None:
        if self._option is None or self._select is None:
            return
        value, text = self._option
        value = _shown(text) if value == "\0" else value
        self._select.options.append((value, _shown(text)))
        if self._select.attributes.get("_selected") == "\0pending":
            self._select.attributes["_selected"] = value
        self._option = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._script.append(data)
            return
        if self._in_title:
            self.title += data
        if self._option is not None:
            self._option[1] += data
        if self._textarea is not None:
            self._textarea.text += data
        if self._button is not None:
            self._button.text = _shown(self._button.text + " " + data)
        if self._label is not None:
            self._label[1] += data
        for _, element_id in self._open:
            if element_id:
                self.texts[element_id] += data

    def close(self) -> None:
        super().close()
        self._end_option()
        for form in self.forms:
            for control in form.controls:
                if not control.label and control.id in self.labels:
                    control.label = self.labels[control.id]
                if control.sent:
                    form.fields[control.name] = control.value


@dataclass
class Page:
    """A fetched page: its URL, HTTP status, forms, inputs, iframes, links and the text of every element with an id.

    URLs (form actions, iframe sources, link targets, a meta refresh) are resolved against the page's URL;
    ``redirects`` are the HTTP statuses of the redirects that led to the page.  ``scripts`` are the inline
    scripts' texts, ``onload`` the body's handler, ``refresh`` a meta refresh as (seconds, URL).
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
    scripts: list[str] = field(default_factory=list, repr=False)
    onload: str = field(default="", repr=False)
    refresh: tuple[float, str] | None = field(default=None, repr=False)
    frames: dict[str, str] = field(default_factory=dict, repr=False)  # name of an iframe -> its src
    title: str = field(default="", repr=False)

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
            reader.scripts,
            reader.onload,
            _refresh(url, reader.refresh),
            {name: urljoin(url, src) if src else "" for name, src in reader.frames.items()},
            _shown(reader.title),
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

    def visible_text(self) -> str:
        """The page's text without its scripts and tags, as one line (what a person reads)."""
        body = re.sub(r"(?is)<(script|style|noscript)\b.*?</\1>", " ", self.html)
        return _shown(re.sub(r"<[^>]+>", " ", body))


def _refresh(url: str, content: str) -> tuple[float, str] | None:
    """``<meta http-equiv=refresh content="0; url=...">`` as (seconds, absolute URL); None when there is none."""
    match = _REFRESH.match(content) if content else None
    if match is None:
        return None
    return float(match.group(1)), urljoin(url, (match.group(2) or "").strip()) if match.group(2) else url


def _shown(text: str) -> str:
    return " ".join(text.split())
