"""THE catalogue: every operation of the gateway specification as data (sections 4.1 to 4.4).

The client, the simulator, the CLI, the OpenAPI document, the notebook forms and the docs read
this table; nothing restates it.  Where the spec says "not shown", the choice made here is
listed in ``Operation.assumed`` so that tools can show it, and ``gateway-behaviour.md`` is quoted.
Each operation also says which kind of transaction it makes, or which follow-up it is, in the words of
``toolkit.lifecycle``: the bridge between operations (``sale_form``) and transaction kinds (``sale``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any

from toolkit.fields import FIELDS, wire_name
from toolkit.lifecycle import FOLLOW_UPS, KINDS, TransactionKind, applies_to, is_later


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
    # Hosted Fields' ticket answer carries no ``type`` (hosted-fields.md 3.2: ``{"ephemeralTicket": ...}``); the
    # simulator's journal names it so
    TICKET = "ephemeral-ticket"


class AnswerStyle(StrEnum):
    """How an operation's answers are written."""

    # behaviour section 2: a ``type``, every value a string; a refused signature is a 401 ``validation-error``
    FAMILY = "family"
    # hosted-fields.md section 3: JSON values with their types (``Operation.numbers``); a refused signature is a
    # 401 ``text/plain`` reason, so that the merchant examples take it for a failed call, not for a decline
    HOSTED_FIELDS = "hosted-fields"


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
    assumed: tuple[str, ...] = field(default=())
    prefixes: tuple[str, ...] = ()  # optional fields known by prefix (``customer_browser_``)
    makes: str = ""  # the kind of transaction that opens the order it makes (``toolkit.lifecycle``), if any
    follow_up: str = ""  # the follow-up it is (``toolkit.lifecycle.FOLLOW_UPS``), if any
    also_signed: tuple[AuthScheme, ...] = ()  # other OAuth methods the gateway verifies (v4 payout: HMAC-SHA1)
    # (a field, the fields refused beside it): the v4 sale's token replaces the card (hosted-fields.md 3.3)
    excludes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    answers: AnswerStyle = AnswerStyle.FAMILY
    numbers: tuple[str, ...] = ()  # the answer fields written as JSON numbers (Hosted Fields), every other a string

    @property
    def schemes(self) -> tuple[AuthScheme, ...]:
        """Every scheme the gateway verifies the operation's requests with: ``auth`` first (the client signs with
        it), then ``also_signed``."""
        return (self.auth, *self.also_signed)

    def oauth_scheme(self, method: str) -> AuthScheme | None:
        """The OAuth scheme an ``oauth_signature_method`` names when the operation takes it; None for another."""
        return next((scheme for scheme in self.schemes if scheme.is_oauth and scheme.value == method), None)

    @property
    def kind(self) -> TransactionKind | None:
        """The kind of transaction it makes (a ``make_rebill_preauth`` makes a ``preauth``), or None."""
        return KINDS[self.makes] if self.makes else None

    @property
    def applies_to(self) -> tuple[str, ...]:
        """The kinds of transaction a follow-up applies to (``capture``: a preauth); () for any other operation."""
        return applies_to(self.follow_up) if self.follow_up else ()

    @property
    def later(self) -> bool:
        """It adds a transaction to an existing order (same orderid, its own serial-number)."""
        return bool(self.follow_up and FOLLOW_UPS[self.follow_up].makes)

    @property
    def family(self) -> str:
        """``v2``, ``v4`` or ``3ds/v1`` (spec section 9)."""
        parts = self.path.split("/")
        return "3ds/v1" if parts[2] == "3ds" else parts[2]

    @property
    def group(self) -> bool:
        """Addressable by endpoint group: every v2 operation (spec 2.1; behaviour section 11: "every v2
        operation addressed by endpoint is also addressable by endpoint group"), no v4 or 3-D Secure one."""
        return self.family == "v2"

    @property
    def group_path(self) -> str:
        return self.path.replace("/{endpointId}", "/group/{endpointGroupId}")

    @cached_property
    def fields(self) -> tuple[str, ...]:
        """Every field the operation knows: required, one-of groups, what goes together with them, optional."""
        seen = dict.fromkeys(
            [
                *self.required,
                *(n for group in self.one_of for n in group),
                *(n for group in self.together for n in group),
                *self.optional,
            ]
        )
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
        for group in self.spellings:
            if name in group or any(name in FIELDS[wire].names for wire in group):
                return group[0]  # the operation's documented spelling (v4: client_orderid or client-order-id)
        if name in self.fields:
            return name
        for wire in self.fields:
            if name in FIELDS[wire].names:
                return wire
        return wire_name(name)

    @cached_property
    def spellings(self) -> tuple[tuple[str, ...], ...]:
        """The ``one_of`` groups whose names spell one field (``client_orderid`` / ``client-order-id``): the
        gateway takes either, the client sends the first."""
        return tuple(group for group in self.one_of if _one_field(group))

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


