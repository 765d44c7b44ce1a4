"""The fixtures of gatekit's pytest plugin: what a merchant's own tests (and the suite's steps) ask for.

===========================  ========  ==================================================================
fixture                      scope     what
===========================  ========  ==================================================================
``gateway_target``           session   the gateway under test (``--gateway-profile``) and the receiver
``gateway_config``           session   its ``GatewayConfig`` (the embedded simulator's URL filled in)
``gateway_client``           test      a ``GatewayClient`` on the profile; exchanges go to Allure
``gateway_simulator``        test      the embedded ``SimulatorServer``, reset before the test
``simulator_control``        test      its ``SimulatorControl`` (clock, settlement, faults, journal)
``callback_receiver``        test      the ``CallbackReceiver`` the gateway calls back, emptied first
``merchant``                 test      ``toolkit.flows.Merchant``: the merchant's side of every flow
``payer``                    test      ``toolkit.payer.Payer``: the cardholder's browser over HTTP
``browser_payer``            test      ``BrowserPayer``: headless Chromium (``gatekit[browser]``)
``hosted_fields_simulator``  test      ``HostedFieldsGateway``: the simulator's SDK_URL, API_URL, keys
``hosted_fields_payer``      test      ``BrowserPayer`` that types into the Hosted Fields iframes
===========================  ========  ==================================================================

The simulator is started once per session, on a free loopback port, when the profile is
``simulator`` (the default).  On a sandbox profile the simulator fixtures skip the test with
the reason, like ``@simulator`` scenarios.

A merchant whose checkout page embeds the gateway's Hosted Fields SDK starts its app with
``hosted_fields_simulator``'s settings (``SDK_URL``, ``API_URL``, endpoint, login, keys) and pays on its page
with ``hosted_fields_payer`` (``open_checkout(url)``, ``fill_hosted_fields(card)``, ``answer_challenge()``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from toolkit.certify.plugin import profile_option

if TYPE_CHECKING:  # imported by the fixtures when they run: the xdist controller, which runs none, never loads them
    from toolkit.callbacks import CallbackReceiver
    from toolkit.certify.target import GatewayTarget
    from toolkit.client import GatewayClient
    from toolkit.config import GatewayConfig
    from toolkit.exchange import Exchange
    from toolkit.flows import Merchant
    from toolkit.hosted_fields import HostedFieldsGateway
    from toolkit.payer import Payer
    from toolkit.payer.browser import BrowserPayer
    from toolkit.recording import Recorder, RecordingRun
    from toolkit.simcontrol import SimulatorControl
    from toolkit.simulator.server import SimulatorServer


@pytest.fixture(scope="session")
def gateway_target(request: pytest.FixtureRequest) -> Iterator[GatewayTarget]:
    from toolkit.certify.target import start_target

    name, file = profile_option(request.config)
    target = start_target(name, config_file=file, lenient=request.config.getoption("--simulator-lenient"))
    try:
        yield target
    finally:
        target.stop()


@pytest.fixture(scope="session")
def gateway_config(gateway_target: GatewayTarget) -> GatewayConfig:
    return gateway_target.config


@pytest.fixture(scope="session")
def gateway_recording(request: pytest.FixtureRequest, gateway_target: GatewayTarget) -> RecordingRun | None:
    """The run's recordings (``--gateway-record DIR``), or None: one HAR per scenario and ``index.json``."""
    folder = request.config.getoption("--gateway-record")
    if not folder:
        return None
    from toolkit.recording import RecordingRun

    worker = getattr(request.config, "workerinput", {}).get("workerid", "")
    base = "embedded simulator" if gateway_target.is_simulator else gateway_target.config.base_url
    simulator = gateway_target.simulator_summary() if gateway_target.is_simulator else None
    return RecordingRun(Path(folder), profile=gateway_target.profile, base_url=base, simulator=simulator, part=worker)


@pytest.fixture(autouse=True)
def gateway_recorder(request: pytest.FixtureRequest) -> Iterator[Recorder | None]:
    """The scenario's recorder with ``--gateway-record`` (None without): the fixtures' clients and payers and
    the callback receiver feed it; when the scenario ends its HAR is written and attached to the Allure result
    (``toolkit.certify.plugin.pytest_runtest_call``)."""
    if not request.config.getoption("--gateway-record"):
        yield None
        return
    from datetime import UTC, datetime

    from toolkit.certify.plugin import RECORDING
    from toolkit.recording import Recorder

    run: RecordingRun = request.getfixturevalue("gateway_recording")
    target: GatewayTarget = request.getfixturevalue("gateway_target")
    recorder, receiver = Recorder(), target.receiver
    receiver.observers.append(recorder)
    request.node.stash[RECORDING] = (run, recorder, datetime.now(UTC).isoformat(timespec="milliseconds"))
    try:
        yield recorder
    finally:
        receiver.observers.remove(recorder)


