"""The explorer at human pace: more than the 10 s method window between Send and "Act as the payer".

The simulator's clock stands in for the person: ``advance_clock(11)`` is eleven seconds of hesitation.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.explorer.test_export import run_exported
from toolkit.explorer import ExplorerModel, GatewaySession
from toolkit.explorer.history import METHOD_LAPSED, PAYER_METHOD, Result

HESITATION = 11  # seconds: past the gateway's 10 s method window


@pytest.fixture(scope="module")
def session() -> Iterator[GatewaySession]:
    with GatewaySession.embedded() as running:
        yield running


def slow_person(session: GatewaySession, model: ExplorerModel) -> Result:
    """Send a challenge sale, look at it for eleven seconds, then act as the payer."""
    model.select_outcome("3-D Secure challenge")
    sent = model.send()
    assert session.control is not None
    session.control.advance_clock(HESITATION)
    payer = model.follow_as_payer()
    assert payer.ok and payer.status is not None and payer.status.status.value == "approved", payer
    model.run_step("return", "4.00")
    return sent


def test_the_explorer_does_the_method_step_right_after_send(session: GatewaySession, tmp_path: Path):
    model = ExplorerModel(session)
    sent = slow_person(session, model)
    assert sent.tone == "wait" and "waits for the payer" in sent.title
    assert "the merchant reported the method step as completed at once" in sent.message
    assert [a.operation for a in model.history][:3] == ["sale", PAYER_METHOD, "upload_method_url_result"]
    assert model.orders[0].status is not None and model.orders[0].status.get("three-ds-comp-ind") == "Y"
    text = model.export()
    assert "the payer's browser completes the 3-D Secure method step" in text
    (tmp_path / "human_pace.feature").write_text(text)
    lapsed = ExplorerModel(session)
    lapsed.auto_method = False
    warned = slow_person(session, lapsed)
    assert "act as the payer within 10 s" in warned.message
    assert [a.operation for a in lapsed.history][:2] == ["sale", METHOD_LAPSED]
    exported = lapsed.export()
    assert "# in the explorer nobody reported the method step in time: the gateway timed it out (N)" in exported
    assert "And the merchant reports the method step as timed out" in exported
    assert "@upload_method_url_result" in exported
    (tmp_path / "lapsed.feature").write_text(exported)
    run = run_exported(tmp_path)
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
