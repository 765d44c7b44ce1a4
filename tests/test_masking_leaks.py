"""Card data typed where it does not belong never shows (issue 9, item 4, the client's side).

Masking works by value as well as by name: a card number in ``email`` or ``client_orderid``, a CVV
under ``cvv``, ``CVV2``, ``cvc`` or ``card_cvv``; in exchange records, curl commands, base strings,
error messages and argparse's errors.
"""

from __future__ import annotations

import pytest

from tests.recording_server import RecordingServer, Reply
from tests.sample_requests import SALE
from toolkit import cli
from toolkit.client import GatewayClient
from toolkit.errors import InvalidRequestError
from toolkit.exchange import Exchange
from toolkit.masking import mask_base_string, mask_fields, mask_text

PAN = "4538977399606732"
CVV_NAMES = ["cvv", "CVV2", "cvc", "card_cvv", "Card-CVC", "security_code"]


def shown(exchange: Exchange) -> str:
    return repr(exchange) + exchange.as_curl() + str(exchange.signature)


@pytest.mark.parametrize("field", ["email", "client_orderid", "order_desc", "card_printed_name"])
def test_a_card_number_in_any_field_is_masked_in_records_and_curl(server: RecordingServer, config, field):
    exchanges: list[Exchange] = []
    server.reply(Reply({"type": "async-response", "paynet-order-id": "1"}))
    with GatewayClient(config, observers=[exchanges.append], validate=False) as client:
        client.sale({**SALE, field: PAN})
    [exchange] = exchanges
    assert PAN not in shown(exchange)
    assert "453897******6732" in shown(exchange)


@pytest.mark.parametrize("name", CVV_NAMES)
def test_a_cvv_under_any_name_is_masked_in_records_and_curl(server: RecordingServer, config, name):
    exchanges: list[Exchange] = []
    server.reply(Reply({"type": "async-response", "paynet-order-id": "1"}))
    with GatewayClient(config, observers=[exchanges.append], validate=False) as client:
        client.payout({"client_orderid": "p-1", "amount": "1.00", "currency": "EUR", name: "987"})
    [exchange] = exchanges
    assert dict(exchange.request_fields)[name] == "***"
    text = shown(exchange)
    for shape in (f"{name}=987", f"{name}%3D987", f"{name}%253D987", f"'{name}', '987'"):
        assert shape not in text, shape
    assert server.last.fields[name] == "987"  # what was sent is untouched


def test_a_refused_value_is_not_repeated_in_clear(config):
    with GatewayClient(config) as client, pytest.raises(InvalidRequestError) as refused:
        client.sale({**SALE, "email": PAN})
    assert PAN not in str(refused.value) and "email:" in str(refused.value)
    assert PAN not in refused.value.message


@pytest.mark.parametrize(
    ("argv", "echoed"),
    [
        (["call", "sale", f"credit_card_number={PAN}", "cvv2=123", "--bogus"], False),
        (["call", "sale", "--bogus", f"email={PAN}", "card_cvv=4321"], True),
        (["sign", "sale", f"credit_card_number={PAN}", "cvv=987", "--nonsense", "x"], False),
        (["keys", f"credit_card_number={PAN}", "cvv=987"], True),
    ],
    ids=["call", "call, option first", "sign", "no such command"],
)
def test_argparse_errors_mask_card_data(capsys, argv, echoed):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "error:" in err
    for secret in (PAN, "=123", "=4321", "=987"):
        assert secret not in err
    assert ("453897******6732" in err) is echoed


def test_fields_may_follow_the_options(capsys, server: RecordingServer):
    """The issue's command line: an option after the operation, then the fields (none printed back)."""
    server.reply(Reply({"type": "async-response", "paynet-order-id": "1", "serial-number": "s-1"}))
    argv = ["call", "sale", "--base-url", server.base_url, *[f"{k}={v}" for k, v in SALE.items()]]
    assert cli.main(argv) == 0
    assert server.last.fields["credit_card_number"] == SALE["credit_card_number"]
    assert SALE["credit_card_number"] not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        ("pan 4538 9773 9960 6732 end", "4538 9773 9960 6732"),
        ("pan 4538-9773-9960-6732 end", "4538-9773-9960-6732"),
        ('{"cvv": "987", "card_cvv": "12"}', '"987"'),
        ("{'CVV2': '432'}", "432"),
        ("POST&http%3A%2F%2Fx&cvv%253D432%2526email%253Da", "432"),
        (f"https://m.example/cb?pan={PAN}&cvc=321", "321"),
    ],
    ids=["spaced groups", "dashed groups", "json", "repr", "base string", "url"],
)
def test_free_text_is_masked_by_value_and_by_cvv_like_names(text, hidden):
    assert hidden not in mask_text(text) and PAN not in mask_text(text)


def test_ids_and_digests_stay_whole():
    serial = "12345678-1234-1234-1234-123456789012"
    digest = "4538977399606732" * 2 + "abcdefab"
    assert mask_text(f"{serial} {digest}") == f"{serial} {digest}"


def test_the_base_string_masks_legacy_and_cvv_like_names():
    base = f"POST&http%3A%2F%2Fx&destination_card_no%3D{PAN}%26cvv%3D432%26email%3Da%2540b.c"
    masked = mask_base_string(base)
    assert PAN not in masked and "cvv%3D***" in masked and "email%3Da%2540b.c" in masked
    assert mask_fields({"destination_card_no": PAN, "CVV": "1"}) == {
        "destination_card_no": "453897******6732",
        "CVV": "***",
    }
