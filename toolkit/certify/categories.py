"""The categories of a failing certification run, for Allure 3 (``allurerc.mjs``) and Allure 2 (``categories.json``).

A failure lands in the first category that matches its status and message (the message starts with
the exception's class, ``toolkit.errors.ValidationError: sale: ...``).  Regular expressions use
``[\\s\\S]`` rather than ``(?s)``: Allure 3 runs them as JavaScript, Allure 2 as Java.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

FILE = "categories.json"
_ANY = r"[\s\S]*"


def _raised(*names: str) -> str:
    """A message that starts with one of these exception classes (with or without its module)."""
    return rf"^([\w.]+\.)?({'|'.join(names)}):{_ANY}"


CATEGORIES: list[dict[str, Any]] = [
    {
        "name": "Refused by the gateway",
        "description": "a validation or authentication error (HTTP 400, 401, 403) where the scenario expected none",
        "matchedStatuses": ["failed", "broken"],
        "messageRegex": _raised("ValidationError", "AuthenticationError", "ApiError"),
    },
    {
        "name": "Simulator or gateway fault",
        "description": "HTTP 500 or type=error: the gateway (or the simulator) failed to process the request",
        "matchedStatuses": ["failed", "broken"],
        "messageRegex": _raised("ServerError"),
    },
    {
        "name": "Transport: no answer",
        "description": "connection refused, reset or timed out, or an answer that is not a gateway response",
        "matchedStatuses": ["failed", "broken"],
        "messageRegex": _raised("TransportError", "ProtocolError", "ConnectionError", "ConnectionRefusedError"),
    },
    {
        "name": "No outcome in time",
        "description": "no final status or callback before the deadline (a payer who must act, a lost callback)",
        "matchedStatuses": ["failed", "broken"],
        "messageRegex": _raised("WaitTimeout", "CallbackTimeout"),
    },
    {
        "name": "The payer lost its way",
        "description": "the payer found no payment form, 3-D Secure challenge or way back on a page (the page is "
        "attached; a profile's [profiles.NAME.payer] names what no heuristic finds), or the gateway refused the card "
        "typed into its Hosted Fields (TokenizeRefused: the code and the field)",
        "matchedStatuses": ["failed", "broken"],
        "messageRegex": _raised("PayerError", "TokenizeRefused"),
    },
    {
        "name": "Declined",
        "description": "the gateway declined (or filtered) a payment the scenario expects to go through",
        "matchedStatuses": ["failed"],
        "messageRegex": rf"{_ANY}\b(declined|filtered)\b{_ANY}",
    },
    {
        "name": "Assertion: the gateway answered otherwise",
        "description": "a Then step saw another status, amount, page or message than the scenario expects",
        "matchedStatuses": ["failed"],
    },
    {
        "name": "Test defects",
        "description": "the test itself broke: a step not found, an error in a step or a fixture",
        "matchedStatuses": ["broken"],
    },
]


def category_of(status: str, message: str | None, categories: list[dict[str, Any]] = CATEGORIES) -> str | None:
    """The category a result falls in, matched as Allure 3 matches (first rule whose status and message fit)."""
    for category in categories:
        if status not in category.get("matchedStatuses", []):
            continue
        pattern = category.get("messageRegex")
        if pattern is None or re.search(pattern, message or ""):
            return str(category["name"])
    return None


def write(results_dir: Path) -> Path:
    """``categories.json`` in the Allure results (Allure 2 reads it there; gatekit's ``allurerc.mjs`` too)."""
    path = results_dir / FILE
    path.write_text(json.dumps(CATEGORIES, indent=2))
    return path
