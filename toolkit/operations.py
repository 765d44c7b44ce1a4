"""THE catalogue: every operation of the gateway specification as data (sections 4.1 to 4.4).

The client, the simulator, the CLI, the OpenAPI document, the notebook forms and the docs read
this table; nothing restates it.  Where the spec says "not shown", the choice made here is
listed in ``Operation.assumed`` so that tools can show it, and ``gateway-behaviour.md`` is quoted.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

from toolkit.fields import FIELDS, wire_name


class AuthScheme(StrEnum):
    """How a request is authenticated (spec section 5)."""

    CONTROL = "control"
    OAUTH_HMAC_SHA1 = "HMAC-SHA1"
    OAUTH_RSA_SHA256 = "RSA-SHA256"
    NONE = "none"

    @property
    def is_oauth(self) -> bool:
        return self in (AuthScheme.OAUTH_HMAC_SHA1, AuthScheme.OAUTH_RSA_SHA256)


class ResponseKind(StrEnum):
    """The ``type`` of a successful response body (behaviour section 2)."""

    ASYNC = "async-response"
    FORM = "async-form-response"
    STATUS = "status-response"
    CARD_REF = "create-card-ref-response"
    CARD_INFO = "get-card-info-response"
    RECURRING = "create-recurring-payment-response"


# Names of control-formula parts that are not request fields.
ENDPOINT_ID = "endpointId"  # whichever id is in the path: endpoint or endpoint group (behaviour 1)
LOGIN = "login"
_PART_DISPLAY = {"amount": "amount_in_minor_units"}


@dataclass(frozen=True)
class ControlFormula:
    """control = SHA-1(parts... + merchant_control_key), lowercase hex (spec 5.1).

    ``amount`` stands for the amount in minor units.  A part named in ``optional`` contributes
    the empty string when its field is not sent (status by client_orderid; full capture/return).
    """

    parts: tuple[str, ...]
    optional: frozenset[str] = frozenset()

    @property
    def text(self) -> str:
        names = [_PART_DISPLAY.get(part, part) for part in self.parts]
        return "SHA-1(" + " + ".join([*names, "merchant_control_key"]) + ")"


@dataclass(frozen=True)
class Operation:
    """One gateway operation: where it lives, how it is signed, what it needs and returns."""

    name: str
    path: str
    code: str | None
    request_type: str | None
    response_type: str | None
    response: ResponseKind
    auth: AuthScheme
    summary: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    control: ControlFormula | None = None
    one_of: tuple[tuple[str, ...], ...] = ()
    together: tuple[tuple[str, ...], ...] = ()
    group: bool = False
    assumed: tuple[str, ...] = field(default=())
    prefixes: tuple[str, ...] = ()  # optional fields known by prefix (``customer_browser_``)

    @property
    def family(self) -> str:
        """``v2``, ``v4`` or ``3ds/v1`` (spec section 9)."""
        parts = self.path.split("/")
        return "3ds/v1" if parts[2] == "3ds" else parts[2]

    @property
    def group_path(self) -> str:
        return self.path.replace("/{endpointId}", "/group/{endpointGroupId}")

    @cached_property
    def fields(self) -> tuple[str, ...]:
        """Every field the operation knows, required first."""
        seen = dict.fromkeys([*self.required, *(n for group in self.one_of for n in group), *self.optional])
        return tuple(seen)

    @cached_property
    def _field_set(self) -> frozenset[str]:
        return frozenset(self.fields)

    @property
    def lenient_required(self) -> tuple[str, ...]:
        """What a ``lenient`` simulator still refuses without: ``required`` less ``LENIENT_OPTIONAL``.

        The other mandatory fields only earn a conformance warning there (today's forgiving behaviour).
        """
        return tuple(name for name in self.required if name not in LENIENT_OPTIONAL)

    def knows(self, name: str) -> bool:
        """A field of this operation, by its wire name (or a known prefix)."""
        return name in self._field_set or name.startswith(self.prefixes)

    def wire_name(self, name: str) -> str:
        """The wire spelling of ``name`` for this operation: ``client_orderid`` -> ``client-order-id`` and
        ``cres`` -> ``cRes`` in the 3-D Secure uploads; any other name as ``toolkit.fields.wire_name`` gives it.
        """
        if name in self.fields:
            return name
        for wire in self.fields:
            if name in FIELDS[wire].names:
                return wire
        return wire_name(name)

    @property
    def method_name(self) -> str:
        """The GatewayClient method (``return`` is a keyword: ``return_``)."""
        return "return_" if self.name == "return" else self.name

    def url_path(self, *, endpoint_id: str | None = None, group_id: str | None = None) -> str:
        """The path with exactly one of endpoint id or group id filled in."""
        if (endpoint_id is None) == (group_id is None):
            raise ValueError(f"{self.name}: give exactly one of endpoint_id or group_id")
        if group_id is not None:
            if not self.group:
                raise ValueError(f"{self.name} cannot be addressed by endpoint group")
            return self.group_path.format(endpointGroupId=group_id)
        return self.path.format(endpointId=endpoint_id)


# Field sets shared by several operations (behaviour section 10).
_CARD = ("credit_card_number", "card_printed_name", "expire_month", "expire_year", "cvv2")
_CUSTOMER = ("address1", "city", "zip_code", "country", "phone")  # mandatory on sale, preauth and their forms
_CUSTOMER_OPTIONAL = (
    "first_name",
    "last_name",
    "state",
    "birthday",
    "ssn",
    "cell_phone",
    "site_url",
    "purpose",
    "merchant_data",
)
_URLS = ("redirect_url", "server_callback_url", "notify_url")
_FORM_URLS = ("server_callback_url", "notify_url")
_FOLLOW_UP = (LOGIN, "client_orderid", "orderid")
_THREEDS_FOLLOW_UP = (LOGIN, "client-order-id", "orderid")
_BROWSER = tuple(name for name in FIELDS if name.startswith("browser"))
_PAYOUT_DESTINATIONS = (
    "credit_card_number",
    "destination-card-no",
    "cardrefid",
    "account_number",
    "ewallet_id",
    "payout_phone",
)
_BANK = ("bank_code", "bank_name", "bank_branch", "bank_province", "bank_city")
# Mandatory on the production gateway, but only a conformance warning on a lenient simulator.
LENIENT_OPTIONAL = frozenset({LOGIN, *_CUSTOMER, "comment"})

SALE_CONTROL = ControlFormula((ENDPOINT_ID, "client_orderid", "amount", "email"))
VERIFY_CONTROL = ControlFormula((ENDPOINT_ID, "client_orderid", "email"))
FOLLOW_UP_CONTROL = ControlFormula((LOGIN, "client_orderid", "orderid"))
THREEDS_CONTROL = ControlFormula((LOGIN, "client-order-id", "orderid"))  # spec 4.2 writes client-order-id
AMOUNT_CONTROL = ControlFormula(
    (LOGIN, "client_orderid", "orderid", "amount", "currency"), optional=frozenset({"amount", "currency"})
)
_ASSUMED_FORM_CONTROL = "control: not shown in the spec; the sale formula is used"
_ASSUMED_FIELDS = "request fields: not shown in the spec or in behaviour section 10; chosen by gatekit"
_ASSUMED_GROUP = "endpoint-group addressing: decided per operation by gatekit (spec: 'depending on the operation')"
_SECTION_10 = "request fields: behaviour section 10 (the gateway family's documentation)"
_FORM_REDIRECT = (
    "redirect_url: mandatory on hosted forms (section 10 is silent; the family's public PHP library requires it, "
    "and the hosted page must send the payer somewhere)"
)


def _payment(name: str, path: str, code: str, request: str, summary: str) -> Operation:
    """sale and preauth: card data in the request, the sale control formula (behaviour section 10)."""
    return Operation(
        name,
        path,
        code,
        request,
        "AsyncResponse",
        ResponseKind.ASYNC,
        AuthScheme.CONTROL,
        summary,
        required=("client_orderid", "order_desc", "amount", "currency", *_CUSTOMER, "email", "ipaddress", *_CARD),
        optional=(*_URLS, *_CUSTOMER_OPTIONAL),
        control=SALE_CONTROL,
        group=True,
        prefixes=("customer_browser_",),
        assumed=(_SECTION_10, "customer_browser_* (3-D Secure 2 browser data): accepted by prefix, not checked"),
    )


def _form(name: str, path: str, code: str, request: str, summary: str, *assumed: str) -> Operation:
    """Hosted-form operations: as sale without the card fields; a redirect address back (section 10)."""
    return Operation(
        name,
        path,
        code,
        request,
        "AsyncCheckoutFormRedirect",
        ResponseKind.FORM,
        AuthScheme.CONTROL,
        summary,
        required=(
            "client_orderid",
            "order_desc",
            "amount",
            "currency",
            *_CUSTOMER,
            "email",
            "ipaddress",
            "redirect_url",
        ),
        optional=(*_FORM_URLS, *_CUSTOMER_OPTIONAL),
        control=SALE_CONTROL,
        group=True,
        assumed=(*assumed, _SECTION_10, _FORM_REDIRECT),
    )


def _partial_follow_up(name: str, path: str, code: str, request: str, summary: str, *extra: str) -> Operation:
    """capture and return: on an earlier order, the whole amount or a part given with amount and currency."""
    return Operation(
        name,
        path,
        code,
        request,
        "AsyncResponse",
        ResponseKind.ASYNC,
        AuthScheme.CONTROL,
        summary,
        required=_FOLLOW_UP,
        optional=("amount", "currency", *extra),
        together=(("amount", "currency"),),
        control=AMOUNT_CONTROL,
        assumed=(_SECTION_10, _ASSUMED_GROUP),
    )


def _threeds_upload(
    name: str,
    path: str,
    code: str,
    request: str,
    summary: str,
    result: tuple[str, ...],
    *,
    optional: tuple[str, ...] = (),
    assumed: tuple[str, ...] = (),
) -> Operation:
    """The 3DS result uploads (section 4.2): the merchant passes on what the payer's browser brought back."""
    return Operation(
        name,
        path,
        code,
        request,
        "AsyncResponse",
        ResponseKind.ASYNC,
        AuthScheme.CONTROL,
        summary,
        required=(*_THREEDS_FOLLOW_UP, *result),
        optional=optional,
        control=THREEDS_CONTROL,
        assumed=(_SECTION_10, *assumed),
    )


_OPERATIONS = (
    # 4.1 Payment operations
    _payment("sale", "/api/v2/sale/{endpointId}", "SALE", "SaleRequest", "Authorization and capture combined"),
    _form("sale_form", "/api/v2/sale-form/{endpointId}", "SALEFORM", "SaleFormRequest", "Hosted card page: sale"),
    _payment("preauth", "/api/v2/preauth/{endpointId}", "PREAUTH", "AuthRequest", "Reserves funds; capture or void"),
    _form("preauth_form", "/api/v2/preauth-form/{endpointId}", "PREAUTHFORM", "AuthFormRequest", "Hosted preauth"),
    _form(
        "payment_form",
        "/api/v2/payment-form/{endpointId}",
        "PAYMENTFORM",
        "PaymentFormRequest",
        "Universal hosted payment form",
        _ASSUMED_FORM_CONTROL,
    ),
    _partial_follow_up(
        "capture",
        "/api/v2/capture/{endpointId}",
        "CAPTURE",
        "CaptureRequest",
        "Settles a preauth; partial capture with amount and currency",
    ),
    Operation(
        "void",
        "/api/v2/void/{endpointId}",
        "VOID",
        "VoidRequest",
        "AsyncResponse",
        ResponseKind.ASYNC,
        AuthScheme.CONTROL,
        "Cancels an authorized, unsettled transaction of the order (a capture first); no partial amount",
        required=(*_FOLLOW_UP, "comment"),
        control=FOLLOW_UP_CONTROL,
        assumed=(_SECTION_10, _ASSUMED_GROUP),
    ),
    _partial_follow_up(
        "return",
        "/api/v2/return/{endpointId}",
        "RETURN",
        "ReturnRequest",
        "Reversal of a sale or capture (partial with amount and currency); cancels an uncaptured preauth",
        "comment",
    ),
    Operation(
        "status",
        "/api/v2/status/{endpointId}",
        "STATUS",
        "StatusRequest",
        "StatusResponse",
        ResponseKind.STATUS,
        AuthScheme.CONTROL,
        "Status of the order's latest transaction, or of one request (by-request-sn)",
        required=(LOGIN, "client_orderid"),
        optional=("orderid", "by-request-sn"),
        control=ControlFormula((LOGIN, "client_orderid", "orderid"), optional=frozenset({"orderid"})),
        assumed=(_SECTION_10, _ASSUMED_GROUP),
    ),
    Operation(
        "account_verification",
        "/api/v2/account-verification/{endpointId}",
        "ACCOUNT_VERIFICATION",
        "AccountVerificationRequest",
        "AsyncResponse",
        ResponseKind.ASYNC,
        AuthScheme.CONTROL,
        "Zero-amount authorization that checks the card account",
        required=(
            "client_orderid",
            "order_desc",
            *(name for name in _CUSTOMER if name != "phone"),
            "email",
            "ipaddress",
            *_CARD,
        ),
        optional=(*_URLS, "phone", *_CUSTOMER_OPTIONAL),
        control=VERIFY_CONTROL,
        group=True,
        assumed=(
            "request fields: section 10 lists none for the direct call; the family's documentation and public "
            "PHP library: as sale without amount and currency (zero amount, spec 4.1), phone optional",
        ),
    ),
    Operation(
        "account_verification_form",
        "/api/v2/account-verification-form/{endpointId}",
        "ACCOUNT_VERIFICATION_FORM",
        "AccountVerificationFormRequest",
        "AsyncCheckoutFormRedirect",
        ResponseKind.FORM,
        AuthScheme.CONTROL,
        "Hosted-page variant of account verification",
        required=("client_orderid", "order_desc", *_CUSTOMER, "email", "ipaddress", "redirect_url"),
        optional=(*_FORM_URLS, *_CUSTOMER_OPTIONAL),
        control=VERIFY_CONTROL,
        group=True,
        assumed=(
            "request fields: section 10 says 'as sale, without the card fields'; amount and currency are left "
            "out as for the direct call (a zero-amount operation, spec 4.1); phone stays mandatory ('as sale') "
            "although the family's documentation of this operation does not list it",
            _FORM_REDIRECT,
        ),
    ),
    # 4.2 3DS result upload
    _threeds_upload(
        "upload_method_url_result",
        "/api/3ds/v1/upload-method-url-result/{endpointId}",
        "TDS_UPLOAD_METHOD_URL_RESULT",
        "TdsMethodUrlResultRequest",
        "Result of the 3DS 2.x Method step (threeDSCompInd Y/N/U)",
        (),
        optional=("threeDSCompInd", "threeDSServerTransID", *_BROWSER),
        assumed=(
            "threeDSCompInd: spec 4.2 says the upload carries it, section 10 and the family's documentation do "
            "not list it: the client sends it, the simulator accepts its absence as Y (the method step ran)",
        ),
    ),
    _threeds_upload(
        "upload_cres_result",
        "/api/3ds/v1/upload-cres-result/{endpointId}",
        "TDS_UPLOAD_CRES_RESULT",
        "TdsCResResultRequest",
        "Challenge response (CRes) at the end of a 3DS 2.x challenge",
        ("cRes",),
    ),
    _threeds_upload(
        "upload_pares_result",
        "/api/3ds/v1/upload-pares-result/{endpointId}",
        "TDS_UPLOAD_PARES_RESULT",
        "TdsPaResResultRequest",
        "Payer authentication response (PaRes) of a 3DS 1.0.2 flow",
        ("paRes",),
        optional=("md",),
        assumed=("fields: not in section 10; as upload-cres-result, with paRes and md as the family documents them",),
    ),
    # 4.3 Cards and recurring
    Operation(
        "create_card_ref",
        "/api/v2/create-card-ref/{endpointId}",
        "CARDREF",
        "CreateCardRefRequest",
        "CardRefAsyncResponse",
        ResponseKind.CARD_REF,
        AuthScheme.CONTROL,
        "Tokenizes the card of a final approved transaction into a card-ref-id",
        required=_FOLLOW_UP,
        control=FOLLOW_UP_CONTROL,
        assumed=(_SECTION_10,),
    ),
    Operation(
        "create_card_ref_v4",
        "/api/v4/create-card-ref/{endpointId}",
        "CARDREF_V4",
        "CreateCardRefV4Request",
        "CardRefV4AsyncResponse",
        ResponseKind.CARD_REF,
        AuthScheme.OAUTH_RSA_SHA256,
        "Tokenization with OAuth RSA-SHA256 signing",
        required=_FOLLOW_UP,
        assumed=("request fields: not in section 10; those of create-card-ref v2, signed with OAuth",),
    ),
    Operation(
        "get_card_info",
        "/api/v2/get-card-info/{endpointId}",
        "CARDINFO",
        "GetCardInfoRequest",
        "CardInfoAsyncResponse",
        ResponseKind.CARD_INFO,
        AuthScheme.CONTROL,
        "Holder, BIN, last four digits and expiry of a stored card",
        required=(LOGIN, "cardrefid"),
        control=ControlFormula((LOGIN, "cardrefid")),
        assumed=(
            _SECTION_10,
            "control: 'no control formula shown' in the spec; login + cardrefid from vectors/control.json",
        ),
    ),
    Operation(
        "make_rebill",
        "/api/v2/make-rebill/{endpointId}",
        "REBILL",
        "RebillRequest",
        "AsyncResponse",
        ResponseKind.ASYNC,
        AuthScheme.CONTROL,
        "Charges a stored card while the cardholder is absent",
        required=(LOGIN, "client_orderid", "cardrefid", "amount", "currency"),
        optional=(
            "order_desc",
            "ipaddress",
            "comment",
            "cvv2",
            "server_callback_url",
            "notify_url",
            "enumerate_amounts",
            "recurrent_scenario",
        ),
        control=ControlFormula((LOGIN, "client_orderid", "cardrefid", "amount", "currency")),
        group=True,
        assumed=(_SECTION_10, "enumerate_amounts: at most 10 amounts, each at most the amount"),
    ),
    Operation(
        "create_recurring_payment",
        "/api/v4/create-recurring-payment/{endpointId}",
        "CREATE_RP_V4",
        "RecurringPaymentForCreation",
        "CreateRecurringPaymentResponse",
        ResponseKind.RECURRING,
        AuthScheme.OAUTH_RSA_SHA256,
        "Creates a subscription charged on a schedule",
        required=("client_orderid", "cardrefid", "amount", "currency", "period", "interval"),
        optional=(LOGIN, "start_date", "repeats", "order_desc", "email", "server_callback_url", "notify_url"),
        assumed=(_ASSUMED_FIELDS, "period and interval values: not shown; day|week|month|year and an integer"),
    ),
    Operation(
        "pan_eligibility_send",
        "/api/v2/pan-eligibility/send/{endpointId}",
        None,
        None,
        None,
        ResponseKind.ASYNC,
        AuthScheme.OAUTH_HMAC_SHA1,
        "Card-eligibility send (only the worked signing case in the spec)",
        required=("client-order-id", "sending-card-ref-id"),
        assumed=("operation code, request and response types: not shown; answered as an AsyncResponse",),
    ),
    Operation(
        "transfer",
        "/api/v4/transfer/{endpointId}",
        None,
        None,
        None,
        ResponseKind.ASYNC,
        AuthScheme.OAUTH_RSA_SHA256,
        "Card-to-card transfer (only the worked signing case in the spec)",
        required=("client_orderid", "amount", "currency"),
        optional=(
            "order_desc",
            *_CARD,
            "ipaddress",
            "deposit2card",
            "destination-card-no",
            "redirect_url",
            "server_callback_url",
            "card_recurring_payment_id",
            "destination_card_recurring_payment_id",
        ),
        assumed=("operation code, request and response types: not shown; answered as an AsyncResponse",),
    ),
    # 4.4 Payouts
    Operation(
        "payout",
        "/api/v2/payout/{endpointId}",
        "PAYOUT",
        "PayoutRequest",
        "AsyncResponse",
        ResponseKind.ASYNC,
        AuthScheme.OAUTH_HMAC_SHA1,
        "Outgoing transfer to a card, account, e-wallet or phone",
        required=("client_orderid", "amount", "currency"),
        one_of=(_PAYOUT_DESTINATIONS,),
        optional=(
            LOGIN,
            "order_desc",
            "card_printed_name",
            "expire_month",
            "expire_year",
            "cvv2",
            "ipaddress",
            *_BANK,
            "purpose",
            "deposit2card",
            "redirect_url",
            "server_callback_url",
            "notify_url",
            "card_recurring_payment_id",
            "destination_card_recurring_payment_id",
        ),
        group=True,
        assumed=(_ASSUMED_FIELDS,),
    ),
    Operation(
        "payout_form",
        "/api/v2/payout-form/{endpointId}",
        "PAYOUTFORM",
        "PayoutFormRequest",
        "AsyncCheckoutFormRedirect",
        ResponseKind.FORM,
        AuthScheme.CONTROL,
        "Payout with the destination collected on a hosted form",
        required=("client_orderid", "order_desc", "amount", "currency", "email", "ipaddress", "redirect_url"),
        optional=("server_callback_url", "notify_url", *_CUSTOMER, *_CUSTOMER_OPTIONAL),
        control=SALE_CONTROL,
        group=True,
        assumed=(_ASSUMED_FORM_CONTROL, _ASSUMED_FIELDS),
    ),
    Operation(
        "payout_check",
        "/api/v4/payout-check/{endpointId}",
        "PAYOUT_V4_CHECK",
        "PayoutCheckRequest",
        "AsyncResponse",
        ResponseKind.ASYNC,
        AuthScheme.OAUTH_RSA_SHA256,
        "Step 1: validates the recipient and registers the payout without moving funds",
        required=("amount", "currency"),
        one_of=(("client_orderid", "client-order-id"), _PAYOUT_DESTINATIONS),
        optional=(
            LOGIN,
            "order_desc",
            "ipaddress",
            "purpose",
            "server_callback_url",
            "notify_url",
            "redirect_url",
            "card_printed_name",
            "expire_month",
            "expire_year",
            *_BANK,
        ),
        assumed=(
            "request fields: section 10's v4 payout list, without mandatory marks: client_orderid, amount, "
            "currency and a destination required, the rest optional",
            "client-order-id: the published v4 examples spell it so; both spellings are accepted, "
            "the client sends client_orderid (the spelling of the spec's signed v4 transfer example)",
        ),
    ),
    Operation(
        "payout_pay",
        "/api/v4/payout-pay/{endpointId}",
        None,
        None,
        None,
        ResponseKind.ASYNC,
        AuthScheme.OAUTH_RSA_SHA256,
        "Step 2: executes a payout registered by payout-check",
        required=_FOLLOW_UP,
        optional=("server_callback_url", "notify_url"),
        assumed=(
            "auth: OAuth RSA-SHA256 assumed from the v4 family (spec: not shown)",
            "operation code, request and response types: not shown; answered as an AsyncResponse",
            "request fields: section 10 (login, client_orderid and the orderid of the payout-check)",
        ),
    ),
)

OPERATIONS: dict[str, Operation] = {op.name: op for op in _OPERATIONS}


def get_operation(name: str) -> Operation:
    """Look an operation up by name, path segment or code (``sale-form``, ``SALEFORM``)."""
    key = name.strip().replace("-", "_").lower()
    if key in OPERATIONS:
        return OPERATIONS[key]
    for op in OPERATIONS.values():
        if op.code and op.code.lower() == key:
            return op
    known = ", ".join(OPERATIONS)
    raise KeyError(f"unknown operation {name!r}; known operations: {known}")


def iter_operations() -> Iterator[Operation]:
    return iter(OPERATIONS.values())


def _check_catalogue() -> None:
    """Every field named by an operation is in the field registry (fails at import)."""
    for op in _OPERATIONS:
        for name in (*op.fields, *(part for part in (op.control.parts if op.control else ()) if part != ENDPOINT_ID)):
            if name not in FIELDS:
                raise AssertionError(f"{op.name}: field {name!r} missing from toolkit.fields.FIELDS")


_check_catalogue()
