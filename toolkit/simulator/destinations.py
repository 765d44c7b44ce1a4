"""Where the simulator may send server callbacks: no request can make it fetch an arbitrary address.

A callback URL (``server_callback_url``, ``notify_url``) is accepted when

- it is plain ``http``/``https`` with a host and no user name or password (``http://a@b/`` hides ``b``);
- its host is loopback (``localhost``, ``127.0.0.0/8``, ``::1``: where the merchant's test receiver
  runs), any port but the simulator's own (a callback to ``/_sim/`` is refused);
- or its host is one of ``callback_hosts`` (``[simulator]`` setting, ``--callback-host``), on the
  gateway's ports 80, 8080, 443 or 8443, or on the port written in the entry (``hooks.lan:9000``).

Hosts are compared as written: an IP address only in its usual form (``2130706433``, ``0x7f.1`` or
``127.1`` are names, and unknown ones).  A refused URL is a validation error naming the rule; the
delivery worker checks again before each attempt.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import SplitResult, urlsplit

from starlette.requests import Request

from toolkit.simulator.rules.errors import field_error
from toolkit.simulator.settings import SimulatorSettings

CALLBACK_FIELDS = ("server_callback_url", "notify_url")
GATEWAY_PORTS = (80, 8080, 443, 8443)
LOOPBACK_NAMES = ("localhost", "localhost.")


class Destinations:
    """The allow-list of one simulator, and the ports it listens on (never a callback target)."""

    def __init__(self, settings: SimulatorSettings) -> None:
        self.hosts: dict[str, tuple[int, ...]] = {}
        for entry in settings.callback_hosts:
            host, port = _host_and_port(entry)
            self.hosts[host] = (*self.hosts.get(host, ()), port) if port else GATEWAY_PORTS
        self.own_ports: set[int] = set()

    def problem(self, url: str) -> str | None:
        """Why the simulator will not call ``url``, or None."""
        try:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return "is not a URL with a valid port"
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return "must be an absolute http(s) URL"
        if parts.username is not None or parts.password is not None:
            return "must not carry a user name or password (user@host)"
        return self._host_problem(parts, port)

    def _host_problem(self, parts: SplitResult, port: int) -> str | None:
        host = (parts.hostname or "").lower()
        if is_loopback(host):
            if port in self.own_ports:
                return f"port {port} is the simulator's own: a callback to the simulator is refused"
            return None
        allowed = self.hosts.get(host)
        if allowed is None:
            return (
                f"host {host} is not loopback and not in callback_hosts "
                "(add it with --callback-host or [simulator] callback_hosts)"
            )
        if port not in allowed:
            ports = ", ".join(str(p) for p in allowed)
            return f"port {port} is not allowed for {host}: the gateway calls back on ports {ports} only"
        return None


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_and_port(entry: str) -> tuple[str, int | None]:
    parts = urlsplit("//" + entry)
    return (parts.hostname or entry).lower(), parts.port


def of(request: Request) -> Destinations:
    destinations: Destinations = request.app.state.destinations
    return destinations


def check_fields(request: Request, fields: Mapping[str, str]) -> None:
    """A validation error naming the field and the rule when a callback URL is not allowed."""
    destinations = of(request)
    server = request.scope.get("server")
    if server and server[1]:
        destinations.own_ports.add(int(server[1]))
    for name in CALLBACK_FIELDS:
        url = fields.get(name)
        if url and (problem := destinations.problem(url)):
            raise field_error(f"{name}: {problem}")
