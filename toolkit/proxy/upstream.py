"""The proxy's way to the gateway: one ``requests`` session, HTTPS verified against the system's CA store.

``truststore`` makes Python's TLS use the operating system's certificates (Debian's ``ca-certificates``,
a company's own CA added there), as the merchant's other HTTP clients do, rather than the CA bundle
shipped with ``requests``.
"""

from __future__ import annotations

import ssl
from typing import Any

import requests
import truststore
from requests.adapters import HTTPAdapter

# Hop-by-hop headers (RFC 9110 section 7.6.1) and what ``requests`` sets itself: not forwarded either way.
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
     "transfer-encoding", "upgrade", "host", "content-length", "content-encoding", "accept-encoding"}
)  # fmt: skip


class SystemTrustAdapter(HTTPAdapter):
    """An adapter whose TLS connections trust the system's CA store."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["ssl_context"] = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        super().init_poolmanager(*args, **kwargs)


def upstream_session() -> requests.Session:
    session = requests.Session()
    session.mount("https://", SystemTrustAdapter())
    return session


def forwarded(headers: Any) -> dict[str, str]:
    """The end-to-end headers of a message, the hop-by-hop ones left out."""
    return {name: value for name, value in headers.items() if name.lower() not in HOP_BY_HOP}
