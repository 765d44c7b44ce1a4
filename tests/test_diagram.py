"""Sequence diagrams (toolkit.diagram): lanes and arrows of real flows, read back from the SVG; nothing leaks."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from tests.test_notebooks import leaks
from toolkit.callbacks import Received
from toolkit.diagram import Diagram, recording_diagram, sequence_diagram, simulator_diagram
from toolkit.exchange import Exchange
from toolkit.explorer import GatewaySession
from toolkit.flows import Order
from toolkit.testdata.cards import card_for

SVG = "{http://www.w3.org/2000/svg}"
PAN = "4538977399606732"


@pytest.fixture(scope="module")
def sim() -> Iterator[GatewaySession]:
    with GatewaySession.embedded() as session:
        yield session


def drawn(svg: str) -> tuple[list[str], list[tuple[str, str, str, str]]]:
    """(lanes, arrows as (from, to, label, outcome)) in the order the SVG draws them."""
    root = ET.fromstring(svg)
    groups = list(root.iter(SVG + "g"))
    lanes = [g.get("data-lane", "") for g in groups if g.get("class") == "lane"]
    arrows = [
        (g.get("data-from", ""), g.get("data-to", ""), g.get("data-label", ""), g.get("data-outcome", ""))
        for g in groups
        if g.get("class") == "arrow"
    ]
    return lanes, arrows


def three_ds_sale(sim: GatewaySession) -> Order:
    """A 3-D Secure 2 sale with a challenge, done as the merchant and the payer do it."""
    order = sim.merchant.pay("sale", card_for("3ds-challenge", number=PAN), Decimal("10.42"))
    sim.payer.load_method_url(sim.merchant.payer_step(order))
    sim.merchant.report_method(order, "completed")
    page = sim.payer.answer_challenge(sim.payer.follow(sim.merchant.payer_step(order)))
    sim.payer.return_to_merchant(page)
    sim.merchant.upload_challenge_result(order, sim.merchant.redirect_for(order))
    sim.merchant.approved_status(order)
    sim.receiver.wait_for_callback(orderid=order.orderid, status="approved")
    return order


def test_a_3ds_sale_has_every_lane_and_its_arrows_in_order(sim: GatewaySession):
    order = three_ds_sale(sim)
    lanes, arrows = drawn(sim.diagram_of(order).svg)
    assert lanes == ["merchant", "gateway", "acs", "payer", "endpoint"]
    steps = [(source, target, label) for source, target, label, _ in arrows]
    callback = ("gateway", "endpoint", "callback sale approved")
    assert steps.count(callback) == 1 and steps.index(callback) >= 9  # it may overtake the last poll
    outcomes = [outcome for *_, outcome in arrows]
    del outcomes[steps.index(callback)]
    steps.remove(callback)
    assert steps == [
        ("merchant", "gateway", "sale 10.42 EUR"),
        ("merchant", "gateway", "status"),
        ("payer", "acs", "load the 3-D Secure method URL"),
        ("merchant", "gateway", "upload_method_url_result"),
        ("merchant", "gateway", "status"),
        ("payer", "acs", "follow redirect-to"),
        ("payer", "acs", "answer the 3-D Secure challenge"),
        ("payer", "endpoint", "go back to the merchant"),
        ("merchant", "gateway", "upload_cres_result"),
        ("merchant", "gateway", "status"),
    ]
    assert outcomes[0] == "HTTP 200 · async-response"
    assert outcomes[1] == "HTTP 200 · processing (the payer must act)"
    assert "the 3-D Secure challenge" in outcomes[5] and "control ✓" in outcomes[7]
    assert outcomes[-1] == "HTTP 200 · approved"


def test_every_arrow_says_how_long_and_when(sim: GatewaySession):
    svg = sim.diagram_of(three_ds_sale(sim)).svg
    root = ET.fromstring(svg)
    titles = [g.find(SVG + "title") for g in root.iter(SVG + "g") if g.get("class") == "arrow"]
    assert all(t is not None and t.text for t in titles)
    timed = [t.text for t in titles if t is not None and t.text and t.text.endswith(" ms")]
    assert len(timed) >= 9, "every request of the merchant and the payer is timed"
    offsets = [t.text for g in root.iter(SVG + "g") if g.get("class") == "arrow" for t in g.iter(SVG + "text")][::3]
    assert offsets[0] == "+0 ms" and all(o and o.startswith("+") for o in offsets)


def test_a_payout_has_no_payer_lanes(sim: GatewaySession):
    order = sim.merchant.payout("payout", Decimal("7.00"), card_for("approved", number=PAN))
    sim.merchant.approved_status(order)
    sim.receiver.wait_for_callback(orderid=order.orderid)
    lanes, arrows = drawn(sim.diagram_of(order).svg)
    assert lanes == ["merchant", "gateway", "endpoint"]
    assert arrows[0][:3] == ("merchant", "gateway", "payout 7.00 EUR")
    assert ("gateway", "endpoint", "callback payout approved", "answered 200 · control ✓") in arrows
    assert {a[2].split(" ×")[0] for a in arrows[1:] if a[0] == "merchant"} == {"status"}


def test_a_refused_callback_and_its_retry(sim: GatewaySession):
    sim.receiver.fail_next(1, status=500)  # before the sale: its callback leaves at once
    order = sim.merchant.pay("sale", card_for("approved"), Decimal("3.00"))
    assert sim.control is not None
    sim.control.wait_for_callbacks(order.orderid, attempts=1)
    sim.control.advance_clock(1)  # the first retry is due one second later on the simulator's clock
    sim.control.wait_for_callbacks(order.orderid, attempts=2)
    sim.receiver.wait_for_callback(orderid=order.orderid, status="approved")  # the retry was answered
    callbacks = [a for a in drawn(sim.diagram_of(order).svg)[1] if a[0] == "gateway"]
    assert callbacks == [
        ("gateway", "endpoint", "callback sale approved", "answered 500 · control ✓"),
        ("gateway", "endpoint", "callback sale approved (retry 1)", "answered 200 · control ✓"),
    ]
    from_simulator = [a for a in drawn(sim.control.diagram(order).svg)[1] if a[0] == "gateway"]
    assert [(a[2], a[3]) for a in from_simulator] == [
        ("callback sale approved", "answered 500"),
        ("callback sale approved (retry 1)", "answered 200"),
    ]


def test_the_simulator_draws_an_order_from_its_own_records(sim: GatewaySession):
    order = three_ds_sale(sim)
    assert sim.control is not None
    diagram = sim.control.diagram(order)
    lanes, arrows = drawn(diagram.svg)
    assert lanes == ["merchant", "gateway", "acs", "payer", "endpoint"]
    labels = [label for _, _, label, _ in arrows]
    assert labels[0] == "sale 10.42 EUR" and labels.count("callback sale approved") == 1
    order_of = labels.index
    assert order_of("load the 3-D Secure method URL") < order_of("upload_method_url_result")
    assert order_of("answer the ACS page") < order_of("upload_cres_result")
    assert diagram.title == f"order {order.orderid} as the simulator saw it"


def gateway_run_sale(sim: GatewaySession) -> Order:
    """A 3-D Secure 2 sale with a challenge the way the shop plugins do it: the status html shown, nothing uploaded
    (behaviour 12: the gateway runs 3-D Secure itself)."""
    order = sim.merchant.pay("sale", card_for("3ds-challenge", number=PAN), Decimal("10.43"))
    page = sim.payer.answer_challenge(sim.payer.show_html(sim.merchant.payer_step(order).html))
    sim.payer.return_to_merchant(page)
    sim.merchant.approved_status(order)
    sim.receiver.wait_for_callback(orderid=order.orderid, status="approved")
    return order


def test_the_gateway_s_own_hops_are_drawn_when_it_runs_3ds(sim: GatewaySession):
    order = gateway_run_sale(sim)
    steps = [(source, target, outcome) for source, target, _, outcome in drawn(sim.diagram_of(order).svg)[1]]
    payer = [(target, outcome.split(" · ", 1)[-1]) for source, target, outcome in steps if source == "payer"]
    assert payer == [
        ("acs", "the method step done"),
        ("gateway", "on to the 3-D Secure challenge"),  # the gateway applied the method result
        ("acs", "the 3-D Secure challenge"),
        ("acs", "the result handed on to the gateway · the right password"),
        ("gateway", "the redirect to the merchant (approved)"),  # the gateway applied the CRes
        ("endpoint", "approved · control ✓"),
    ], steps
    uploads = [outcome for source, target, outcome in steps if source == "merchant" and "upload" in outcome]
    assert uploads == []
    assert sim.control is not None
    labels = [label for _, _, label, _ in drawn(sim.control.diagram(order).svg)[1]]
    hops = ["load the 3-D Secure method URL", "the page goes on to the gateway", "answer the ACS page",
            "back from the ACS with its result"]  # fmt: skip
    assert [label for label in labels if label in hops] == hops, labels
    assert not any(label.startswith("upload") for label in labels), labels


def test_no_card_number_or_cvv_reaches_a_diagram(sim: GatewaySession):
    order = three_ds_sale(sim)
    assert sim.control is not None
    for svg in (sim.diagram_of(order).svg, sim.diagram_of().svg, sim.control.diagram(order).svg):
        assert PAN not in svg and "cvv2" not in svg.lower() and leaks(svg) == []
    typed = Exchange("sale", "POST", f"https://gw/x?card={PAN}", {}, (("cvv2", "***"),), None, error=f"pan {PAN}")
    assert PAN not in sequence_diagram([typed]) and "453897******6732" in sequence_diagram([typed])


def test_records_without_times_keep_their_order_and_polls_collapse():
    def status(answer: str) -> Exchange:
        body = f'{{"type": "status-response", "status": "{answer}"}}'
        return Exchange("status", "POST", "https://gw/status", {}, (), 200, response_body=body, elapsed=0.004)

    svg = sequence_diagram([status("processing"), status("processing"), status("processing"), status("declined")])
    _, arrows = drawn(svg)
    assert [(a[2], a[3]) for a in arrows] == [
        ("status ×3", "HTTP 200 · processing"),
        ("status", "HTTP 200 · declined"),
    ]
    root = ET.fromstring(svg)
    assert [g.get("data-tone") for g in root.iter(SVG + "g") if g.get("class") == "arrow"] == ["wait", "bad"]
    assert "12 ms in all" in svg


def test_arrivals_and_exchanges_interleave_by_time():
    start = datetime(2030, 1, 1, tzinfo=UTC)
    sale = Exchange(
        "sale", "POST", "https://gw/sale", {}, (), 200, response_body='{"type": "async-response"}', at=start
    )
    late = Exchange("status", "POST", "https://gw/s", {}, (), 200, at=start + timedelta(seconds=2))
    callback = Received(
        "callback", "GET", "/callback", {"orderid": "1", "status": "declined", "type": "sale"}, True, 0.0,
        start + timedelta(seconds=1), answered=200,
    )  # fmt: skip
    diagram = Diagram.of([sale, late], [callback], title="t")
    assert [a.title for a in diagram.arrows] == ["sale", "callback sale declined", "status"]
    assert diagram.lanes == ["merchant", "gateway", "endpoint"] and diagram.arrows[1].tone == "bad"
    assert "+1.00 s" in diagram.svg and "+2.00 s" in diagram.svg


def test_an_empty_diagram_says_so():
    svg = simulator_diagram([], [], orderid="42").svg
    assert "nothing yet" in svg and drawn(svg) == (["merchant", "gateway"], [])


def test_a_recording_read_back_draws_the_picture_its_live_records_draw(sim: GatewaySession, tmp_path: Path):
    """One adapter: the records a recorder observed, and the same records read back from its HAR, draw the same."""
    run = sim.record_into(tmp_path / "run")
    with sim.recording(run, "a 3-D Secure sale") as recorder:
        order = three_ds_sale(sim)
    archive = json.loads((run.folder / run.index["scenarios"][0]["file"]).read_text())
    live, read_back = Diagram.of(recorder.records, title="t"), recording_diagram(archive, title="t")
    assert drawn(read_back.svg) == drawn(live.svg)
    assert [(a.source, a.target, a.label, a.outcome, a.tone, a.orderid) for a in read_back.arrows] == [
        (a.source, a.target, a.label, a.outcome, a.tone, a.orderid) for a in live.arrows
    ]
    lanes, arrows = drawn(live.svg)
    assert lanes == ["merchant", "gateway", "acs", "payer", "endpoint"]
    assert arrows == drawn(sim.diagram_of(order).svg)[1]
    challenge = next(a for a in arrows if a[2] == "answer the 3-D Secure challenge")
    assert challenge[3].endswith(" · the right password")  # (what the payer did, kept on its visit)
