"""The catalogue: complete, consistent, and the single source the rest reads."""

import pytest

from toolkit.fields import FIELDS, wire_name
from toolkit.operations import OPERATIONS, AnswerStyle, AuthScheme, ResponseKind, get_operation, iter_operations

SPEC_PATHS = {
    "/api/v2/sale/{endpointId}", "/api/v2/sale-form/{endpointId}", "/api/v2/preauth/{endpointId}",
    "/api/v2/preauth-form/{endpointId}", "/api/v2/payment-form/{endpointId}", "/api/v2/capture/{endpointId}",
    "/api/v2/void/{endpointId}", "/api/v2/return/{endpointId}", "/api/v2/status/{endpointId}",
    "/api/v2/account-verification/{endpointId}", "/api/v2/account-verification-form/{endpointId}",
    "/api/3ds/v1/upload-method-url-result/{endpointId}", "/api/3ds/v1/upload-cres-result/{endpointId}",
    "/api/3ds/v1/upload-pares-result/{endpointId}", "/api/v2/create-card-ref/{endpointId}",
    "/api/v4/create-card-ref/{endpointId}", "/api/v2/get-card-info/{endpointId}",
    "/api/v2/make-rebill/{endpointId}", "/api/v4/create-recurring-payment/{endpointId}",
    "/api/v2/pan-eligibility/send/{endpointId}", "/api/v4/transfer/{endpointId}", "/api/v2/payout/{endpointId}",
    "/api/v2/payout-form/{endpointId}", "/api/v4/payout-check/{endpointId}", "/api/v4/payout-pay/{endpointId}",
}  # fmt: skip
# Behaviour section 11: what the family's public client code calls beyond the spec's list.
FAMILY_PATHS = {
    "/api/v2/make-rebill-sale/{endpointId}", "/api/v2/make-rebill-preauth/{endpointId}",
    "/api/v2/transfer-by-ref/{endpointId}", "/api/v4/payout/{endpointId}", "/api/v4/transfer-by-ref/{endpointId}",
    "/api/v2/transfer-form/{endpointId}",  # behaviour section 12 (the PHP library's TransferFormQuery)
}  # fmt: skip
# hosted-fields.md section 3: the merchant's three Hosted Fields calls.
HOSTED_FIELDS_PATHS = {
    "/api/v4/tokenize/create-ephemeral-ticket/{endpointId}", "/api/v4/sale/{endpointId}", "/api/v4/status/{endpointId}",
}  # fmt: skip


def test_every_spec_path_is_in_the_catalogue_once():
    paths = [op.path for op in iter_operations()]
    assert sorted(paths) == sorted(SPEC_PATHS | FAMILY_PATHS | HOSTED_FIELDS_PATHS)


def test_the_hosted_fields_calls_answer_with_json_types_and_the_sale_takes_a_token_for_the_card():
    """hosted-fields.md 3.2-3.4: paynet-order-id a number in the sale answer only, error-code a number; the token
    replaces credit_card_number, expire_month, expire_year and cvv2."""
    ticket, sale, status = (get_operation(name) for name in ("create_ephemeral_ticket", "sale_v4", "status_v4"))
    assert {op.answers for op in (ticket, sale, status)} == {AnswerStyle.HOSTED_FIELDS}
    assert (ticket.numbers, set(sale.numbers), status.numbers) == (
        ("error-code",),
        {"error-code", "paynet-order-id"},
        ("error-code",),
    )
    assert ticket.required == () and ticket.response is ResponseKind.TICKET
    assert {"hosted_fields_token", "redirect_url", "customer_browser_user_agent"} <= set(sale.required)
    assert sale.excludes == (("hosted_fields_token", ("credit_card_number", "expire_month", "expire_year", "cvv2")),)
    assert not set(sale.fields) & {"credit_card_number", "cvv2"} and sale.makes == "sale"
    assert status.required == ("login", "orderid") and status.response is ResponseKind.STATUS
    others = [op for op in iter_operations() if op not in (ticket, sale, status)]
    assert {op.answers for op in others} == {AnswerStyle.FAMILY} and not any(op.numbers for op in others)


