"""The query classes of the PHP library and its Ruby port, as data (field lists copied as facts, not code).

PHP: payneteasy/php-library-payneteasy-api source/PaynetEasy/PaynetEasyApi/Query/<Name>Query.php.
Ruby: payneteasy/ruby-integration-examples lib/paynet_easy/paynet_easy_api/query/<name>_query.rb.
Void and the three 3-D Secure uploads exist in neither library: they are written here in the
library's style from the documentation's field lists (doc.payneteasy.eu api_v2_void,
upload-method-url-result, upload-cres-result, upload-pares-result) and marked so.
"""

from __future__ import annotations

from tests.interop.php_library import Query

KEY = "queryConfig.signing_key"
LOGIN = ("login", "queryConfig.login", True, "medium_string")
CLIENT_ID = ("client_orderid", "payment.clientId", True, "id")
PAYNET_ID = ("orderid", "payment.paynetId", True, "id")

# SaleQuery.php (PreauthQuery.php extends it): redirect_url is required, from the query config
_PAYMENT_FIELDS = (
    CLIENT_ID,
    ("order_desc", "payment.description", True, "long_string"),
    ("amount", "payment.amount", True, "amount"),
    ("currency", "payment.currency", True, "currency"),
    ("address1", "billingAddress.firstLine", True, "medium_string"),
    ("city", "billingAddress.city", True, "medium_string"),
    ("zip_code", "billingAddress.zipCode", True, "zip_code"),
    ("country", "billingAddress.country", True, "country"),
    ("phone", "billingAddress.phone", True, "phone"),
    ("ipaddress", "customer.ipAddress", True, "ip"),
    ("email", "customer.email", True, "email"),
    ("card_printed_name", "creditCard.cardPrintedName", True, "long_string"),
    ("credit_card_number", "creditCard.creditCardNumber", True, "credit_card_number"),
    ("expire_month", "creditCard.expireMonth", True, "month"),
    ("expire_year", "creditCard.expireYear", True, "year"),
    ("cvv2", "creditCard.cvv2", True, "cvv2"),
    ("redirect_url", "queryConfig.redirect_url", True, "url"),
    ("first_name", "customer.firstName", False, "medium_string"),
    ("last_name", "customer.lastName", False, "medium_string"),
    ("server_callback_url", "queryConfig.callback_url", False, "url"),
)
_SALE_SIGNATURE = ("queryConfig.end_point", "payment.clientId", "payment.amountInCents", "customer.email", KEY)
_AMOUNT_SIGNATURE = (
    "queryConfig.login",
    "payment.clientId",
    "payment.paynetId",
    "payment.amountInCents",
    "payment.currency",
    KEY,
)  # CaptureQuery.php and ReturnQuery.php alike
_FOLLOW_UP_SIGNATURE = ("queryConfig.login", "payment.clientId", "payment.paynetId", KEY)
_TDS_FIELDS = (LOGIN, ("client-order-id", "payment.clientId", True, "id"), PAYNET_ID)

PHP_QUERIES: dict[str, Query] = {
    "sale": Query("sale", _PAYMENT_FIELDS, _SALE_SIGNATURE),
    "preauth": Query("preauth", _PAYMENT_FIELDS, _SALE_SIGNATURE),
    # CaptureQuery.php: no amount or currency is sent, but both are signed (amountInCents, currency)
    "capture": Query("capture", (CLIENT_ID, PAYNET_ID, LOGIN), _AMOUNT_SIGNATURE),
    # ReturnQuery.php: amount, currency and comment are required
    "return": Query(
        "return",
        (
            CLIENT_ID,
            PAYNET_ID,
            ("amount", "payment.amount", True, "amount"),
            ("currency", "payment.currency", True, "currency"),
            ("comment", "payment.comment", True, "medium_string"),
            LOGIN,
        ),
        _AMOUNT_SIGNATURE,
    ),
    "status": Query("status", (CLIENT_ID, PAYNET_ID, LOGIN), _FOLLOW_UP_SIGNATURE, success_type="status-response"),
    "create-card-ref": Query(
        "create-card-ref",
        (CLIENT_ID, PAYNET_ID, LOGIN),
        _FOLLOW_UP_SIGNATURE,
        ("type", "status", "card-ref-id", "serial-number"),
        "create-card-ref-response",
    ),
    "get-card-info": Query(
        "get-card-info",
        (("cardrefid", "recurrentCard.paynetId", True, "id"), LOGIN),
        ("queryConfig.login", "recurrentCard.paynetId", KEY),
        ("type", "card-printed-name", "expire-year", "expire-month", "bin", "last-four-digits", "serial-number"),
        "get-card-info-response",
    ),
    # MakeRebillQuery.php (latest): order_desc and ipaddress required; the spec's control formula
    "make-rebill": Query(
        "make-rebill",
        (
            CLIENT_ID,
            ("order_desc", "payment.description", True, "long_string"),
            ("amount", "payment.amount", True, "amount"),
            ("currency", "payment.currency", True, "currency"),
            ("ipaddress", "customer.ipAddress", True, "ip"),
            ("cardrefid", "recurrentCard.paynetId", True, "id"),
            LOGIN,
            ("comment", "payment.comment", False, "medium_string"),
        ),
        (
            "queryConfig.login",
            "payment.clientId",
            "recurrentCard.paynetId",
            "payment.amountInCents",
            "payment.currency",
            KEY,
        ),
    ),
    # not in the library: the docs' void (login, client_orderid, orderid, comment) in the library's style
    "void": Query(
        "void",
        (CLIENT_ID, PAYNET_ID, LOGIN, ("comment", "payment.comment", True, "medium_string")),
        _FOLLOW_UP_SIGNATURE,
    ),
    # not in the library: the docs' 3-D Secure uploads (hyphenated client-order-id, camel case cRes/paRes)
    "upload-method-url-result": Query(
        "upload-method-url-result",
        (*_TDS_FIELDS, ("threeDSCompInd", "tds.compInd", True, "any")),
        _FOLLOW_UP_SIGNATURE,
        family="api/3ds/v1",
    ),
    "upload-cres-result": Query(
        "upload-cres-result",
        (*_TDS_FIELDS, ("cRes", "tds.cres", True, "any")),
        _FOLLOW_UP_SIGNATURE,
        family="api/3ds/v1",
    ),
    "upload-pares-result": Query(
        "upload-pares-result",
        (*_TDS_FIELDS, ("paRes", "tds.pares", True, "any")),
        _FOLLOW_UP_SIGNATURE,
        family="api/3ds/v1",
    ),
}

# make_rebill_query.rb signs the old formula: end_point + client_id + amount_in_cents + cardrefid + key
RUBY_QUERIES: dict[str, Query] = {
    **PHP_QUERIES,
    "make-rebill": Query(
        "make-rebill",
        PHP_QUERIES["make-rebill"].fields,
        ("queryConfig.end_point", "payment.clientId", "payment.amountInCents", "recurrentCard.paynetId", KEY),
    ),
}
