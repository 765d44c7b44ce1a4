"""The payer's side: the cardholder's browser on the gateway's pages (hosted forms, 3-D Secure, the way back).

- ``http``: ``Payer``, the browser over plain HTTP (requests), which reads pages with ``forms``;
- ``browser``: ``BrowserPayer``, the same steps in headless Chromium (Selenium: ``gatekit[browser]``);
- ``forms``: ``Page`` and ``Form``, what a payer without a browser reads from a page;
- ``visits``: ``Visit``, one request of the payer's browser as the reports and diagrams show it.

``from toolkit.payer import Payer`` is the plain-HTTP payer; ``toolkit.payer.browser`` imports Selenium only
when a browser starts.
"""

from toolkit.payer.http import MERCHANT_REDIRECT_FORM, PASSWORDS, Delivered, Payer, PayerError

__all__ = ["MERCHANT_REDIRECT_FORM", "PASSWORDS", "Delivered", "Payer", "PayerError"]
