"""Request and response fields per operation, transcribed from the documentation as plain data.

Read by the wire tests and by the interop emulations; never derived from ``toolkit``.  Sources:

- [S10]  ../shared/spec/gateway-behaviour.md section 10 (wins wherever another source differs)
- [S11], [S12]  the same page's sections 11 (operations the family's client code calls) and 12 (what the
  family's shop plugins rely on: forms without redirect_url, transfer-form)
- [SPEC] ../shared/spec/gateway-api.md (paths, auth schemes, control formulas of sections 4.1-4.4)
- [VEC]  tests/vectors/control.json (control formulas with worked values)
- [DOC:page]  https://doc.payneteasy.eu/integration/API_commands/<page>.html (the family's public docs)
- [PHP:file]  payneteasy/php-library-payneteasy-api, source/PaynetEasy/PaynetEasyApi/Query/<file>

Field names are wire spellings, exactly as the sources write them (``client-order-id`` and ``cRes``
on the 3-D Secure uploads).  ``control`` is listed among the mandatory fields of every operation
that has a control formula: leaving it out must be refused like any other mandatory field.
Every interpretation made here is commented with its source; the report of issue 8 repeats them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# --- control formulas (spec 4.1-4.3, VEC); "amount" is the amount in minor units --------------------
ENDPOINT = "endpointId"  # whichever id is in the path [SPEC 4.1, behaviour 1]
SALE_CONTROL = (ENDPOINT, "client_orderid", "amount", "email")
VERIFY_CONTROL = (ENDPOINT, "client_orderid", "email")
FOLLOW_UP_CONTROL = ("login", "client_orderid", "orderid")
AMOUNT_CONTROL = ("login", "client_orderid", "orderid", "amount", "currency")
TDS_CONTROL = ("login", "client-order-id", "orderid")  # [SPEC 4.2] written with the hyphenated spelling

# --- responses [behaviour 2, 3 and S10; DOC pages' "Response Parameters"] ---------------------------
ASYNC = ("async-response", ("type", "serial-number", "paynet-order-id", "merchant-order-id"))
FORM = ("async-form-response", ("type", "serial-number", "paynet-order-id", "merchant-order-id", "redirect-url"))
STATUS = (
    "status-response",
    (
        "type",
        "serial-number",
        "status",
        "paynet-order-id",
        "merchant-order-id",
        "amount",
        "currency",
        "transaction-type",
    ),
)
CARD_REF = ("create-card-ref-response", ("type", "serial-number", "card-ref-id"))
CARD_INFO = (
    "get-card-info-response",
    ("type", "serial-number", "card-printed-name", "bin", "last-four-digits", "expire-year", "expire-month"),
)
NOT_SHOWN: tuple[str | None, tuple[str, ...]] = (None, ("type", "serial-number"))


@dataclass(frozen=True)
class Wire:
    """One operation as the documentation describes it on the wire."""

    name: str  # the path segment, used in test ids
    path: str
    auth: str  # "control", "HMAC-SHA1" or "RSA-SHA256" [SPEC 4, 5]
    mandatory: tuple[str, ...]
    optional: tuple[str, ...] = ()
    one_of: tuple[tuple[str, ...], ...] = ()  # one field of each group is needed (the first is used)
    lengths: dict[str, int] = field(default_factory=dict)  # documented maximum lengths
    control: tuple[str, ...] = ()  # formula parts in order; the merchant control key follows
    control_if_sent: frozenset[str] = frozenset()  # parts that count only when the field is sent
    response: tuple[str | None, tuple[str, ...]] = ASYNC  # (type, fields the gateway documents)
    needs: str = "nothing"  # the earlier order a request refers to (tests/wire/orders.py makes it)
    tested: bool = True  # False: the sources do not say enough to judge a request (see ``notes``)
    group: bool | None = None  # answers at .../group/{id} too; None: by its family ([S11]: every v2 operation)
    sources: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # interpretations, each with its source

    @property
    def by_group(self) -> bool:
        """[S11] "Every v2 operation addressed by endpoint is also addressable by endpoint group (spec 2.1)";
        nothing documents a group address for the v4 or 3ds/v1 families: gatekit's simulator refuses one."""
        return self.path.startswith("/api/v2/") if self.group is None else self.group

    @property
    def group_path(self) -> str:
        return self.path.replace("/{endpointId}", "/group/{endpointId}")


