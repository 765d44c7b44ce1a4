"""One strict simulator per module; the libraries' transports in the legacy form and in JSON."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from tests.interop.transport import Transport, strip_all, strip_newline
from tests.wire.gateway import Gateway
from tests.wire.orders import Orders
from toolkit.simulator import SimulatorServer


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorServer]:
    with SimulatorServer() as running:
        yield running


@pytest.fixture(scope="module")
def session() -> Iterator[requests.Session]:
    with requests.Session() as opened:
        yield opened


@pytest.fixture(params=[pytest.param(False, id="legacy"), pytest.param(True, id="json")])
def json_mode(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def transport(session: requests.Session, json_mode: bool) -> Transport:
    """PHP and Ruby trim every value."""
    return Transport(session, json_mode=json_mode, strip=strip_all)


@pytest.fixture
def node_transport(session: requests.Session, json_mode: bool) -> Transport:
    """Node strips one trailing newline only."""
    return Transport(session, json_mode=json_mode, strip=strip_newline)


@pytest.fixture(scope="module")
def orders(simulator: SimulatorServer) -> Iterator[Orders]:
    """Hand-built orders (tests/wire) for the calls a library under test does not make itself."""
    gateway = Gateway(simulator.base_url)
    yield Orders(gateway)
    gateway.close()
