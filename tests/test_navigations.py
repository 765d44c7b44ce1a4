"""Chromium's performance log read as document requests (``toolkit.payer.navigations``): redirects folded into
one navigation, answers joined to their requests even when read in another batch, other resources left out."""

from __future__ import annotations

import json

from toolkit.payer.navigations import navigations


def entry(method: str, **params: object) -> dict[str, str]:
    return {"message": json.dumps({"message": {"method": method, "params": params}})}


def sent(rid: str, url: str, *, kind: str = "Document", method: str = "GET", at: float = 1.0, **more: object):
    return entry("Network.requestWillBeSent", requestId=rid, type=kind, wallTime=1_700_000_000 + at, timestamp=at,
                 frameId="main", request={"url": url, "method": method, **more})  # fmt: skip


def answered(rid: str, status: int, url: str, at: float):
    return entry("Network.responseReceived", requestId=rid, type="Document", timestamp=at,
                 response={"status": status, "url": url})  # fmt: skip


def test_documents_in_order_with_their_answers_redirects_and_form_data():
    log = [
        sent("1", "http://gw/paynet/form/abc", at=1.0),
        sent("9", "http://gw/static/page.css", kind="Stylesheet", at=1.1),
        answered("1", 200, "http://gw/paynet/form/abc", 1.05),
        sent("2", "http://gw/paynet/form/abc", method="POST", at=2.0, postData="cvv2=321&amount=1.00"),
        entry(
            "Network.requestWillBeSent",
            requestId="2",
            type="Document",
            wallTime=1_700_000_002.1,
            timestamp=2.1,
            frameId="main",
            request={"url": "http://gw/paynet/acs/x", "method": "GET"},
            redirectResponse={"status": 302},
        ),
        sent("3", "data:text/html,<p>x</p>", at=2.5),
    ]
    first = navigations(log)
    assert [(n.request_id, n.method, n.status) for n in first] == [("1", "GET", 200), ("2", "POST", None)]
    assert first[1].redirects == (302,) and first[1].final_url == "http://gw/paynet/acs/x"
    assert first[1].post_data == "cvv2=321&amount=1.00"  # (masked by the browser payer when it makes its visit)

    later = navigations([*log, answered("2", 200, "http://gw/paynet/acs/x", 2.3)])  # the answer in the next batch
    assert later[1].status == 200 and abs((later[1].elapsed or 0) - 0.3) < 1e-9


def test_entries_that_are_not_devtools_messages_are_ignored():
    assert navigations([{"message": "not json"}, {"level": "INFO"}, entry("Page.frameNavigated", frame={})]) == []


def test_a_script_call_is_kept_only_when_picked_as_the_hosted_fields_sdks_tokenize_call():
    """The merchant page's own calls (its status polls) stay out; the SDK's tokenize call is a hop of the card."""
    tokenize = "http://gw/api/v4/tokenize/hosted-fields"
    log = [
        sent("1", "http://shop/checkout", at=1.0),
        sent("2", tokenize, kind="Fetch", method="POST", at=2.0, postData='{"cardNumber": "4444444444444448"}'),
        sent("3", "http://shop/status?orderId=1", kind="Fetch", at=3.0),
        sent("4", "http://shop/status?orderId=1", kind="XHR", at=3.5),
        sent("5", tokenize, kind="Script", at=3.8),
        answered("2", 200, tokenize, 2.1),
    ]
    assert [n.request_id for n in navigations(log)] == ["1"]
    picked = navigations(log, calls=lambda url: url.endswith("/tokenize/hosted-fields"))
    assert [(n.request_id, n.kind, n.is_document, n.status) for n in picked] == [
        ("1", "Document", True, None),
        ("2", "Fetch", False, 200),
    ]
    assert [n.request_id for n in navigations(log, calls=lambda url: True)] == ["1", "2", "3", "4"]
