"""Allure wiring for the suite: labels, Gherkin steps, HTTP exchanges, polls and callbacks as steps.

epic = the flow (the feature's name), feature = the operation (the scenario's operation tag),
story = the scenario.  Every HTTP exchange is attached masked, with a curl command that
reproduces it with placeholders for card data and signatures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import allure

from toolkit._version import __version__
from toolkit.exchange import Exchange
from toolkit.masking import mask_text
from toolkit.operations import OPERATIONS
from toolkit.waiting import PollAttempt

CATEGORIES = [
    {"name": "Declines", "matchedStatuses": ["failed"], "messageRegex": r"(?s).*\b(declined|filtered)\b.*"},
    {
        "name": "Protocol errors",
        "matchedStatuses": ["failed", "broken"],
        "traceRegex": r"(?s).*(ProtocolError|ValidationError|AuthenticationError|ServerError|ApiError).*",
    },
    {
        "name": "Infrastructure",
        "matchedStatuses": ["failed", "broken"],
        "traceRegex": r"(?s).*(TransportError|WaitTimeout|CallbackTimeout|ConnectionError|TimeoutError).*",
    },
    {"name": "Test defects", "matchedStatuses": ["broken"]},
]


def operation_tag(tags: set[str]) -> str | None:
    """The catalogue operation a scenario is tagged with (``@sale``, ``@payout_pay``...)."""
    return next((tag for tag in sorted(tags) if tag in OPERATIONS), None)


def label_scenario(feature_name: str, scenario_name: str, tags: set[str]) -> None:
    dynamic: Any = allure.dynamic  # allure-pytest's dynamic labels are untyped
    dynamic.epic(feature_name)
    dynamic.feature(operation_tag(tags) or "general")
    dynamic.story(scenario_name)
    for tag in sorted(tags):
        dynamic.tag(tag)


def attach_exchange(exchange: Exchange) -> None:
    """One HTTP exchange as a step with the masked request, the answer and a curl command."""
    status = exchange.status_code if exchange.status_code is not None else "no answer"
    with allure.step(f"HTTP {exchange.operation}: {status} in {exchange.elapsed * 1000:.0f} ms"):
        request = "\n".join(f"{name}={value}" for name, value in exchange.request_fields)
        allure.attach(f"POST {exchange.url}\n\n{request}", "request (masked)", allure.attachment_type.TEXT)
        allure.attach(exchange.response_body or (exchange.error or ""), "response", allure.attachment_type.TEXT)
        allure.attach(
            exchange.as_curl(), "curl (card data and signatures as placeholders)", allure.attachment_type.TEXT
        )
        if exchange.signature and exchange.signature.base_string:
            allure.attach(mask_text(exchange.signature.base_string), "OAuth base string", allure.attachment_type.TEXT)


def record_poll(attempt: PollAttempt) -> None:
    with allure.step(str(attempt)):
        pass


def record_arrival(summary: str, params: dict[str, str]) -> None:
    with allure.step(summary):
        allure.attach(json.dumps(params, indent=2), "parameters (masked)", allure.attachment_type.JSON)


def write_environment(results_dir: Path, values: dict[str, Any]) -> None:
    """``environment.properties`` and ``categories.json`` in the Allure results directory."""
    results_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"{key}={value}" for key, value in {**values, "toolkit.version": __version__}.items()]
    (results_dir / "environment.properties").write_text("\n".join(lines) + "\n")
    (results_dir / "categories.json").write_text(json.dumps(CATEGORIES, indent=2))
