"""What this machine's network offers the tests."""

from __future__ import annotations

import functools
import socket


@functools.cache
def ipv6_loopback() -> bool:
    """An IPv6 socket can listen on ``::1`` here (a container without IPv6 has the API but not the address)."""
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True
