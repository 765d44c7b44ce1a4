"""What a real browser loaded, read from Chromium's performance log: one ``Navigation`` per document request.

Selenium sees pages, not requests: a payment page that submits itself to the issuer's ACS, the ACS page, the
form that takes the payer back to the merchant all pass without a word.  Chromium's performance log
(``goog:loggingPrefs = {"performance": "ALL"}``) has the DevTools network events; the document requests
among them (the page itself and its frames: the 3-D Secure method URL) are what the browser payer turns
into ``Visit`` records, so its sequence diagrams show every hop the HTTP payer's show.  A page's script calls
(``fetch``, XHR) are left out, but those ``calls`` picks: the Hosted Fields SDK's tokenize call, made from the
merchant's page, is a hop of the payer's card to the gateway.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

_DOCUMENT = "Document"
_CALLS = ("Fetch", "XHR")


@dataclass(frozen=True)
class Navigation:
    request_id: str
    method: str
    url: str
    started: float  # the request's wall time (seconds since the epoch)
    frame: str
    post_data: str | None = None
    status: int | None = None  # None: no answer (yet, or the load failed)
    elapsed: float | None = None
    final_url: str = ""
    redirects: tuple[int, ...] = ()
    finished: bool = False
    kind: str = _DOCUMENT  # Chromium's resource type: ``Document``, or ``Fetch`` / ``XHR`` for a script's call
    _monotonic: float = field(default=0.0, repr=False)

    @property
    def is_document(self) -> bool:
        return self.kind == _DOCUMENT


def _events(entries: Iterable[Mapping[str, Any]]) -> Iterable[tuple[str, dict[str, Any]]]:
    for entry in entries:
        try:
            message = json.loads(entry["message"])["message"]
        except (KeyError, TypeError, ValueError):
            continue
        if isinstance(message, dict) and isinstance(message.get("params"), dict):
            yield str(message.get("method", "")), message["params"]


def navigations(entries: Iterable[Mapping[str, Any]], calls: Callable[[str], bool] | None = None) -> list[Navigation]:
    """The document requests of these log entries, in the order they left (redirects folded into one), and the
    script calls (``fetch``, XHR) whose URL ``calls`` picks."""
    found: dict[str, Navigation] = {}
    for method, params in _events(entries):
        request_id = str(params.get("requestId", ""))
        kind = str(params.get("type", ""))
        if method == "Network.requestWillBeSent" and (kind == _DOCUMENT or (calls is not None and kind in _CALLS)):
            request = params.get("request") or {}
            url = str(request.get("url", ""))
            if not url.startswith(("http://", "https://")) or not (kind == _DOCUMENT or (calls and calls(url))):
                continue
            earlier = found.get(request_id)
            if earlier is not None and "redirectResponse" in params:  # the same request, redirected
                hop = int((params.get("redirectResponse") or {}).get("status", 0))
                found[request_id] = replace(earlier, redirects=(*earlier.redirects, hop), final_url=url)
                continue
            found[request_id] = Navigation(
                request_id, str(request.get("method", "GET")).upper(), url, float(params.get("wallTime", 0.0)),
                str(params.get("frameId", "")), request.get("postData"), final_url=url, kind=kind,
                _monotonic=float(params.get("timestamp", 0.0)),
            )  # fmt: skip
        elif method == "Network.responseReceived" and request_id in found:
            response = params.get("response") or {}
            seen = found[request_id]
            found[request_id] = replace(
                seen, status=int(response.get("status", 0)) or None, final_url=str(response.get("url") or seen.url),
                elapsed=max(0.0, float(params.get("timestamp", seen._monotonic)) - seen._monotonic),
            )  # fmt: skip
        elif method in ("Network.loadingFinished", "Network.loadingFailed") and request_id in found:
            found[request_id] = replace(found[request_id], finished=True)
    return sorted(found.values(), key=lambda navigation: (navigation.started, navigation._monotonic))
