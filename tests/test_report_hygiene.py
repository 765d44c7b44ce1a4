"""No full card number, CVV or control key anywhere under allure-results (issue: certification reports); the
payer's requests and the real browser's screenshots are there, masked."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.leaks import ROOT, har_errors, leaks
from tests.once_per_run import once_per_run
from toolkit import demo

# one worker runs the suite once and every test of this file reads its results (no worker waits for another)
pytestmark = pytest.mark.xdist_group("allure-results")


def test_leak_scanner_finds_what_it_looks_for():
    assert leaks("credit_card_number=4444555566661111&cvv2=123") == ["card number 4444555566661111", "cvv2 123"]
    assert leaks('{"cvv2": "321"}') == ["cvv2 321"]
    assert leaks(f"key {demo.CONTROL_KEY}") == ["the control key"]
    assert leaks("credit_card_number=444455******1111&cvv2=***&orderid=8056020") == []
    assert leaks('"pan": "404899332408589"') == ["card number 404899332408589"]
    # the digits of a digest are not a card number, even when they pass Luhn (seen in a control value)
    assert leaks("control=0e9c404899332408589fa1d2c3b4a5968778695a4b3c") == []


@pytest.fixture(scope="module")
def allure_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One suite run's Allure results, shared by the xdist workers (the run takes 20 s or more)."""

    return Path(once_per_run(tmp_path_factory, "allure-results", run_suite)["results"])


def run_suite(work: Path) -> dict[str, str]:
    """The suite's payer, 3-D Secure, payout, signing and callback flows, with Allure results and recordings."""
    results, recording = work / "allure-results", work / "recording"
    command = [sys.executable, "-m", "pytest", "steps", "-q", "-p", "no:cacheprovider", f"--alluredir={results}",
               f"--gateway-record={recording}",
               "-m", "threeds or hosted_forms or payouts or signing or tokenization or callbacks"]  # fmt: skip
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return {"results": str(results), "recording": str(recording)}


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same run's recordings (``--gateway-record``): one HAR per scenario and index.json."""
    return Path(once_per_run(tmp_path_factory, "allure-results", run_suite)["recording"])


def test_reports_carry_no_card_data_or_secrets(allure_results: Path):
    files = [path for path in allure_results.rglob("*") if path.is_file()]
    assert len(files) > 20, "the suite wrote too few results to be a meaningful scan"
    problems = {
        str(path.name): found
        for path in files
        if (found := leaks(path.read_text(errors="replace"), test_cvv2_allowed=path.suffix == ".har"))
    }
    assert problems == {}


def test_reports_attach_http_exchanges_with_curl(allure_results: Path):
    attachments = [path.read_text(errors="replace") for path in allure_results.glob("*-attachment*")]
    assert any(text.startswith("curl ") and "$CARD_NUMBER" in text for text in attachments)
    assert any("$CVV2" in text for text in attachments)


def _results(allure_results: Path) -> dict[str, dict[str, Any]]:
    found = [json.loads(path.read_text()) for path in allure_results.glob("*-result.json")]
    return {result["name"]: result for result in found}


def _steps(item: dict[str, Any]) -> list[dict[str, Any]]:
    """Every step under an item, depth first."""
    return [found for step in item.get("steps", []) for found in (step, *_steps(step))]


def _step(item: dict[str, Any], prefix: str) -> dict[str, Any]:
    return next(step for step in _steps(item) if step["name"].startswith(prefix))


def test_the_payers_requests_are_attached_like_the_merchants(allure_results: Path):
    result = _results(allure_results)["The payer passes the 3-D Secure 2 challenge"]
    attachments = ["payer's request (masked)", "page (HTML, masked)"]
    for prefix in ("Payer: load the 3-D Secure method URL: GET /paynet/",
                   "Payer: follow redirect-to: GET /paynet/",
                   "Payer: answer the 3-D Secure challenge: POST /paynet/",
                   "Payer: go back to the merchant: POST /"):  # fmt: skip
        step = _step(result, prefix)
        assert [attachment["name"] for attachment in step["attachments"]] == attachments, step
    redirect = _step(result, "And the payer's redirect to the merchant is signed by the gateway")
    arrival = redirect["steps"][0]["name"]
    assert arrival.startswith("Merchant received redirect orderid=") and arrival.endswith("(control verified)")


