"""What ``gatekit simulate`` prints first: the base URL, the database, the settings that shape answers, and what
a client needs to know of each merchant (the documented demo merchant's control key only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.simulator.settings import Merchant, SimulatorSettings


def describe_lines(settings: SimulatorSettings, host: str, port: int, database: str) -> list[str]:
    from toolkit.simulator.server import root_url

    base = f"{root_url(host, port)}/paynet"
    lines = [
        f"simulator: {base}",
        f"openapi: {base}/openapi.json",
        f"database: {database}",
        f"latency: {settings.latency:g} s",
        "checks: "
        + (
            "lenient (forgives what the production gateway refuses; the journal warns)"
            if settings.lenient
            else "strict, as the production gateway (--lenient forgives, with journal warnings)"
        ),
        f"limits: bodies up to {settings.max_body_bytes} bytes, {settings.request_timeout:g} s to send a request",
        "control API: " + ("/_sim/ with the control token" if settings.control_token else "/_sim/ (loopback only)"),
    ]
    if settings.public_url:
        lines.insert(1, f"public url: {settings.public_url}")
    for merchant in settings.merchants:
        lines.extend(merchant_lines(merchant))
    lines.append("stop: Ctrl-C or SIGTERM")
    return lines


def merchant_lines(merchant: Merchant) -> list[str]:
    from toolkit import demo

    is_demo = merchant.login == demo.LOGIN and merchant.control_key.reveal() == demo.CONTROL_KEY
    lines = [
        f"merchant: {merchant.login}" + (" (the documented demo merchant; never for production)" if is_demo else ""),
        f"  login: {merchant.login}",
        f"  endpoint ids: {', '.join(merchant.endpoint_ids)}",
        f"  endpoint group ids: {', '.join(merchant.endpoint_group_ids) or '-'}",
        f"  payout balance: {merchant.payout_balance} {merchant.currency}",
    ]
    if merchant.lenient is not None:
        lines.append(f"  checks: {'lenient' if merchant.lenient else 'strict'} (this merchant's own setting)")
    if is_demo:  # the one control key that may be printed: it is published in toolkit/demo.py
        lines.append(f"  control key: {merchant.control_key.reveal()}")
        lines.append("  rsa key pair: toolkit/data/demo-private-pkcs8.pem, toolkit/data/demo-public.pem")
    else:
        lines.append("  control key: as in the settings file (not printed)")
    return lines
