"""The explorer at human pace: more than the 10 s method window between Send and "Act as the payer".

The simulator's clock stands in for the person: ``advance_clock(11)`` is eleven seconds of hesitation.  The
window runs from the moment the payer's browser loads the method URL, not from the sale (behaviour 12): on the
gateway-run road nothing loads it before the payer acts, so nothing lapses; on the merchant-run road the
merchant's page loads it right after Send, and the report must follow within the window.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.explorer.test_export import run_exported
from toolkit.explorer import ExplorerModel, GatewaySession
from toolkit.explorer.history import METHOD_LAPSED, PAYER_CHALLENGE, PAYER_METHOD, PAYER_STATUS_PAGE, Result

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


def operations(model: ExplorerModel) -> list[str]:
    return [action.operation for action in model.history]


def test_on_the_gateway_run_road_no_window_runs_before_the_payer_acts(session: GatewaySession, tmp_path: Path):
    model = ExplorerModel(session)
    sent = slow_person(session, model)
    assert sent.tone == "wait" and "waits for the payer" in sent.title
    assert "run by the gateway" in sent.message and "window starts with the load" in sent.message
    assert operations(model)[:3] == ["sale", PAYER_STATUS_PAGE, PAYER_CHALLENGE]
    sale = model.orders[0]
    assert sale.status is not None and sale.status.get("three-ds-comp-ind") == "Y", "the page's own load, in time"
    assert not [a for a in model.history if a.operation.startswith("upload_")]
    text = model.export()
    assert "And the merchant shows the 3-D Secure page of the status to the payer's browser" in text
    assert 'And the payer comes back to the merchant with a signed "approved"' in text
    assert "@gateway_run" in text and "@upload_" not in text
    (tmp_path / "gateway_run_at_human_pace.feature").write_text(text)

    reported = ExplorerModel(session)
    reported.road = "merchant-run"
    sent = slow_person(session, reported)
    assert "the merchant reported the method step as completed at once" in sent.message
    assert operations(reported)[:3] == ["sale", PAYER_METHOD, "upload_method_url_result"]
    assert reported.orders[0].status is not None and reported.orders[0].status.get("three-ds-comp-ind") == "Y"
    text = reported.export()
    assert "the payer's browser completes the 3-D Secure method step" in text
    (tmp_path / "merchant_run_at_once.feature").write_text(text)

    lapsed = ExplorerModel(session)
    lapsed.road, lapsed.auto_method = "merchant-run", False
    warned = slow_person(session, lapsed)
    assert "the payer's browser loaded the method URL; act as the payer within 10 s" in warned.message
    assert operations(lapsed)[:6] == [
        "sale", PAYER_METHOD, METHOD_LAPSED, "upload_method_url_result", PAYER_CHALLENGE, "upload_cres_result"
    ]  # fmt: skip
    late = lapsed.history[3]
    assert late.detail == {"how": "timed out"} and not late.refusal, "an N after the window is answered"
    exported = lapsed.export()
    assert "# in the explorer nobody reported the method step within 10 s of the load" in exported
    assert "And the merchant reports the method step as timed out" in exported
    (tmp_path / "lapsed.feature").write_text(exported)
    run = run_exported(tmp_path)
    assert run.returncode == 0 and "3 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]


def test_a_method_step_nobody_started_does_not_lapse(session: GatewaySession):
    """Merchant-run, reported by hand as absent: nothing loads the method URL, so eleven seconds change nothing."""
    model = ExplorerModel(session)
    model.road, model.auto_method, model.method_result = "merchant-run", False, "absent"
    sent = slow_person(session, model)
    assert "act as the payer to report the method step as absent" in sent.message
    assert operations(model)[:4] == ["sale", "upload_method_url_result", PAYER_CHALLENGE, "upload_cres_result"]
    assert model.orders[0].status is not None and model.orders[0].status.get("three-ds-comp-ind") == "U"
