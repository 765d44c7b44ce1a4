"""Fixtures shared by the unit tests: a recording server on a loopback socket, a client, a clean environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.recording_server import RecordingServer
from toolkit.client import GatewayClient
from toolkit.config import GatewayConfig, simulator_config

# A merchant's repository in miniature, run as a pytest session of its own by test_merchant_project.py;
# a suite that fails on purpose, run by test_certify_report.py (and scripts/report_screenshots.py).
collect_ignore = ["merchant_project", "failing_suite"]
pytest_plugins = ["tests.xdist_groups", "tests.unique_ids"]


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as running:
        yield running


@pytest.fixture
def config(server: RecordingServer) -> GatewayConfig:
    """The demo merchant (control key, RSA key) pointed at the recording server."""
    return simulator_config(server.base_url)


@pytest.fixture
def client(config: GatewayConfig) -> Iterator[GatewayClient]:
    with GatewayClient(config) as gateway:
        yield gateway


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No GATEWAY_*/GATEKIT_* variables and no gatekit.toml in the working directory."""
    for name in list(os.environ):
        if name.startswith(("GATEWAY_", "GATEKIT_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path
