"""How a host is written in a URL: the simulator's addresses, the callback and load receivers' addresses."""

from __future__ import annotations


def url_host(host: str) -> str:
    """``host`` as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host
