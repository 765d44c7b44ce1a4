"""Where callbacks may go (issue 9, item 7): no SSRF, no port scanning, a masked delivery log.

Loopback (the merchant's test receiver) and the configured ``callback_hosts`` only; the gateway's
ports 80/8080/443/8443 for configured hosts; never the simulator itself; no redirects followed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.simcontrol import SimulatorControl
from toolkit.simulator import SimulatorServer
from toolkit.simulator.destinations import Destinations
from toolkit.simulator.settings import default_settings
from toolkit.testdata import sale_fields

PAN = "4538977399606732"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("{root}/_sim/journal", "port {port} is the simulator's own"),
        ("http://localhost:{port}/_sim/callbacks", "port {port} is the simulator's own"),
        ("http://2130706433:{port}/", "host 2130706433 is not loopback and not in callback_hosts"),
        ("http://0x7f.1:{port}/", "host 0x7f.1 is not loopback"),
        ("http://example.com@127.0.0.1:{port}/", "must not carry a user name or password"),
        ("http://10.0.0.7:8080/", "host 10.0.0.7 is not loopback"),
        ("http://169.254.169.254/latest/meta-data/", "host 169.254.169.254 is not loopback"),
        ("http://127.0.0.1:99999/", "is not a URL with a valid port"),
    ],
    ids=["own journal", "own port by name", "decimal ip", "hex ip", "userinfo", "private net", "metadata", "bad port"],
)
def test_a_callback_url_the_simulator_must_not_call_is_refused(server: SimulatorServer, client, url, message):
    filled = url.format(root=server.root_url, port=server.port)
    with pytest.raises(ValidationError) as refused:
        client.sale(sale_fields(server_callback_url=filled))
    assert f"server_callback_url: {message.format(port=server.port)}" in str(refused.value)


@pytest.fixture(scope="module")
def allowing() -> Iterator[SimulatorServer]:
    settings = default_settings(callback_hosts=("hooks.example", "lan.example:9000"))
    with SimulatorServer(settings) as running:
        yield running


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("http://hooks.example:8080/cb", True),
        ("https://hooks.example/cb", True),
        ("http://hooks.example:9000/cb", False),
        ("http://lan.example:9000/cb", True),
        ("http://lan.example/cb", False),
        ("http://other.example:8080/cb", False),
    ],
)
def test_configured_hosts_follow_the_gateways_port_rule(allowing: SimulatorServer, url, accepted):
    with allowing.control() as control, GatewayClient(allowing.client_config()) as client:
        control.add_fault("callback", "fail", count=10)  # nothing leaves this machine
        if accepted:
            assert client.sale(sale_fields(server_callback_url=url)).orderid
        else:
            with pytest.raises(ValidationError, match=r"server_callback_url: (port|host)"):
                client.sale(sale_fields(server_callback_url=url))


def test_the_delivery_log_is_masked(client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver):
    url = f"{receiver.callback_url}?pan={PAN}&cvv2=987&card_cvv=4321"
    ack = client.sale(sale_fields(server_callback_url=url))
    deliveries = control.wait_for_callbacks(ack.orderid, attempts=1)
    shown = str(deliveries)  # its timestamps may hold any digits (1795432198 holds 4321): look for the values as sent
    assert PAN not in shown and "cvv2=987" not in shown and "card_cvv=4321" not in shown
    assert "card_cvv=***" in deliveries[0]["url"]
    assert "pan=453897******6732" in deliveries[0]["url"] and "cvv2=***" in deliveries[0]["url"]
    assert deliveries[0]["attempts"][0]["http_status"] == 200  # the receiver got the real address


def test_the_delivery_worker_checks_the_address_again():
    """A callback stored before the rules changed (a --db file, other settings) is refused, not sent."""
    destinations = Destinations(default_settings())
    assert destinations.problem("http://127.0.0.1:9/") is None
    destinations.own_ports.add(9)
    assert destinations.problem("http://127.0.0.1:9/") == (
        "port 9 is the simulator's own: a callback to the simulator is refused"
    )
    assert destinations.problem("http://[::1]:9000/") is None
    assert "not loopback" in (destinations.problem("http://127.1:9000/") or "")