_CUSTOMER = ("address1", "city", "zip_code", "country", "phone", "email", "ipaddress")
_CARD = ("card_printed_name", "credit_card_number", "expire_month", "expire_year", "cvv2")
_SALE_OPTIONAL = (
    "redirect_url",
    "server_callback_url",
    "notify_url",
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
_PAYER_LENGTHS = {
    "client_orderid": 128,
    "currency": 3,
    "address1": 50,
    "city": 50,
    "zip_code": 10,
    "country": 2,
    "phone": 15,
    "email": 50,
    "ipaddress": 45,
    "state": 2,
}
_FOLLOW_UP_LENGTHS = {"login": 20, "client_orderid": 128, "orderid": 20, "comment": 50}
_TDS_LENGTHS = {"login": 20, "client-order-id": 128, "orderid": 128}
_S10_SALE = "[S10] sale, preauth: M/O fields and lengths as listed"
_S10_FORMS = "[S10] sale-form, preauth-form, account-verification-form: as sale, without the card fields"
_FORM_REDIRECT = (
    "redirect_url optional: [S12] 'sale-form, preauth-form, account-verification-form and transfer-form take"
    ' redirect_url as optional (section 10: "as sale"); without it the payer ends on the gateway\'s own result'
    " page'. [PHP:Prototype/PaymentFormQuery.php] requires it, but as the library's own check (it requires it on"
    " sale too, where S10 does not)"
)


def _payment(name: str) -> Wire:
    return Wire(
        name,
        f"/api/v2/{name}/{{endpointId}}",
        "control",
        mandatory=("client_orderid", "order_desc", "amount", "currency", *_CUSTOMER, *_CARD, "control"),
        optional=_SALE_OPTIONAL,
        lengths=_PAYER_LENGTHS,
        control=SALE_CONTROL,
        sources=(_S10_SALE, "[SPEC 4.1] control", "[DOC:api_v2_sale] Required: the same fields"),
        notes=(
            "expire_year: S10 writes '4 digits' but also says two digits ('99') are accepted (S10 last bullets);"
            " the mandatory-field tests send 2099, the refusal tests send 99",
            "login is not listed for sale/preauth by S10 nor by [PHP:SaleQuery.php]: it is not sent",
        ),
    )


def _form(name: str, *, zero_amount: bool = False, sources: tuple[str, ...] = (_S10_FORMS,)) -> Wire:
    money = () if zero_amount else ("amount", "currency")
    notes = [_FORM_REDIRECT]
    if zero_amount:
        notes.append(
            "account-verification-form: S10's 'as sale' would include amount and currency; the operation is a"
            " zero-amount one [SPEC 4.1] and its control has no amount, so both are left out (integrator's decision)"
        )
        notes.append(
            "phone stays mandatory because S10 says 'as sale'; [DOC:api_v2_account-verification-form] does not list"
            " phone (S10 wins)"
        )
    return Wire(
        name,
        f"/api/v2/{name}/{{endpointId}}",
        "control",
        mandatory=("client_orderid", "order_desc", *money, *_CUSTOMER, "control"),
        optional=_SALE_OPTIONAL,
        lengths=_PAYER_LENGTHS,
        control=VERIFY_CONTROL if zero_amount else SALE_CONTROL,
        response=FORM,
        sources=(*sources, "[SPEC 4.1] control and AsyncCheckoutFormRedirect"),
        notes=tuple(notes),
    )


def _tds_upload(name: str, result: str, result_length: int, needs: str, *notes: str, optional: bool = False) -> Wire:
    return Wire(
        name,
        f"/api/3ds/v1/{name}/{{endpointId}}",
        "control",
        mandatory=("login", "client-order-id", "orderid", *(() if optional else (result,)), "control"),
        optional=(result,) if optional else (),
        lengths={**_TDS_LENGTHS, result: result_length},
        control=TDS_CONTROL,
        needs=needs,
        sources=(f"[S10] {name}", f"[DOC:{name}] parameter table", "[SPEC 4.2] control"),
        notes=notes,
    )


def _rebill(name: str) -> Wire:
    """[S11] make-rebill-sale and make-rebill-preauth: 'as make-rebill' (fields and control)."""
    return Wire(
        name,
        f"/api/v2/{name}/{{endpointId}}",
        "control",
        mandatory=("login", "client_orderid", "cardrefid", "amount", "currency", "control"),
        optional=("order_desc", "ipaddress", "comment", "cvv2", "server_callback_url"),
        lengths={"login": 20, "client_orderid": 128, "cardrefid": 20, "currency": 3},
        control=("login", "client_orderid", "cardrefid", "amount", "currency"),
        needs="card_ref",
        sources=(f"[S11] {name}: path; fields and control 'as make-rebill' [S10, SPEC 4.3]",),
    )


WIRES: tuple[Wire, ...] = (
    _payment("sale"),
    _payment("preauth"),
    _form("sale-form"),
    _form("preauth-form"),
    _form("account-verification-form", zero_amount=True),
    _form(
        "transfer-form",
        sources=(
            "[S12] transfer-form: the hosted form of a card-to-card transfer, with the fields and the control of"
            " sale-form",
            "[PHP:TransferFormQuery.php] extends Prototype/PaymentFormQuery.php: the form fields, the sale-form"
            " control (end point + client id + amount in cents + email + key), answered async-form-response",
        ),
    ),
    Wire(
        "account-verification",
        "/api/v2/account-verification/{endpointId}",
        "control",
        mandatory=(
            "client_orderid",
            "order_desc",
            "card_printed_name",
            "address1",
            "city",
            "zip_code",
            "country",
            "email",
            "credit_card_number",
            "expire_month",
            "expire_year",
            "cvv2",
            "ipaddress",
            "control",
        ),
        optional=(
            "first_name",
            "last_name",
            "ssn",
            "birthday",
            "state",
            "cell_phone",
            "phone",
            "site_url",
            "purpose",
            "server_callback_url",
            "redirect_url",
        ),
        lengths={k: v for k, v in _PAYER_LENGTHS.items() if k not in ("phone", "currency")},
        control=VERIFY_CONTROL,
        sources=(
            "S10 is silent on the direct account-verification",
            "[DOC:api_v2_account-verification] Required: client_orderid, order_desc, address1, city, zip_code,"
            " country, email, cvv2, ipaddress, control (the stored page ends there)",
            "[PHP:AccountVerificationQuery.php] mandatory adds card_printed_name, credit_card_number,"
            " expire_month, expire_year; phone is optional",
        ),
        notes=(
            "zero-amount [SPEC 4.1]: no amount, no currency (integrator's decision)",
            "phone optional: neither the docs nor the PHP library require it here, unlike sale (S10)",
        ),
    ),
    Wire(
        "capture",
        "/api/v2/capture/{endpointId}",
        "control",
        mandatory=("login", "client_orderid", "orderid", "control"),
        optional=("amount", "currency"),
        lengths={"login": 20, "client_orderid": 128, "orderid": 20, "currency": 3},
        control=AMOUNT_CONTROL,
        control_if_sent=frozenset({"amount", "currency"}),
        needs="preauth",
        sources=("[S10] capture", "[DOC:api_v2_capture] control: amount and currency 'if sent'", "[VEC]"),
        notes=("lengths of client_orderid/orderid taken from the return row of S10 (same follow-up family)",),
    ),
    Wire(
        "return",
        "/api/v2/return/{endpointId}",
        "control",
        mandatory=("login", "client_orderid", "orderid", "control"),
        optional=("amount", "currency", "comment"),
        lengths={**_FOLLOW_UP_LENGTHS, "currency": 3},
        control=AMOUNT_CONTROL,
        control_if_sent=frozenset({"amount", "currency"}),
        needs="sale",
        sources=("[S10] return", "[SPEC 4.1] control", "[VEC]"),
        notes=("[PHP:ReturnQuery.php] sends amount, currency and comment as required: more than S10 asks",),
    ),
    Wire(
        "void",
        "/api/v2/void/{endpointId}",
        "control",
        mandatory=("login", "client_orderid", "orderid", "control", "comment"),
        lengths=_FOLLOW_UP_LENGTHS,
        control=FOLLOW_UP_CONTROL,
        needs="sale",
        sources=("[S10] void", "[DOC:api_v2_void] comment Mandatory, length 50", "[SPEC 4.1] control"),
        notes=(
            "the voided order is an approved, unsettled sale: [DOC:api_v2_void] says void is for sale and capture,"
            " [SPEC 3] for an authorized, unsettled transaction; a fresh sale satisfies both",
            "[DOC:api_v2_void] also lists 'amount' as 'optional ... Necessity: Mandatory' and client_orderid as"
            " 'Numeric, 10': contradictions inside the page; S10 (no amount; client_orderid 128) is followed",
        ),
    ),
    Wire(
        "status",
        "/api/v2/status/{endpointId}",
        "control",
        mandatory=("login", "client_orderid", "control"),
        optional=("orderid", "by-request-sn"),
        lengths={"login": 20, "client_orderid": 128, "orderid": 20},
        control=FOLLOW_UP_CONTROL,
        control_if_sent=frozenset({"orderid"}),
        response=STATUS,
        needs="sale",
        sources=("[S10] status", "[DOC:api_v2_status] orderid Conditional, by-request-sn Optional", "[VEC]"),
        notes=(
            "orderid left out of the minimal request: S10 allows it when the client_orderid is unique (each test"
            " order has a fresh one); the control then has an empty orderid part [SPEC 4.1, VEC]",
        ),
    ),
    Wire(
        "create-card-ref",
        "/api/v2/create-card-ref/{endpointId}",
        "control",
        mandatory=("login", "client_orderid", "orderid", "control"),
        lengths={"login": 20, "client_orderid": 128, "orderid": 20},
        control=FOLLOW_UP_CONTROL,
        response=CARD_REF,
        needs="sale",
        sources=("[S10] create-card-ref (v2)", "[DOC:api_v2_create-card-ref]", "[SPEC 4.3] control"),
        notes=(
            "[DOC:api_v2_create-card-ref] names the response type 'async-response ... etc.'; S10 says"
            " create-card-ref-response (S10 wins, as does [PHP:CreateCardRefQuery.php])",
        ),
    ),
    Wire(
        "get-card-info",
        "/api/v2/get-card-info/{endpointId}",
        "control",
        mandatory=("login", "cardrefid", "control"),
        lengths={"login": 20, "cardrefid": 20},
        control=("login", "cardrefid"),
        response=CARD_INFO,
        needs="card_ref",
        sources=("[S10] get-card-info", "[DOC:api_v2_get-card-info] control = login + cardrefid", "[VEC]"),
        notes=("[SPEC 4.3] says 'no control formula shown'; the docs and the vectors give login + cardrefid",),
    ),
    Wire(
        "make-rebill",
        "/api/v2/make-rebill/{endpointId}",
        "control",
        mandatory=("login", "client_orderid", "cardrefid", "amount", "currency", "control"),
        optional=(
            "order_desc",
            "ipaddress",
            "comment",
            "cvv2",
            "server_callback_url",
            "enumerate_amounts",
            "recurrent_scenario",
        ),
        lengths={"login": 20, "client_orderid": 128, "cardrefid": 20, "currency": 3, "enumerate_amounts": 128},
        control=("login", "client_orderid", "cardrefid", "amount", "currency"),
        needs="card_ref",
        sources=(
            "[S10] make-rebill",
            "[DOC:api_v2_make-rebill-sale] Required: login, client_orderid, cardrefid, amount, currency",
            "[SPEC 4.3] control",
        ),
        notes=(
            "order_desc and ipaddress: S10 says 'commonly also' outside its M list, the docs' Required list does not"
            " name them: optional here ([PHP:MakeRebillQuery.php] sends both as required)",
        ),
    ),
    _tds_upload(
        "upload-method-url-result",
        "threeDSCompInd",
        1,
        "tds_method",
        "threeDSCompInd mandatory: [SPEC 4.2] says the upload carries it (Y/N/U) and issue 17 decides so; S10's M"
        " list stops at control and its 'also' list (threeDSServerTransID, browser fields) does not name it,"
        " nor does the stored part of [DOC:upload-method-url-result] (a contradiction between the two pages)",
        "browser fields are camel case in S10 and the docs (browserAcceptHeader, browserIP, ...): not sent",
    ),
    _tds_upload(
        "upload-cres-result",
        "cRes",
        4096,
        "tds_challenge",
        "cRes: S10 and the docs' table write cRes (camel case); the docs' own request example sends 'cres=' (S10 wins)",
    ),
    _tds_upload(
        "upload-pares-result",
        "paRes",
        10240,
        "tds_v1",
        "S10 is silent on upload-pares-result: [DOC:upload-pares-result] lists paRes (10240), orderid, login,"
        " client-order-id, control; spelled paRes like cRes (the docs' example also sends 'md')",
    ),
    Wire(
        "create-card-ref-v4",
        "/api/v4/create-card-ref/{endpointId}",
        "RSA-SHA256",
        mandatory=("login", "client_orderid", "orderid"),
        lengths={"login": 20, "client_orderid": 128, "orderid": 20},
        response=CARD_REF,
        needs="sale",
        sources=("S10 is silent", "[DOC:api_v4_create-card-ref] login, client_orderid, orderid; OAuth RSA-SHA256"),
        notes=("the docs' response also lists unq-card-ref-id and recurring-payment-id (not required here)",),
    ),
    Wire(
        "payout",
        "/api/v2/payout/{endpointId}",
        "HMAC-SHA1",
        mandatory=("client_orderid", "amount", "currency"),
        one_of=(("credit_card_number", "account_number"),),
        optional=(
            "order_desc",
            "ipaddress",
            "purpose",
            "server_callback_url",
            "redirect_url",
            "card_printed_name",
            "expire_month",
            "expire_year",
        ),
        lengths={"client_orderid": 128, "currency": 3, "purpose": 128},
        sources=(
            "[SPEC 4.4] OAuth HMAC-SHA1",
            "[S10] v4 payout row, applied to v2 too (S10 has no v2 row)",
            "[DOC:api_v4_payout] Required: client_orderid, amount, currency",
        ),
        notes=("a destination is needed ('then card fields or bank fields', S10): credit_card_number is sent",),
    ),
    Wire(
        "payout-check",
        "/api/v4/payout-check/{endpointId}",
        "RSA-SHA256",
        mandatory=("client_orderid", "amount", "currency"),
        one_of=(("credit_card_number", "account_number"),),
        optional=(
            "order_desc",
            "ipaddress",
            "purpose",
            "server_callback_url",
            "redirect_url",
            "card_printed_name",
            "expire_month",
            "expire_year",
        ),
        lengths={"client_orderid": 128, "currency": 3, "purpose": 128},
        sources=("[SPEC 4.4] OAuth RSA-SHA256", "[S10] v4 payout row", "[DOC:api_v4_payout]"),
        notes=("S10: 'published v4 examples spell client-order-id'; the docs' tables write client_orderid (used)",),
    ),
    Wire(
        "payout-pay",
        "/api/v4/payout-pay/{endpointId}",
        "RSA-SHA256",
        mandatory=("login", "client_orderid", "orderid"),
        lengths={"login": 20, "client_orderid": 128},
        needs="payout_check",
        sources=("[S10] payout-pay (v4)", "[DOC:api_v4_payout-pay] Required: client_orderid, orderid, login"),
    ),
    Wire(
        "pan-eligibility-send",
        "/api/v2/pan-eligibility/send/{endpointId}",
        "HMAC-SHA1",
        mandatory=("client-order-id", "sending-card-ref-id"),
        response=NOT_SHOWN,
        needs="card_ref",
        sources=("[SPEC 4.3] only the worked signing case: fields client-order-id, sending-card-ref-id",),
        notes=("response type not shown anywhere: any 200 answer that is not an error is accepted",),
    ),
    # --- [S11] operations the family's public client code calls beyond the spec's list ---------------
    _rebill("make-rebill-sale"),
    _rebill("make-rebill-preauth"),
    Wire(
        "transfer-by-ref",
        "/api/v2/transfer-by-ref/{endpointId}",
        "control",
        mandatory=("login", "client_orderid", "amount", "currency", "ipaddress", "destination-card-ref-id", "control"),
        optional=("order_desc", "source-card-ref-id", "cvv2", "redirect_url", "server_callback_url"),
        control=("login", "client_orderid", "source-card-ref-id", "destination-card-ref-id", "amount", "currency"),
        control_if_sent=frozenset({"source-card-ref-id"}),
        needs="card_ref",
        sources=("[S11] transfer-by-ref: path, M/O fields and the control formula",),
        notes=("'an absent source ref is an empty string in the formula' [S11]: control_if_sent",),
    ),
    Wire(
        "payout-v4",
        "/api/v4/payout/{endpointId}",
        "RSA-SHA256",
        mandatory=(
            "client-order-id",
            "amount",
            "currency",
            "order_desc",
            "credit_card_number",
            "expire_month",
            "expire_year",
            "card_printed_name",
        ),
        optional=("ipaddress", "purpose", "server_callback_url", "redirect_url"),
        sources=("[S11] payout (v4, one step): M fields, 'then card fields (...) or bank fields (...)'",),
        notes=(
            "the name is gatekit's (the path segment is 'payout', which the v2 payout has too)",
            "the card destination is tested here, its four fields as one set (S11 lists them as the card fields);"
            " the bank destination (account_number, bank_name, bank_branch, bank_province, bank_city) is"
            " exercised in tests/simulator/rules/test_api_transfers.py",
            "client-order-id: S11 writes it hyphenated ('client_orderid accepted too')",
            "auth: S11 says RSA-SHA256 in the examples (HMAC-SHA1 as the v2 payout); RSA-SHA256 is sent (spec 9)",
        ),
    ),
    Wire(
        "transfer-by-ref-v4",
        "/api/v4/transfer-by-ref/{endpointId}",
        "RSA-SHA256",
        mandatory=("client-order-id", "amount", "currency", "order_desc", "destination-card-no"),
        sources=("[S11] transfer-by-ref (v4): M fields (the deposit-to-card example)",),
        notes=("the name is gatekit's: the v2 operation has the same path segment",),
    ),
    # --- covered by the docs, but not enough to judge a request: recorded, not tested ----------------
    Wire(
        "transfer",
        "/api/v4/transfer/{endpointId}",
        "RSA-SHA256",
        mandatory=(),
        tested=False,
        sources=("[SPEC 4.3] worked signing case only", "[DOC:api_v4_transfer]"),
        notes=(
            "the docs make the required fields depend on the use case (PAN/RPI/deposit); the stored page"
            " stops after credit_card_number, cvv2, expire_month (Required for PAN sources)",
        ),
    ),
    Wire(
        "create-recurring-payment",
        "/api/v4/create-recurring-payment/{endpointId}",
        "RSA-SHA256",
        mandatory=(),
        tested=False,
        sources=("[SPEC 4.3] schedule (period, interval), amount, customer", "[DOC:api_v4_create-recurring-payment]"),
        notes=(
            "the docs describe a different request: rp_card_type, client-orderid, 'Merchant login', Endpoint,"
            " order_desc, credit-card-number, hyphenated payer fields; no cardrefid/period/interval in the stored"
            " part. Irreconcilable without more of the page: not tested",
        ),
    ),
    Wire(
        "payout-form",
        "/api/v2/payout-form/{endpointId}",
        "disputed",
        mandatory=(),
        tested=False,
        sources=(
            "[SPEC 4.4] 'control: not shown'",
            "[DOC:api_v2_payout_form] eu: OAuth HMAC-SHA1; com html: OAuth RSA-SHA256; com rst source: OAuth HMAC-SHA1",
        ),
        notes=("the authentication scheme itself is disputed between the sources: not tested",),
    ),
    Wire(
        "payment-form",
        "/api/v2/payment-form/{endpointId}",
        "disputed",
        mandatory=(),
        tested=False,
        sources=("[SPEC 4.1] 'control: not shown'",),
        notes=("neither S10 nor the stored docs describe payment-form: not tested",),
    ),
)

BY_NAME = {wire.name: wire for wire in WIRES}
TESTED = tuple(wire for wire in WIRES if wire.tested)


def wire(name: str) -> Wire:
    return BY_NAME[name]


def misspell(name: str) -> str:
    """The systematic misspelling used by the tests (the gateway sees a misspelled field as missing).

    - a hyphenated name takes underscores:           client-order-id -> client_order_id
    - else an underscored name loses its underscores: client_orderid -> clientorderid
    - else a name with capitals goes all upper case:  cRes -> CRES, threeDSCompInd -> THREEDSCOMPIND
    - else the first letter is capitalised:           login -> Login, orderid -> Orderid
    """
    if "-" in name:
        return name.replace("-", "_")
    if "_" in name:
        return name.replace("_", "")
    if name != name.lower():
        return name.upper()
    return name[:1].upper() + name[1:]
