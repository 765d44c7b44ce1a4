"""One simulator per test module (demo merchant, strict by default), and hand-built request helpers for it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.wire.gateway import Gateway
from tests.wire.orders import Orders
from toolkit.simulator import SimulatorServer


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorServer]:
    with SimulatorServer() as running:
        yield running


@pytest.fixture(scope="module")
def gateway(simulator: SimulatorServer) -> Iterator[Gateway]:
    sender = Gateway(simulator.base_url)
    yield sender
    sender.close()


@pytest.fixture(scope="module")
def orders(gateway: Gateway) -> Orders:
    return Orders(gateway)
