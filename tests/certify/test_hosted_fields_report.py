"""The Hosted Fields flow's Allure results (``features/hosted_fields``): each scenario's sequence diagram draws the
ticket, the SDK's tokenize call, the v4 sale and status (and, with 3-D Secure, the payer's way to the issuer and
back); the real-browser scenario carries a screenshot of the merchant's checkout page with the gateway's iframes,
taken while they were still empty; nothing anywhere holds a card number, a CVV or the control key."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.leaks import ROOT, leaks

pytestmark = pytest.mark.slow

EVERY = ("create_ephemeral_ticket", "tokenize the card (the SDK&#x27;s call)", "sale_v4 10.42 EUR", "status_v4")
WAY_BACK = ("follow redirect-to", "answer the 3-D Secure challenge", "go back to the merchant")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hf") / "allure-results"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GATEWAY_", "GATEKIT_"))}
    command = [sys.executable, "-m", "pytest", "steps/test_hosted_fields.py", "-q", "-p", "no:cacheprovider",
               "-p", "no:randomly", f"--alluredir={folder}"]  # fmt: skip
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0 and "7 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]
    return folder


def scenarios(results: Path) -> dict[str, dict[str, Any]]:
    found = [json.loads(path.read_text()) for path in results.glob("*-result.json")]
    return {result["name"]: result for result in found}


def diagram_words(results: Path, result: dict[str, Any]) -> list[str]:
    (svg,) = [item["source"] for item in result["attachments"] if item["name"] == "sequence diagram"]
    return re.findall(r"<text[^>]*>([^<]*)</text>", (results / svg).read_text())


def at(words: list[str], label: str) -> int:
    """Where the arrow ``label`` is (repeated polls are one arrow: ``status_v4 ×4``); -1 when it is not there."""
    return next((i for i, word in enumerate(words) if word == label or word.startswith(f"{label} ×")), -1)


def steps_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    every: list[dict[str, Any]] = []
    for step in result.get("steps", []):
        every += [step, *steps_of(step)]
    return every


def test_every_scenario_draws_the_ticket_the_tokenize_call_the_sale_and_the_status(results: Path):
    found = scenarios(results)
    assert len(found) == 7 and all(result["status"] == "passed" for result in found.values())
    for name, result in found.items():
        words = diagram_words(results, result)
        wanted = EVERY if "ticket tokenizes" not in name else EVERY[:2]  # (that one charges nothing)
        assert all(at(words, word) >= 0 for word in wanted), (name, words)
        if "3-D Secure" in name or "real browser" in name:
            order = [at(words, word) for word in (*EVERY, *WAY_BACK)]
            assert -1 not in order and order == sorted(order), (name, words)
            assert any("control ✓" in word for word in words), (name, words)


def test_the_real_browser_scenario_shows_the_checkout_page_with_the_gateway_s_iframes_still_empty(results: Path):
    (result,) = [result for name, result in scenarios(results).items() if "real browser" in name]
    steps = steps_of(result)
    titles = [step["name"] for step in steps]
    shot = titles.index("Screenshot after the payer opened the merchant's checkout page: Checkout · the merchant's "
                        "page with the gateway's Hosted Fields")  # fmt: skip
    fields = [i for i, title in enumerate(titles) if title.startswith("Payer: load the gateway's card field")]
    tokenize = next(i for i, title in enumerate(titles) if title.startswith("Payer: tokenize the card"))
    assert len(fields) == 3 and max(fields) < shot < tokenize, titles  # the iframes loaded, nothing typed yet
    (png,) = [item["source"] for item in steps[shot]["attachments"] if item["type"] == "image/png"]
    assert (results / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shots = [item for step in steps for item in step.get("attachments", []) if item["type"] == "image/png"]
    assert len(shots) == 2, "the checkout page, ready and empty; the page after the challenge"


def test_the_results_hold_no_card_data(results: Path):
    problems = {path.name: found for path in results.iterdir() if (found := leaks(path.read_text(errors="replace")))}
    assert problems == {}