def test_every_v2_operation_and_no_other_is_addressable_by_group():
    """Spec 2.1 and behaviour section 11: every v2 operation also answers at .../group/{id}; v4 and 3ds/v1 not."""
    for op in iter_operations():
        assert op.group is op.path.startswith("/api/v2/"), op.name
        if op.group:
            assert op.group_path == op.path.replace("/{endpointId}", "/group/{endpointGroupId}")


@pytest.mark.parametrize("name", ["payout_v4", "transfer_by_ref_v4", "payout_check", "transfer", "payout_pay"])
def test_every_v4_operation_takes_either_spelling_of_the_order_id(name):
    """One rule for every v4 operation (behaviour sections 10, 11); the client sends the documented one."""
    op = get_operation(name)
    assert {"client_orderid", "client-order-id"} in [set(group) for group in op.spellings]
    documented = "client-order-id" if name in ("payout_v4", "transfer_by_ref_v4") else "client_orderid"
    assert op.wire_name("client_orderid") == op.wire_name("client-order-id") == documented


def test_v4_operations_are_rsa_signed_and_v2_never_are():
    for op in iter_operations():
        if op.family == "v4":
            assert op.auth is AuthScheme.OAUTH_RSA_SHA256, op.name
        else:
            assert op.auth is not AuthScheme.OAUTH_RSA_SHA256, op.name


def test_payout_pay_carries_its_assumption_as_data():
    op = get_operation("payout-pay")
    assert any("assumed" in note for note in op.assumed)


@pytest.mark.parametrize("name", ["sale-form", "SALEFORM", "sale_form", " Sale-Form "])
def test_lookup_by_path_segment_or_code(name):
    assert get_operation(name) is OPERATIONS["sale_form"]


def test_unknown_operation_lists_the_known_ones():
    with pytest.raises(KeyError, match="known operations: sale"):
        get_operation("refund")


def test_control_operations_have_formulas_and_oauth_ones_do_not():
    for op in iter_operations():
        assert (op.control is not None) == (op.auth is AuthScheme.CONTROL), op.name


def test_every_field_is_registered():
    for op in iter_operations():
        assert set(op.fields) <= set(FIELDS), op.name


def test_group_path_and_url_path():
    sale = get_operation("sale")
    assert sale.url_path(group_id="7") == "/api/v2/sale/group/7"
    assert sale.url_path(endpoint_id="51494") == "/api/v2/sale/51494"
    with pytest.raises(ValueError, match="exactly one"):
        sale.url_path(endpoint_id="1", group_id="2")
    assert get_operation("status").url_path(group_id="2") == "/api/v2/status/group/2"
    with pytest.raises(ValueError, match="cannot be addressed by endpoint group"):
        get_operation("payout_check").url_path(group_id="2")


def test_control_formula_text_names_minor_units_and_the_key():
    assert get_operation("sale").control.text == (
        "SHA-1(endpointId + client_orderid + amount_in_minor_units + email + merchant_control_key)"
    )


@pytest.mark.parametrize(
    ("name", "wire"),
    [
        ("destination_card_no", "destination-card-no"),
        ("sending_card_ref_id", "sending-card-ref-id"),
        ("by_request_sn", "by-request-sn"),
        ("client_orderid", "client_orderid"),
        ("destination-card-no", "destination-card-no"),
        ("not_a_field", "not_a_field"),
    ],
    ids=["hyphenated", "hyphenated ref", "hyphenated serial", "plain", "already a wire name", "unknown"],
)
def test_python_keywords_become_wire_names(name, wire):
    assert wire_name(name) == wire


@pytest.mark.parametrize(
    ("operation", "name", "wire"),
    [
        ("upload_cres_result", "client_orderid", "client-order-id"),
        ("upload_cres_result", "cres", "cRes"),
        ("upload_pares_result", "pares", "paRes"),
        ("capture", "client_orderid", "client_orderid"),
        ("status", "by_request_sn", "by-request-sn"),
        ("sale", "not_a_field", "not_a_field"),
    ],
)
def test_each_operation_sends_its_own_spelling(operation, name, wire):
    """behaviour section 10: the 3-D Secure uploads write client-order-id and cRes; callers write Python names."""
    assert get_operation(operation).wire_name(name) == wire
