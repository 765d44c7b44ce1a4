"""One simulator per test module (demo merchant, strict by default; a lenient one where a module asks for it), and
hand-built request helpers for it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from tests.wire.gateway import Gateway
from tests.wire.orders import Orders
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import default_settings


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


@pytest.fixture(scope="module")
def lenient() -> Iterator[SimulatorServer]:
    with SimulatorServer(dataclasses.replace(default_settings(), lenient=True)) as running:
        yield running


@pytest.fixture(scope="module")
def lenient_orders(lenient: SimulatorServer) -> Iterator[Orders]:
    sender = Gateway(lenient.base_url)
    yield Orders(sender)
    sender.close()
