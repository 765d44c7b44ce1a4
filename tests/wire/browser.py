"""A payer's browser without a JavaScript engine, written for the wire tests: plain ``requests`` and ``html.parser``.

It does what a browser does with the pages of a 3-D Secure flow and nothing of gatekit's payer: it loads a page's
frames (the method URL in a hidden frame), submits the forms a page posts into its frames, then the form the page
submits by itself (an ``onload`` or a script calling ``submit``), follows a meta refresh, and stops where a person
must act (a page with a password input: the ACS) or where the page would take the payer back to the merchant (a
form whose action is the merchant's ``redirect_url``; the fields it would post are kept, not sent).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from html import unescape
from html.parser import HTMLParser
from urllib.parse import urljoin

import requests

MAX_STEPS = 12
_REFRESH = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:;\s*url\s*=\s*['\"]?([^'\"]*))?", re.I)


@dataclass
class Form:
    action: str
    method: str
    target: str
    name: str
    id: str
    fields: dict[str, str] = field(default_factory=dict)
    password: bool = False


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        self.frames: list[str] = []  # iframe sources
        self.frame_names: set[str] = set()
        self.scripts: list[str] = []
        self.onload = ""
        self.refresh = ""
        self._in_script = False
        self._in_form = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {name: value or "" for name, value in attrs}
        if tag == "form":
            self._in_form = True
            self.forms.append(Form(named.get("action", ""), named.get("method", "get").lower(),
                                   named.get("target", ""), named.get("name", ""), named.get("id", "")))  # fmt: skip
        elif tag == "input" and self.forms and self._in_form:
            form = self.forms[-1]
            if named.get("type", "").lower() == "password":
                form.password = True
            if named.get("name"):
                form.fields[named["name"]] = named.get("value", "")
        elif tag == "iframe":
            if named.get("src"):
                self.frames.append(named["src"])
            if named.get("name"):
                self.frame_names.add(named["name"])
        elif tag == "script":
            self._in_script = True
            self.scripts.append("")
        elif tag == "body":
            self.onload = named.get("onload", "")
        elif tag == "meta" and named.get("http-equiv", "").lower() == "refresh":
            self.refresh = named.get("content", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False
        elif tag == "form":
            self._in_form = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data


@dataclass
class Shown:
    """Where the browser stopped: the page's URL and HTML, the ACS form (``challenge``) or the fields the page
    would post back to the merchant (``to_merchant``), and every URL it requested on the way (``visited``)."""

    url: str
    html: str
    challenge: Form | None = None
    to_merchant: Form | None = None
    visited: list[tuple[str, str, int]] = field(default_factory=list)  # (method, url, HTTP status)


class Browser:
    """One payer (one cookie jar).  ``merchant_url``: the merchant's ``redirect_url`` (the way back)."""

    def __init__(self, merchant_url: str, session: requests.Session | None = None) -> None:
        self.merchant_url = merchant_url
        self.session = session or requests.Session()

    def show(self, html: str, url: str = "about:blank", visited: list[tuple[str, str, int]] | None = None) -> Shown:
        """Render ``html`` (the status answer's) as a browser would, until a person must act or it goes back."""
        visited = [] if visited is None else visited
        for _ in range(MAX_STEPS):
            page = _Reader()
            page.feed(html)
            for form in page.forms:
                form.action = urljoin(url, unescape(form.action)) if form.action else url
            back = next((form for form in page.forms if form.action.startswith(self.merchant_url)), None)
            if back is not None:
                return Shown(url, html, to_merchant=back, visited=visited)
            asking = next((form for form in page.forms if form.password), None)
            if asking is not None:
                return Shown(url, html, challenge=asking, visited=visited)
            for src in page.frames:  # the frames load with the page
                self._get(urljoin(url, unescape(src)), visited)
            scripted = " ".join([page.onload, *page.scripts])
            if "submit" in scripted:
                for form in (form for form in page.forms if form.target in page.frame_names):
                    self._send(form, visited)  # posted into a (hidden) frame: the page stays
            top = [form for form in page.forms if form.target not in page.frame_names]
            refresh = _REFRESH.match(page.refresh) if page.refresh else None
            if "submit" in scripted and top:
                response = self._send(_named(top, scripted), visited)
            elif refresh is not None:
                time.sleep(min(float(refresh.group(1)), 2.0))  # a meta refresh waits what it says, as a browser does
                response = self._get(urljoin(url, refresh.group(2) or url), visited)
            else:
                return Shown(url, html, visited=visited)
            url, html = response.url, response.text
        raise AssertionError(f"the page kept moving on by itself ({MAX_STEPS} steps): {url}")

    def answer(self, shown: Shown, password: str) -> Shown:
        """Type ``password`` into the ACS form and submit it; then what the pages do by themselves."""
        assert shown.challenge is not None, f"no ACS form on {shown.url}"
        form = shown.challenge
        names = [name for name in form.fields if name.lower() in ("password", "otp", "pwd")] or ["password"]
        response = self._send(form, shown.visited, {names[0]: password})
        return self.show(response.text, response.url, shown.visited)

    def _get(self, url: str, visited: list[tuple[str, str, int]]) -> requests.Response:
        response = self.session.get(url, timeout=30)
        visited.append(("GET", url, response.status_code))
        return response

    def _send(
        self, form: Form, visited: list[tuple[str, str, int]], typed: dict[str, str] | None = None
    ) -> requests.Response:
        data = {**form.fields, **(typed or {})}
        if form.method == "post":
            response = self.session.post(form.action, data=data, timeout=30)
        else:
            response = self.session.get(form.action, params=data, timeout=30)
        visited.append((form.method.upper(), form.action, response.status_code))
        assert response.status_code < 400, f"{form.action} answered HTTP {response.status_code}: {response.text[:400]}"
        return response


def _named(forms: list[Form], script: str) -> Form:
    """The form a script names (by id or name), else the first."""
    for form in forms:
        if (form.id and form.id in script) or (form.name and form.name in script):
            return form
    return forms[0]