def test_every_scenario_that_talked_to_the_gateway_has_its_sequence_diagram(allure_results: Path):
    result = _results(allure_results)["The payer passes the 3-D Secure 2 challenge"]
    diagrams = [a for a in result["attachments"] if a["name"] == "sequence diagram"]
    assert len(diagrams) == 1 and diagrams[0]["type"] == "image/svg+xml"
    svg = (allure_results / diagrams[0]["source"]).read_text()
    for lane in ("merchant", "gateway", "ACS (3-D Secure)", "payer&#x27;s browser"):
        assert f">{lane}<" in svg, lane
    assert svg.index("load the 3-D Secure method URL") < svg.index("answer the 3-D Secure challenge")


def test_the_pages_the_real_browser_shows_are_screenshots(allure_results: Path):
    if os.environ.get("GATEKIT_BROWSER") == "off":
        pytest.skip("GATEKIT_BROWSER=off")
    result = _results(allure_results)["A 3-D Secure card on the payment page in a real browser"]
    shots = [step for step in _steps(result) if step["name"].startswith("Screenshot after the payer ")]
    assert [step["name"].split(":")[0] for step in shots] == [
        "Screenshot after the payer opened the page",
        "Screenshot after the payer pressed pay",
        "Screenshot after the payer answered the challenge",
    ]
    assert "3-D Secure" in shots[1]["name"]  # the issuer's page, before the password is typed
    for step in shots:
        (attachment,) = step["attachments"]
        assert attachment["type"] == "image/png"
        assert (allure_results / attachment["source"]).read_bytes().startswith(b"\x89PNG\r\n")


# --- recordings (--gateway-record) ------------------------------------------------------------------------


def test_every_recording_is_a_valid_har_1_2(recording: Path) -> None:
    archives = sorted(recording.glob("*.har"))
    index = json.loads((recording / "index.json").read_text())
    assert len(archives) == len(index["scenarios"]) > 20 and index["gatekit"] and index["profile"] == "simulator"
    for path in archives:
        errors = har_errors(path)
        assert errors == [], (path.name, errors[:5])
    kinds = {entry["_kind"] for path in archives for entry in json.loads(path.read_text())["log"]["entries"]}
    assert kinds == {"exchange", "visit", "callback", "redirect"}


def test_recordings_carry_no_card_data_or_keys_but_the_test_values_and_the_signatures(recording: Path) -> None:
    texts = {path.name: path.read_text() for path in recording.glob("*.har")}
    problems = {name: found for name, text in texts.items() if (found := leaks(text, test_cvv2_allowed=True))}
    assert problems == {}
    every = "\n".join(texts.values())
    assert re.search(r'"name": "cvv2",\s*"value": "(123|321|111)"', every), "the CVV2 that chooses is kept"
    assert re.search(r'"name": "control",\s*"value": "[0-9a-f]{40}"', every), "controls are kept"
    assert 'oauth_signature=\\"' in every or "oauth_signature=" in every, "OAuth signatures are kept"
    assert not re.search(r'"name": "password",\s*"value": "(?!\*\*\*)', every), "what the payer typed is not"


def test_each_scenarios_recording_is_attached_to_its_allure_result(allure_results: Path) -> None:
    results = _results(allure_results)
    attached = {name: [a for a in result.get("attachments", []) if a["name"] == "recording (HAR 1.2, masked)"]
                for name, result in results.items()}  # fmt: skip
    assert attached and all(len(found) == 1 for found in attached.values()), {n: len(a) for n, a in attached.items()}
    sample = next(iter(attached.values()))[0]
    assert json.loads((allure_results / sample["source"]).read_text())["log"]["version"] == "1.2"
