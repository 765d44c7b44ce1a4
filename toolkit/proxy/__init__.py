"""The recording proxy (``gatekit proxy``): any client, in any language, records through it and gets gatekit's
diagnosis of its real traffic.

- ``routes``: which operation a path addresses;
- ``checks``: the request against the catalogue (fields, control, OAuth), the answer against the response model;
- ``orders``: which order an exchange belongs to (one archive per order);
- ``exchange``: one exchange as the proxy saw it, and its line;
- ``recording``: an order's recorder, and the ``Exchange`` record of each exchange it keeps;
- ``server``: ``ProxyServer``, which checks, forwards, prints one line per exchange and records.

As a network service, below the server:

- ``limits``: what it allows its clients and the gateway (``Limits``: deadlines, connections, sizes);
- ``listener``: the loopback socket, a bounded number of connections, a deadline for each request;
- ``framing``: requests read as RFC 9112 frames them (a path for a target; no request inside another);
- ``reply``: the answer written to the client, whole or as it comes;
- ``refusals``: what the proxy answers itself, in the gateway's form on the gateway's paths;
- ``upstream`` and ``deadline``: the way to the gateway, ``--timeout`` over the whole exchange;
- ``bodies``: the bounded part of an answer that is checked and recorded, and its true size.
"""

from toolkit.proxy.checks import Check, Keys
from toolkit.proxy.limits import Limits
from toolkit.proxy.server import ProxyServer, started_line

__all__ = ["Check", "Keys", "Limits", "ProxyServer", "started_line"]