@pytest.fixture
def exchange_observer() -> Callable[[Exchange], None]:
    """Where each HTTP exchange of the fixtures' clients goes: a masked Allure step."""
    from toolkit.certify import reporting

    return reporting.attach_exchange


@pytest.fixture
def gateway_client(
    gateway_target: GatewayTarget, exchange_observer: Callable[[Exchange], None], gateway_recorder: Recorder | None
) -> Iterator[GatewayClient]:
    from toolkit.client import GatewayClient

    observers: list[Callable[[Exchange], None]] = [exchange_observer]
    if gateway_recorder is not None:  # (a recorder is an observer like any other)
        observers.append(gateway_recorder)
    client = GatewayClient(gateway_target.config, observers=observers)
    yield client
    client.close()


def _simulator_of(target: GatewayTarget) -> SimulatorServer:
    if target.server is None:
        pytest.skip(f"needs the simulator's control API; profile {target.profile} is a sandbox")
    return target.server


@pytest.fixture
def gateway_simulator(gateway_target: GatewayTarget) -> SimulatorServer:
    """The session's simulator, reset (no transactions, balances as configured, clock at now)."""
    server = _simulator_of(gateway_target)
    gateway_target.control.reset()
    return server


@pytest.fixture
def simulator_control(gateway_simulator: SimulatorServer, gateway_target: GatewayTarget) -> SimulatorControl:
    return gateway_target.control


@pytest.fixture
def callback_receiver(gateway_target: GatewayTarget) -> CallbackReceiver:
    gateway_target.receiver.clear()
    return gateway_target.receiver


@pytest.fixture
def merchant(gateway_client: GatewayClient, gateway_target: GatewayTarget) -> Merchant:
    """Orders carry the receiver's callback URL (when the gateway can reach it); polls are Allure steps."""
    from toolkit.certify import reporting
    from toolkit.flows import Merchant

    return Merchant(
        gateway_client, gateway_target.receiver, callback_url=gateway_target.callback_url, on_poll=reporting.record_poll
    )


@pytest.fixture
def payer(gateway_target: GatewayTarget, gateway_recorder: Recorder | None) -> Iterator[Payer]:
    """Every request of the payer's browser goes to Allure as a masked step, and a page it cannot read too.

    It reads the profile's ``[profiles.NAME.payer]`` and knows where the merchant receives it (the receiver)."""
    from toolkit.certify import reporting
    from toolkit.payer import Payer

    browser = Payer(
        observers=[reporting.attach_page_visit, *([gateway_recorder] if gateway_recorder is not None else [])],
        settings=gateway_target.payer,
        merchant_urls=[gateway_target.receiver.redirect_url],
        lost_observers=[reporting.attach_lost_page],
    )
    yield browser
    browser.session.close()


@pytest.fixture
def browser_payer(gateway_target: GatewayTarget, gateway_recorder: Recorder | None) -> Iterator[BrowserPayer]:
    """A fresh headless Chromium per test; needs ``pip install 'gatekit[browser]'`` and Chromium.

    Each page it reaches is screenshot into the Allure step (before the payer types anything).
    """
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.fail("browser_payer needs Selenium: pip install 'gatekit[browser]'", pytrace=False)
    from toolkit.certify import reporting
    from toolkit.payer.browser import BrowserPayer

    with BrowserPayer(
        observers=[reporting.attach_screenshot],
        settings=gateway_target.payer,
        merchant_urls=[gateway_target.receiver.redirect_url],
        lost_observers=[reporting.attach_lost_page],
        recorder=gateway_recorder,
        visit_observers=[reporting.attach_page_visit],
    ) as browser:
        reporting.before_diagram(browser.collect_visits)  # the last hops (back to the merchant) submit themselves
        yield browser


@pytest.fixture
def hosted_fields_simulator(gateway_simulator: SimulatorServer) -> HostedFieldsGateway:
    """The simulator (reset) as a Hosted Fields merchant's app is configured with it: ``sdk_url`` (``SDK_URL``, on the
    simulator's own origin), ``api_url`` (``API_URL``), ``endpoint_id``, ``login``, ``control_key``,
    ``private_key_pem`` (the demo merchant's), ``content_security_policy`` for the checkout page, ``environment()``
    (the examples' variable names)."""
    from toolkit.hosted_fields import HostedFieldsGateway

    return HostedFieldsGateway.from_simulator(gateway_simulator)


@pytest.fixture
def hosted_fields_payer(browser_payer: BrowserPayer) -> BrowserPayer:
    """``browser_payer`` on a merchant's Hosted Fields checkout: ``open_checkout(url)`` waits for the gateway's card
    iframes, ``fill_hosted_fields(card)`` types into them and presses the page's Pay button, ``answer_challenge()``
    passes 3-D Secure when the page sends the payer there.  Add the merchant's ``redirect_url`` to its
    ``merchant_urls`` for the report to draw the way back as the merchant's."""
    return browser_payer
