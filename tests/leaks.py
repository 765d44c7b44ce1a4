"""Scans of what gatekit writes (reports, recordings): card data, keys, and HAR 1.2 validity."""

from __future__ import annotations

import json
import re
from pathlib import Path

from toolkit import demo
from toolkit.fields import luhn_ok
from toolkit.recording.masks import TEST_CVV2

ROOT = Path(__file__).resolve().parents[1]
HAR_SCHEMA = ROOT / "tests" / "har12.schema.json"

# Card-shaped values: 15-19 digits from the card schemes' ranges (2-6) that pass Luhn, standing alone (not
# inside a word). 13-digit runs are Allure's epoch-ms timestamps; nonces or ids starting with other digits are
# not card numbers; and a run of digits inside a hex digest (a control, a signature) is part of the digest: one
# in a few hundred SHA-1 values holds a Luhn-valid 15-digit run, which made this scan fail at random.
CARD_RUN = re.compile(r"(?<![0-9A-Za-z])[2-6]\d{14,18}(?![0-9A-Za-z])")
CVV_VALUE = re.compile(r"(?i)cvv2?\W{0,6}(?:=|:|%3D)\W{0,3}(\d{3,4})(?!\d)")


def leaks(text: str, *, test_cvv2_allowed: bool = False) -> list[str]:
    """Card numbers, CVV2 values, the control key, private keys in ``text``.  ``test_cvv2_allowed``: a recording
    (HAR) keeps the public sandbox test values that choose an outcome (``toolkit.recording.masks.TEST_CVV2``)."""
    found = [f"card number {m}" for m in CARD_RUN.findall(text) if luhn_ok(m)]
    found += [f"cvv2 {m}" for m in CVV_VALUE.findall(text) if not (test_cvv2_allowed and m in TEST_CVV2)]
    if demo.CONTROL_KEY in text:
        found.append("the control key")
    if "PRIVATE KEY" in text:
        found.append("a private key")
    return found


def har_errors(path: Path) -> list[str]:
    """What makes ``path`` not a HAR 1.2 archive (``tests/har12.schema.json``); empty when it is one."""
    from jsonschema import Draft7Validator

    validator = Draft7Validator(json.loads(HAR_SCHEMA.read_text()))
    document = json.loads(path.read_text())
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]
