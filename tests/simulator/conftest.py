"""Fixtures of the simulator tests: one running simulator per module, clients for it, raw requests.

``server`` and ``client`` here replace the recording server and its client of ``tests/conftest.py``:
under ``tests/simulator`` they are the simulator on a loopback port and the demo merchant's client.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping

import pytest
import requests

from tests.postgres import postgres  # noqa: F401  (the session's cluster, when asked for)
from toolkit import demo, signing
from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.config import GatewayConfig
from toolkit.operations import get_operation
from toolkit.simcontrol import SimulatorControl
from toolkit.simulator import SimulatorServer
from toolkit.testdata import new_client_orderid
from toolkit.wire import FORM_TYPE, MEDIA_TYPE, encode_form

Post = Callable[..., requests.Response]


# "postgres" or "sqlite" (a file in a temporary folder): where the module's simulator keeps its state
STORE = os.environ.get("GATEKIT_TEST_STORE", "memory")
# In a run on the in-memory store, the gateway API's modules also run on PostgreSQL (their tests' ids end in
# [postgres]): ``make test``'s short pass of the API with its state in PostgreSQL (``make test-postgres``: all).
BOTH_STORES = (
    "tests/simulator/rules/test_api_payments.py",
    "tests/simulator/rules/test_api_followups.py",
    "tests/simulator/rules/test_hosted_fields.py",  # (its rows: storage.hosted_rows)
)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if STORE == "memory" and "server" in metafunc.fixturenames and metafunc.definition.nodeid.startswith(BOTH_STORES):
        metafunc.parametrize("server", ["memory", "postgres"], indirect=True, scope="module")


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest) -> Iterator[SimulatorServer]:
    """The simulator with the demo merchant and an in-memory store, shared by the tests of a module
    (``GATEKIT_TEST_STORE=postgres``: a database of a throwaway PostgreSQL cluster instead; ``sqlite``: a file)."""
    store = getattr(request, "param", STORE)
    if store == "postgres":
        db = request.getfixturevalue("postgres").new_database()
    elif store == "sqlite":
        db = str(request.getfixturevalue("tmp_path_factory").mktemp("store") / "simulator.db")
    else:
        db = ":memory:"
    with SimulatorServer(db=db) as running:
        yield running


@pytest.fixture(scope="module")
def config(server: SimulatorServer) -> GatewayConfig:
    return server.client_config()


@pytest.fixture(scope="module")
def client(config: GatewayConfig) -> Iterator[GatewayClient]:
    with GatewayClient(config) as gateway:
        yield gateway


@pytest.fixture(scope="module")
def unchecked(config: GatewayConfig) -> Iterator[GatewayClient]:
    """A client that sends what its own checks would refuse (``validate=False``), still signed."""
    with GatewayClient(config, validate=False) as gateway:
        yield gateway


@pytest.fixture
def control(server: SimulatorServer) -> Iterator[SimulatorControl]:
    """The simulator's control API (``/_sim/``), reset before each test: no orders, faults or callbacks."""
    with server.control() as running:
        running.reset()
        yield running


@pytest.fixture
def receiver() -> Iterator[CallbackReceiver]:
    """The merchant's back end on a loopback port: callbacks and redirects, ``control`` checked with the demo key."""
    with CallbackReceiver(demo.CONTROL_KEY) as running:
        yield running


@pytest.fixture
def fresh_id() -> Callable[[], str]:
    """A new client_orderid at every call (unique across tests, runs and xdist workers)."""
    return lambda: new_client_orderid("sim")


def _with_control(operation: str, fields: Mapping[str, str], path_id: str = demo.ENDPOINT_ID) -> dict[str, str]:
    op = get_operation(operation)
    control = signing.control_for(op, fields, endpoint_id=path_id, login=demo.LOGIN, control_key=demo.CONTROL_KEY)
    return {**fields, "control": control}


@pytest.fixture(scope="session")
def with_control() -> Callable[..., dict[str, str]]:
    """``with_control(operation, fields, path_id="1001")``: the fields plus the demo merchant's ``control``."""
    return _with_control


@pytest.fixture(scope="module")
def post(server: SimulatorServer) -> Iterator[Post]:
    """A raw POST to ``server.base_url + path``: bytes, str or fields as the body; Accept unless ``accept=False``."""
    session = requests.Session()

    def send(
        path: str,
        body: bytes | str | Mapping[str, str] = b"",
        *,
        accept: bool = True,
        headers: Mapping[str, str] | None = None,
    ) -> requests.Response:
        data = encode_form(body) if isinstance(body, Mapping) else body
        sent = {"Content-Type": FORM_TYPE, **({"Accept": MEDIA_TYPE} if accept else {}), **(headers or {})}
        return session.post(server.base_url + path, data=data, headers=sent, timeout=30)

    yield send
    session.close()
