"""Addresses of the simulator's pages, shared by the status renderer and the page routes.

``base`` is the simulator's public base URL as the client addressed it (``http://host:port/paynet``).
"""

from __future__ import annotations

PAGE_ROOT = "/paynet"


def form_url(base: str, token: str) -> str:
    """The hosted payment page of a form operation."""
    return f"{base}/form/{token}"


def method_url(base: str, token: str) -> str:
    """The 3-D Secure 2.x method URL the payer's browser loads in a hidden frame."""
    return f"{base}/3ds/v2/method/{token}"


def challenge_url(base: str, token: str) -> str:
    """The ACS challenge page of 3-D Secure 2.x."""
    return f"{base}/3ds/v2/acs/{token}"


def acs_v1_url(base: str, token: str) -> str:
    """The ACS page of 3-D Secure 1.0.2 (PaReq in, PaRes out)."""
    return f"{base}/3ds/v1/acs/{token}"


def return_url(base: str, token: str) -> str:
    """The gateway's own 3-D Secure address: the status html goes on to it after the method step, the ACS
    returns the payer to it (CRes, PaRes, the 1.0.2 ``TermUrl``), and it keeps the payer while the gateway
    decides (behaviour 12, gateway-run)."""
    return f"{base}/3ds/return/{token}"
