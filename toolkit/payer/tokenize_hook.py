"""The Hosted Fields tokenize answer, kept where a page that navigates at once cannot take it away.

The real-browser payer reads what the SDK's tokenize call answered from Chromium (``Network.getResponseBody``).
Chromium forgets the answers of a document once the main frame commits the next one, and a merchant's checkout
often leaves at once: its page gets the token, its back end charges it and the page goes to the 3-D Secure
challenge or its result.  On a busy machine the payer then read nothing and said the answer was no JSON.  So each
page the payer opens also runs ``SCRIPT`` first (``Page.addScriptToEvaluateOnNewDocument``): it wraps ``fetch`` and
``XMLHttpRequest`` and writes each tokenize answer to the console as it arrives, which chromedriver keeps in its
browser log (``goog:loggingPrefs``) whatever the page does next; ``answers`` reads them back.  The answer holds a
one-time token or a refusal, never the card (the SDK posts the card; the answer does not repeat it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

MARK = "gatekit-tokenize-answer:"

SCRIPT = (
    "(() => {"
    f"const mark = {json.dumps(MARK)};"
    "const wanted = (url) => /\\/tokenize\\/hosted-fields/.test(String(url || ''));"
    "const tell = (url, status, text) => { try { console.info(mark + JSON.stringify({url: String(url), status,"
    " text: String(text)})); } catch (e) {} };"
    "if (window.fetch) { const original = window.fetch; window.fetch = function (input, init) {"
    " const answer = original.apply(this, arguments); const url = input && input.url ? input.url : input;"
    " if (wanted(url)) { answer.then((r) => r.clone().text().then((t) => tell(r.url || url, r.status, t)))"
    ".catch(() => {}); } return answer; }; }"
    "const XHR = window.XMLHttpRequest; if (XHR) { const open = XHR.prototype.open, send = XHR.prototype.send;"
    " XHR.prototype.open = function (method, url) { this.__gatekitUrl = url; return open.apply(this, arguments); };"
    " XHR.prototype.send = function () { if (wanted(this.__gatekitUrl)) { this.addEventListener('loadend', () =>"
    " tell(this.responseURL || this.__gatekitUrl, this.status, this.responseText)); }"
    " return send.apply(this, arguments); }; }"
    "})();"
)


def answers(entries: Iterable[Mapping[str, Any]]) -> list[tuple[str, int, str]]:
    """(url, HTTP status, body) of every tokenize answer ``SCRIPT`` wrote into chromedriver's browser log, in order.
    chromedriver writes a console message as ``<source url> <line>:<column> "<text, JSON-quoted>"``."""
    found = []
    for entry in entries:
        message = str(entry.get("message", ""))
        at = message.find(MARK)
        if at < 0:
            continue
        said = message[at + len(MARK) :].rstrip()
        for reading in (_quoted, _plain):
            data = reading(said)
            if isinstance(data, dict) and "text" in data:
                found.append((str(data.get("url", "")), int(data.get("status") or 0), str(data["text"])))
                break
    return found


def _quoted(said: str) -> Any:
    """The message as chromedriver quotes a string argument: the JSON inside escaped once more."""
    try:
        return json.loads(json.loads('"' + said.removesuffix('"') + '"'))
    except ValueError:
        return None


def _plain(said: str) -> Any:
    try:
        return json.loads(said.removesuffix('"'))
    except ValueError:
        return None