def _one_field(group: tuple[str, ...]) -> bool:
    """Every name of ``group`` is a spelling of one field of the registry."""
    return len(group) > 1 and any(all(name in FIELDS[wire].names for name in group) for wire in group)


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
_V4_BANK = ("bank_name", "bank_branch", "bank_province", "bank_city")  # behaviour section 11: v4 payout
_PAYOUT_CARD = ("credit_card_number", "expire_month", "expire_year", "card_printed_name")
_TRANSFER_SOURCES = ("credit_card_number", "card_recurring_payment_id")
_TRANSFER_DESTINATIONS = ("destination-card-no", "destination_card_recurring_payment_id")
_BROWSER_DATA = tuple(name for name in FIELDS if name.startswith("customer_browser_"))  # hosted-fields.md 3.3
_CARD_BY_TOKEN = ("credit_card_number", "expire_month", "expire_year", "cvv2")  # what hosted_fields_token replaces
_HOSTED_SALE_REQUIRED = ("order_desc", "amount", "currency", "hosted_fields_token", *_CUSTOMER, "email", "ipaddress",
                         "redirect_url", *_BROWSER_DATA)  # fmt: skip
# Mandatory on the production gateway, but only a conformance warning on a lenient simulator.
LENIENT_OPTIONAL = frozenset({LOGIN, *_CUSTOMER, "comment", "threeDSCompInd", *_BROWSER_DATA})

SALE_CONTROL = ControlFormula((ENDPOINT_ID, "client_orderid", "amount", "email"))
VERIFY_CONTROL = ControlFormula((ENDPOINT_ID, "client_orderid", "email"))
FOLLOW_UP_CONTROL = ControlFormula((LOGIN, "client_orderid", "orderid"))
THREEDS_CONTROL = ControlFormula((LOGIN, "client-order-id", "orderid"))  # spec 4.2 writes client-order-id
REBILL_CONTROL = ControlFormula((LOGIN, "client_orderid", "cardrefid", "amount", "currency"))
AMOUNT_CONTROL = ControlFormula(
    (LOGIN, "client_orderid", "orderid", "amount", "currency"), optional=frozenset({"amount", "currency"})
)
_ASSUMED_FORM_CONTROL = "control: not shown in the spec; the sale formula is used"
_ASSUMED_FIELDS = "request fields: not shown in the spec or in behaviour section 10; chosen by gatekit"
_SECTION_10 = "request fields: behaviour section 10 (the gateway family's documentation)"
_SECTION_11 = "operation, path, fields and control: behaviour section 11 (the family's public client code)"
_V4_SPELLING = "client_orderid or client-order-id: either is taken on every v4 operation (behaviour sections 10, 11)"
_HOSTED_FIELDS = "Hosted Fields: hosted-fields.md (the family's merchant examples, payneteasy/hosted-fields-examples)"
_HOSTED_TYPES = (
    "answer: JSON with its types (hosted-fields.md section 3): error-code a number; a refused signature is a 401 "
    "text/plain reason; type and serial-number as in the family's answers (the examples read neither)"
)
_FORM_REDIRECT = (
    "redirect_url: mandatory on this hosted form (nothing public says otherwise: the family's public PHP library "
    "requires it on every form; behaviour section 12 makes it optional on sale-form, preauth-form, "
    "account-verification-form and transfer-form only)"
)
_FORM_RESULT_PAGE = (
    "redirect_url: optional (behaviour section 12, 'as sale'); without it the payer ends on the gateway's own "
    "result page"
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
        prefixes=("customer_browser_",),
        assumed=(_SECTION_10, "customer_browser_* (3-D Secure 2 browser data): accepted by prefix, not checked"),
        makes=name,
    )


