"""The payer's side: the cardholder's browser on the gateway's pages (hosted forms, 3-D Secure, the way back).

- ``http``: ``Payer``, the browser over plain HTTP (requests), which reads pages with ``forms``;
- ``browser``: ``BrowserPayer``, the same steps in headless Chromium (Selenium: ``gatekit[browser]``);
- ``forms``: ``Page`` and ``Form``, what a payer without a browser reads from a page;
- ``visits``: ``Visit``, one request of the payer's browser as the reports and diagrams show it;
- ``hosted_fields``: the card typed into a gateway's Hosted Fields (the SDK's tokenize call, its answer).

``from toolkit.payer import Payer`` is the plain-HTTP payer; ``toolkit.payer.browser`` imports Selenium only
when a browser starts.
"""

from toolkit.payer.errors import PayerError
from toolkit.payer.hosted_fields import HostedFieldsToken, TokenizeRefused
from toolkit.payer.http import MERCHANT_REDIRECT_FORM, PASSWORDS, Delivered, Payer

__all__ = [
    "MERCHANT_REDIRECT_FORM",
    "PASSWORDS",
    "Delivered",
    "HostedFieldsToken",
    "Payer",
    "PayerError",
    "TokenizeRefused",
]
