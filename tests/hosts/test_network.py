"""The hosts of tests/hosts/network.py: reachable from one another, nothing beyond them, removed whatever happens."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
from collections.abc import Iterator

import pytest

from tests.hosts import network as hosts

pytestmark = pytest.mark.xdist_group("hosts")


def test_without_root_the_reason_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert hosts.skip_reason() == "needs root: network namespaces (ip netns add) and veth pairs are made by root"


@pytest.fixture
def network() -> Iterator[hosts.Network]:
    if reason := hosts.skip_reason():
        pytest.skip(reason)
    made = hosts.Network.create({"one": 31, "two": 32})
    yield made
    made.remove()


def namespaces() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout


def test_hosts_reach_one_another_on_their_addresses_and_nothing_else(network: hosts.Network) -> None:
    one, two = network["one"], network["two"]
    with two.entered(), socket.socket() as server:
        server.bind((two.address, 0))
        server.listen()
        port = server.getsockname()[1]
        with one.entered(), socket.create_connection((two.address, port), timeout=5) as client:
            assert client.getsockname()[0] == one.address
        for outside in ("192.0.2.1", "10.213.41.1"):  # (TEST-NET-1; a neighbouring network)
            with one.entered(), socket.socket() as probe, pytest.raises(OSError) as refused:
                probe.connect((outside, 80))
            assert refused.value.errno == errno.ENETUNREACH
    routes = subprocess.run(["ip", "-n", one.namespace, "route"], capture_output=True, text=True, check=True).stdout
    assert "default" not in routes and f"{hosts.SUBNET}.0/24" in routes


def test_removing_the_network_kills_what_runs_there_and_deletes_every_namespace(network: hosts.Network) -> None:
    sleeper = subprocess.Popen([*network["one"].wrap, "sleep", "600"])
    network.remove()
    assert sleeper.wait(timeout=10) != 0
    assert network.run not in namespaces()


def test_a_dead_run_s_namespaces_are_removed_by_the_next() -> None:
    if reason := hosts.skip_reason():
        pytest.skip(reason)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = f"{hosts.PREFIX}{dead.pid}-1-db"
    hosts.ip("netns", "add", stale)
    made = hosts.Network.create({"one": 31})
    made.remove()
    assert stale not in namespaces()