def _rebill(
    name: str, path: str, code: str | None, request: str | None, summary: str, *assumed: str, makes: str
) -> Operation:
    """make-rebill and its two published names (behaviour sections 10 and 11): a stored card, no cardholder."""
    return Operation(
        name,
        path,
        code,
        request,
        "AsyncResponse",
        ResponseKind.ASYNC,
        AuthScheme.CONTROL,
        summary,
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
        control=REBILL_CONTROL,
        assumed=(*assumed, _SECTION_10, "enumerate_amounts: at most 10 amounts, each at most the amount"),
        makes=makes,
    )


def _v4(name: str, path: str, summary: str, required: tuple[str, ...], **details: Any) -> Operation:
    """A v4 operation (OAuth RSA-SHA256, spec 9) that starts an order: the gateway takes the merchant's order id
    as ``client_orderid`` or ``client-order-id`` on every v4 operation (one rule, behaviour sections 10 and 11);
    ``spelling`` is the one the documentation writes, which the client sends."""
    spelling = details.pop("spelling", "client_orderid")
    other = "client-order-id" if spelling == "client_orderid" else "client_orderid"
    code, request, response = details.pop("types", (None, None, None))
    return Operation(
        name,
        path,
        code,
        request,
        response,
        details.pop("response", ResponseKind.ASYNC),
        AuthScheme.OAUTH_RSA_SHA256,
        summary,
        required=required,
        one_of=((spelling, other), *details.pop("one_of", ())),
        **details,
    )


def _hosted(name: str, path: str, summary: str, required: tuple[str, ...], **details: Any) -> Operation:
    """A Hosted Fields call (hosted-fields.md section 3): v4, OAuth RSA-SHA256, answers with their JSON types."""
    numbers = ("error-code", *details.pop("numbers", ()))
    assumed = (_HOSTED_FIELDS, _HOSTED_TYPES, *details.pop("assumed", ()))
    if details.pop("order", True):
        return _v4(name, path, summary, required, answers=AnswerStyle.HOSTED_FIELDS, numbers=numbers,
                   assumed=(*assumed, _V4_SPELLING), **details)  # fmt: skip
    response = details.pop("response")
    return Operation(name, path, None, None, None, response, AuthScheme.OAUTH_RSA_SHA256, summary, required,
                     answers=AnswerStyle.HOSTED_FIELDS, numbers=numbers, assumed=assumed, **details)  # fmt: skip


