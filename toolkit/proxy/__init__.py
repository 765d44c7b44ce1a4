"""The recording proxy (``gatekit proxy``): any client, in any language, records through it and gets gatekit's
diagnosis of its real traffic.

- ``routes``: which operation a path addresses;
- ``checks``: the request against the catalogue (fields, control, OAuth), the answer against the response model;
- ``orders``: which order an exchange belongs to (one archive per order);
- ``upstream``: the session to the gateway, HTTPS verified with the system's CA store;
- ``server``: ``ProxyServer``, the loopback server that forwards, prints one line per exchange and records.
"""

from toolkit.proxy.checks import Check, Keys
from toolkit.proxy.server import ProxyServer, started_line

__all__ = ["Check", "Keys", "ProxyServer", "started_line"]
