"""The pytest plugin of the certification suite (loaded by the root ``conftest.py``).

Options: ``--gateway-profile NAME`` (default ``simulator``: the embedded simulator on a free port)
and ``--gateway-config FILE`` (profiles TOML).  Scenarios tagged ``@simulator`` need the control
API and are skipped on a sandbox; ``@callbacks`` ones are skipped when the gateway cannot reach
this machine.  Gherkin steps, HTTP exchanges, polls and callbacks become Allure steps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import allure
import pytest

from toolkit.certify import reporting
from toolkit.certify.target import GatewayTarget, embeds_simulator, no_callbacks_reason, start_target
from toolkit.client import GatewayClient
from toolkit.config import load_config
from toolkit.operations import OPERATIONS

# Gherkin tags in use: flows, kinds of scenario, and every catalogue operation.
FLOW_TAGS = ("threeds", "returns", "tokenization", "payouts", "preauth", "hosted_forms", "cards", "callbacks",
             "signing", "declines", "simulator", "exported", "chargebacks", "refusals", "strict")  # fmt: skip
_OPEN_STEPS = pytest.StashKey[list[Any]]()  # the Allure steps of the scenario's running Gherkin steps


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gatekit", "gatekit certification suite")
    group.addoption("--gateway-profile", default=None, help="profile to certify against (default: simulator)")
    group.addoption("--gateway-config", default=None, help="TOML file with named profiles")
    group.addoption(
        "--simulator-lenient",
        action="store_true",
        help="embed a lenient simulator: it forgives what the production gateway refuses (journal warnings)",
    )


def pytest_configure(config: pytest.Config) -> None:
    for tag in (*FLOW_TAGS, *OPERATIONS):
        config.addinivalue_line("markers", f"{tag}: gatekit scenario tag")


def _profile(config: pytest.Config) -> tuple[str, Path | None]:
    name = config.getoption("--gateway-profile") or "simulator"
    file = config.getoption("--gateway-config")
    return name, Path(file) if file else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--simulator-lenient"):
        reason = "the lenient simulator forgives this on purpose; the scenario needs the gateway's strict checks"
        for item in items:
            if item.get_closest_marker("strict"):
                item.add_marker(pytest.mark.skip(reason=reason))
    name, file = _profile(config)
    if not any(item.get_closest_marker("simulator") or item.get_closest_marker("callbacks") for item in items):
        return
    base = load_config(name, file=file)
    no_callbacks = no_callbacks_reason(base)
    for item in items:
        if item.get_closest_marker("simulator") and not embeds_simulator(base):
            item.add_marker(pytest.mark.skip(reason=f"needs the simulator's control API; profile {name} is a sandbox"))
        if item.get_closest_marker("callbacks") and no_callbacks:
            item.add_marker(pytest.mark.skip(reason=no_callbacks))


def pytest_sessionstart(session: pytest.Session) -> None:
    results = getattr(session.config.option, "allure_report_dir", None)
    if results:
        name, file = _profile(session.config)
        config = load_config(name, file=file)
        reporting.write_environment(Path(results), {
            "profile": name,
            "base_url": "embedded simulator on a free loopback port" if embeds_simulator(config) else config.base_url,
            "endpoint_id": config.endpoint_id or "",
            "endpoint_group_id": config.endpoint_group_id or "",
        })  # fmt: skip


@pytest.fixture(scope="session")
def gateway_target(request: pytest.FixtureRequest) -> Iterator[GatewayTarget]:
    name, file = _profile(request.config)
    target = start_target(name, config_file=file, lenient=request.config.getoption("--simulator-lenient"))
    try:
        yield target
    finally:
        target.stop()


@pytest.fixture
def exchange_observer() -> Callable[..., None]:
    return reporting.attach_exchange


@pytest.fixture
def gateway_client(gateway_target: GatewayTarget, exchange_observer: Callable[..., None]) -> Iterator[GatewayClient]:
    client = GatewayClient(gateway_target.config, observers=[exchange_observer])
    yield client
    client.close()


# --- pytest-bdd -> Allure ------------------------------------------------------------------------


def pytest_bdd_before_scenario(request: pytest.FixtureRequest, feature: Any, scenario: Any) -> None:
    tags = set(scenario.tags) | set(feature.tags)
    reporting.label_scenario(feature.name, scenario.name, tags)


def pytest_bdd_before_step(
    request: pytest.FixtureRequest, feature: Any, scenario: Any, step: Any, step_func: Any
) -> None:
    context: Any = allure.step(f"{step.keyword} {step.name}")
    context.__enter__()
    request.node.stash.setdefault(_OPEN_STEPS, []).append(context)


def _close_step(request: pytest.FixtureRequest, exc: BaseException | None) -> None:
    stack = request.node.stash.get(_OPEN_STEPS, [])
    if stack:
        stack.pop().__exit__(type(exc) if exc else None, exc, exc.__traceback__ if exc else None)


def pytest_bdd_after_step(request: pytest.FixtureRequest, *args: Any) -> None:
    _close_step(request, None)


def pytest_bdd_step_error(request: pytest.FixtureRequest, feature: Any, scenario: Any, step: Any, step_func: Any,
                          step_func_args: Any, exception: Exception) -> None:  # fmt: skip
    _close_step(request, exception)
