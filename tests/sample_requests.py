"""One well-formed request that several test modules send, check or print (card data as in the spec's examples)."""

from __future__ import annotations

PAN, CVV = "4444555566661111", "123"
SALE = {
    "client_orderid": "inv-1",
    "order_desc": "Test order",
    "amount": "10.42",
    "currency": "EUR",
    "address1": "1 Main Street",
    "city": "Springfield",
    "zip_code": "12345",
    "country": "DE",
    "phone": "+4930123456",
    "email": "john.smith@example.com",
    "ipaddress": "203.0.113.7",
    "credit_card_number": PAN,
    "card_printed_name": "JOHN SMITH",
    "expire_month": "12",
    "expire_year": "2099",
    "cvv2": CVV,
}