def _form(
    name: str,
    path: str,
    code: str | None,
    request: str | None,
    summary: str,
    *assumed: str,
    makes: str,
    redirect: bool = False,
) -> Operation:
    """Hosted-form operations: as sale without the card fields; a redirect address back (section 10).  ``redirect``:
    ``redirect_url`` is mandatory (else optional, behaviour section 12: the gateway's own result page ends it)."""
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
            *(("redirect_url",) if redirect else ()),
        ),
        optional=(*(() if redirect else ("redirect_url",)), *_FORM_URLS, *_CUSTOMER_OPTIONAL),
        control=SALE_CONTROL,
        assumed=(*assumed, _SECTION_10, _FORM_REDIRECT if redirect else _FORM_RESULT_PAGE),
        makes=makes,
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
        assumed=(_SECTION_10,),
        follow_up=name,
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
    _form(
        "sale_form",
        "/api/v2/sale-form/{endpointId}",
        "SALEFORM",
        "SaleFormRequest",
        "Hosted card page: sale",
        makes="sale",
    ),
    _payment("preauth", "/api/v2/preauth/{endpointId}", "PREAUTH", "AuthRequest", "Reserves funds; capture or void"),
    _form(
        "preauth_form",
        "/api/v2/preauth-form/{endpointId}",
        "PREAUTHFORM",
        "AuthFormRequest",
        "Hosted preauth",
        makes="preauth",
    ),
    _form(
        "payment_form",
        "/api/v2/payment-form/{endpointId}",
        "PAYMENTFORM",
        "PaymentFormRequest",
        "Universal hosted payment form",
        _ASSUMED_FORM_CONTROL,
        makes="sale",
        redirect=True,
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
        assumed=(_SECTION_10,),
        follow_up="void",
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
        assumed=(_SECTION_10,),
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
        assumed=(
            "request fields: section 10 lists none for the direct call; the family's documentation and public "
            "PHP library: as sale without amount and currency (zero amount, spec 4.1), phone optional",
        ),
        makes="account-verification",
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
        required=("client_orderid", "order_desc", *_CUSTOMER, "email", "ipaddress"),
        optional=("redirect_url", *_FORM_URLS, *_CUSTOMER_OPTIONAL),
        control=VERIFY_CONTROL,
        assumed=(
            "request fields: section 10 says 'as sale, without the card fields'; amount and currency are left "
            "out as for the direct call (a zero-amount operation, spec 4.1); phone stays mandatory ('as sale') "
            "although the family's documentation of this operation does not list it",
            _FORM_RESULT_PAGE,
        ),
        makes="account-verification",
    ),
    # 4.2 3DS result upload
    _threeds_upload(
        "upload_method_url_result",
        "/api/3ds/v1/upload-method-url-result/{endpointId}",
        "TDS_UPLOAD_METHOD_URL_RESULT",
        "TdsMethodUrlResultRequest",
        "Result of the 3DS 2.x Method step (threeDSCompInd Y/N/U)",
        ("threeDSCompInd",),
        optional=("threeDSServerTransID", *_BROWSER),
        assumed=(
            "threeDSCompInd: mandatory, as spec 4.2 says the upload carries it (section 10 and the family's "
            "documentation do not list it); a lenient simulator takes its absence as Y, with a warning",
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
        follow_up="card-ref",
    ),
    _v4(
        "create_card_ref_v4",
        "/api/v4/create-card-ref/{endpointId}",
        "Tokenization with OAuth RSA-SHA256 signing",
        (LOGIN, "orderid"),
        types=("CARDREF_V4", "CreateCardRefV4Request", "CardRefV4AsyncResponse"),
        response=ResponseKind.CARD_REF,
        assumed=("request fields: not in section 10; those of create-card-ref v2, signed with OAuth", _V4_SPELLING),
        follow_up="card-ref",
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
    _rebill(
        "make_rebill",
        "/api/v2/make-rebill/{endpointId}",
        "REBILL",
        "RebillRequest",
        "Charges a stored card while the cardholder is absent",
        makes="rebill",
    ),
    _rebill(
        "make_rebill_sale",
        "/api/v2/make-rebill-sale/{endpointId}",
        None,
        None,
        "make-rebill under the name the family's client code uses: charges a stored card",
        _SECTION_11,
        makes="rebill",
    ),
    _rebill(
        "make_rebill_preauth",
        "/api/v2/make-rebill-preauth/{endpointId}",
        None,
        None,
        "Holds an amount on a stored card: a preauth that capture, void and return apply to, as to a card's",
        _SECTION_11,
        makes="preauth",
    ),
    _v4(
        "create_recurring_payment",
        "/api/v4/create-recurring-payment/{endpointId}",
        "Creates a subscription charged on a schedule",
        ("cardrefid", "amount", "currency", "period", "interval"),
        types=("CREATE_RP_V4", "RecurringPaymentForCreation", "CreateRecurringPaymentResponse"),
        response=ResponseKind.RECURRING,
        optional=(LOGIN, "start_date", "repeats", "order_desc", "email", "server_callback_url", "notify_url"),
        assumed=(
            _ASSUMED_FIELDS,
            "period and interval values: not shown; day|week|month|year and an integer",
            _V4_SPELLING,
        ),
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
        assumed=(
            "operation code, request and response types: not shown; answered as an AsyncResponse",
            "sending-card-ref-id: a card reference of the merchant; an expired card is declined",
        ),
        makes="pan-eligibility",
    ),
    _v4(
        "transfer",
        "/api/v4/transfer/{endpointId}",
        "Card-to-card transfer (only the worked signing case in the spec)",
        ("amount", "currency"),
        one_of=(_TRANSFER_SOURCES, _TRANSFER_DESTINATIONS),
        together=(("credit_card_number", "expire_month", "expire_year"),),
        optional=(
            LOGIN,
            "order_desc",
            "card_printed_name",
            "cvv2",
            "ipaddress",
            "deposit2card",
            "redirect_url",
            "server_callback_url",
            "notify_url",
        ),
        assumed=(
            "operation code, request and response types: not shown; answered as an AsyncResponse",
            "a source (a card with its expiry, or card_recurring_payment_id: a card reference) and a destination "
            "(destination-card-no or destination_card_recurring_payment_id): the fields of the spec's example "
            "(2.2), each side needed",
            _V4_SPELLING,
        ),
        makes="transfer",
    ),
    Operation(
        "transfer_by_ref",
        "/api/v2/transfer-by-ref/{endpointId}",
        None,
        None,
        None,
        ResponseKind.ASYNC,
        AuthScheme.CONTROL,
        "Moves money from one stored card (or the merchant) to another stored card",
        required=(LOGIN, "client_orderid", "amount", "currency", "ipaddress", "destination-card-ref-id"),
        optional=("order_desc", "source-card-ref-id", "cvv2", "redirect_url", "server_callback_url", "notify_url"),
        control=ControlFormula(
            (LOGIN, "client_orderid", "source-card-ref-id", "destination-card-ref-id", "amount", "currency"),
            optional=frozenset({"source-card-ref-id"}),
        ),
        assumed=(
            _SECTION_11,
            "operation code, request and response types: not shown; answered as an AsyncResponse",
            "without source-card-ref-id the money comes from the merchant (a deposit to the destination card)",
        ),
        makes="transfer",
    ),
    _v4(
        "transfer_by_ref_v4",
        "/api/v4/transfer-by-ref/{endpointId}",
        "Deposit to a card number (the family's deposit-to-card example)",
        ("amount", "currency", "order_desc", "destination-card-no"),
        spelling="client-order-id",
        optional=(LOGIN, "ipaddress", "redirect_url", "server_callback_url", "notify_url"),
        assumed=(
            _SECTION_11,
            "operation code, request and response types: not shown; answered as an AsyncResponse",
            "optional fields: not listed by section 11; those of the other v4 money operations",
            _V4_SPELLING,
        ),
        makes="transfer",
    ),
    _form(
        "transfer_form",
        "/api/v2/transfer-form/{endpointId}",
        None,
        None,
        "Hosted card-to-card transfer: the payer enters the source and the destination card",
        "operation, path, fields and control: behaviour section 12 (the family's public PHP library, "
        "TransferFormQuery: the fields and the control of sale-form)",
        "operation code and request type: not shown; answered as the other hosted forms (async-form-response)",
        "the page asks for the source card (number, name, expiry, CVV2: its CVV2 chooses the outcome, as on "
        "sale-form, 3-D Secure included) and the destination card's number (destination-card-no)",
        makes="transfer",
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
        assumed=(_ASSUMED_FIELDS,),
        makes="payout",
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
        assumed=(_ASSUMED_FORM_CONTROL, _ASSUMED_FIELDS),
        makes="payout",
    ),
    _v4(
        "payout_check",
        "/api/v4/payout-check/{endpointId}",
        "Step 1: validates the recipient and registers the payout without moving funds",
        ("amount", "currency"),
        types=("PAYOUT_V4_CHECK", "PayoutCheckRequest", "AsyncResponse"),
        one_of=(_PAYOUT_DESTINATIONS,),
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
        makes="payout-check",
    ),
    _v4(
        "payout_pay",
        "/api/v4/payout-pay/{endpointId}",
        "Step 2: executes a payout registered by payout-check",
        (LOGIN, "orderid"),
        optional=("server_callback_url", "notify_url"),
        assumed=(
            "auth: OAuth RSA-SHA256 assumed from the v4 family (spec: not shown)",
            "operation code, request and response types: not shown; answered as an AsyncResponse",
            "request fields: section 10 (login, client_orderid and the orderid of the payout-check)",
            _V4_SPELLING,
        ),
        follow_up="payout-pay",
    ),
    _v4(
        "payout_v4",
        "/api/v4/payout/{endpointId}",
        "One-step payout to a card or a bank account",
        ("amount", "currency", "order_desc"),
        spelling="client-order-id",
        one_of=(("credit_card_number", "account_number"),),
        together=(_PAYOUT_CARD, ("account_number", *_V4_BANK)),
        optional=(LOGIN, "ipaddress", "purpose", "server_callback_url", "notify_url", "redirect_url"),
        also_signed=(AuthScheme.OAUTH_HMAC_SHA1,),
        assumed=(
            _SECTION_11,
            "operation code, request and response types: not shown; answered as an AsyncResponse",
            "auth: section 11, 'RSA-SHA256 in the examples; HMAC-SHA1 as v2 payout': both are verified; the client "
            "signs with RSA-SHA256 (spec 9)",
            "a card destination sends all its card fields, a bank destination all its bank fields (section 11 "
            "lists them as two sets)",
        ),
        makes="payout",
    ),
    # Hosted Fields (hosted-fields.md section 3): the merchant's three server calls
    _hosted(
        "create_ephemeral_ticket",
        "/api/v4/tokenize/create-ephemeral-ticket/{endpointId}",
        "Hosted Fields: a single-use ticket the payer's page exchanges for a card token (valid 15 minutes)",
        (),
        order=False,
        response=ResponseKind.TICKET,
        assumed=(
            "request: an empty form body, only the oauth_* parameters signed (section 3.2); any field is ignored",
            'answer: {"ephemeralTicket": "..."}, that one field (section 3.2)',
        ),
    ),
    _hosted(
        "sale_v4",
        "/api/v4/sale/{endpointId}",
        "Hosted Fields sale: charges the card behind a hosted_fields_token, which replaces the card fields",
        _HOSTED_SALE_REQUIRED,
        optional=("card_printed_name", "server_callback_url", "notify_url", *_CUSTOMER_OPTIONAL),
        excludes=(("hosted_fields_token", _CARD_BY_TOKEN),),
        numbers=("paynet-order-id",),
        assumed=(
            "required: every field the examples always send (section 3.3: 'a gateway may require them'), "
            "card_printed_name, first_name, last_name and state aside (state: when the country needs one)",
            "credit_card_number, expire_month, expire_year and cvv2 beside the token: refused, naming them "
            "(section 3.3: 'sending those is an error'; the gateway's answer is not shown)",
            "answer: paynet-order-id a JSON number, the other fields strings (section 3.3)",
            "server_callback_url and notify_url: called as for any sale (section 13: not shown)",
        ),
        makes="sale",
    ),
    _hosted(
        "status_v4",
        "/api/v4/status/{endpointId}",
        "Hosted Fields status: the order's latest transaction, with redirect-to while the payer must act",
        (LOGIN, "orderid"),
        response=ResponseKind.STATUS,
        assumed=(
            "answer: the fields of section 3.4 (paynet-order-id a string); redirect-to, never html, while the "
            "payer must pass 3-D Secure; error-code a number",
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


def makers(kinds: tuple[str, ...]) -> tuple[str, ...]:
    """The operations that open an order with a transaction of one of ``kinds``, in the catalogue's order
    (``("preauth",)``: preauth, preauth_form, make_rebill_preauth)."""
    return tuple(op.name for op in _OPERATIONS if op.makes in kinds)


def _check_catalogue() -> None:
    """Every field named by an operation is in the field registry; every kind it makes opens an order and every
    follow-up is one of ``toolkit.lifecycle`` (fails at import)."""
    for op in _OPERATIONS:
        refused = (name for _, names in op.excludes for name in names)
        parts = (part for part in (op.control.parts if op.control else ()) if part != ENDPOINT_ID)
        for name in (*op.fields, *parts, *refused):
            if name not in FIELDS:
                raise AssertionError(f"{op.name}: field {name!r} missing from toolkit.fields.FIELDS")
        if op.makes and (op.makes not in KINDS or is_later(op.makes)):
            raise AssertionError(f"{op.name}: {op.makes!r} is not a kind of toolkit.lifecycle that opens an order")
        if op.follow_up and op.follow_up not in FOLLOW_UPS:
            raise AssertionError(f"{op.name}: {op.follow_up!r} is not a follow-up of toolkit.lifecycle")


_check_catalogue()
