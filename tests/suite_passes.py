"""How much of the certification suite a test that runs it whole runs: a short pass in ``make test`` (its
8-minute budget), the whole suite in ``make test-long`` (``GATEKIT_FULL_SUITES=1``; CI runs both).

Each short pass keeps what its test is about: the scenarios the property concerns, not a sample.
"""

from __future__ import annotations

import os

FULL = os.environ.get("GATEKIT_FULL_SUITES") == "1"

# A team simulator: what goes through its control API and its callbacks, and the 3-D Secure roads.
TEAM_TAGS = "simulator or callbacks or gateway_run"
# Pages in another style: every scenario that has the payer read a page (hosted forms, 3-D Secure, Hosted Fields).
PAGES_TAGS = "browser or sale_form"
# Scenarios side by side against a stand-in sandbox: the follow-ups (several orders and waits each) and the callbacks
# (through the one forwarded port).
IN_FLIGHT_TAGS = "returns or callbacks"
# A scaffolded merchant project: its own feature and the packaged callbacks flow.
SCAFFOLD_TAGS = "checkout or callbacks"
# The suite run from the installed wheel in an empty directory: the real-browser scenarios (skipped there, saying
# what to install), 3-D Secure (the payer's pages) and the signing flows (the packaged key files).
WHEEL_TAGS = "browser or threeds or signing"


def certify_tags(short: str) -> list[str]:
    """``--tags`` for ``gatekit certify``: none for the whole suite."""
    return [] if FULL else ["--tags", short]


def lenient_step_modules() -> list[str]:
    """The step modules pytest runs for the lenient pass: those of the four @strict scenarios, and Hosted Fields'
    (the newest rules a lenient simulator must not forgive by mistake)."""
    if FULL:
        return ["steps"]
    return ["steps/test_refusals.py", "steps/test_tokenization.py", "steps/test_hosted_fields.py"]


def outside_step_modules() -> tuple[str, ...]:
    """The step modules run against an outside gateway without callbacks: the cards (what runs against a sandbox),
    the callbacks and the follow-ups (what it must skip, and say why)."""
    return ("steps",) if FULL else ("steps/test_cards.py", "steps/test_callbacks.py", "steps/test_preauth.py")
