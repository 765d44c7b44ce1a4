"""The parts of a run side by side (``toolkit.certify.parallel``, ``toolkit.callbacks.front``): how many scenarios at
once, the longest first, and one forwarded port for the receivers of every worker."""

from __future__ import annotations

import dataclasses
import json
import socket
import subprocess
import sys

import pytest
import requests

from toolkit import demo
from toolkit.callbacks import CallbackReceiver
from toolkit.callbacks.front import CallbackFront, register, worker_path
from toolkit.certify import parallel
from toolkit.certify.options import IN_FLIGHT
from toolkit.config import ConfigError, load_config, simulator_config
from toolkit.signing import callback_control

SANDBOX = dataclasses.replace(simulator_config(), profile="standin", base_url="https://sandbox.example/paynet")


@pytest.mark.parametrize(
    ("asked", "embedded", "profile", "scenarios", "expected"),
    [
        (0, False, None, 80, IN_FLIGHT),  # a sandbox: side by side by default
        (0, False, 5, 80, 5),  # the profile's in_flight
        (2, False, 5, 80, 2),  # --in-flight wins
        (0, True, None, 80, 1),  # the embedded simulator: one process
        (4, True, None, 80, 4),  # unless -n asks
        (0, False, None, 3, 3),  # never more than there are scenarios
        (1, False, 8, 80, 1),  # --in-flight 1: one after another
    ],
)
def test_how_many_scenarios_run_at_once(asked, embedded, profile, scenarios, expected):
    config = dataclasses.replace(SANDBOX, in_flight=profile)
    assert parallel.in_flight(config, asked, embedded=embedded, scenarios=scenarios) == expected


@pytest.mark.parametrize("value", [0, 65, "4", True, 2.5])
def test_a_profile_s_in_flight_is_a_whole_number_in_range(tmp_path, value):
    (tmp_path / "gatekit.toml").write_text(f'[profiles.fast]\nbase = "simulator"\nin_flight = {json.dumps(value)}\n')
    with pytest.raises(ConfigError, match=r"profile fast: in_flight must be a whole number from 1 to 64"):
        load_config("fast", file=tmp_path / "gatekit.toml")


def test_the_flag_refuses_what_is_not_a_count(tmp_path):
    done = subprocess.run([sys.executable, "-m", "toolkit.cli", "certify", "--in-flight", "none"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2
    assert "argument --in-flight/-n/--workers: a whole number from 1 to 64, not 'none'" in done.stderr


def test_the_longest_start_first_and_unknown_ones_before_them(tmp_path):
    file = tmp_path / parallel.DURATIONS
    parallel.write_durations(file, "other", {"a": 9.0})
    parallel.write_durations(file, "standin", {"short": 0.5, "long": 9.2})
    parallel.write_durations(file, "standin", {"middle": 3.0})  # a later run adds to, and overrides, the earlier
    earlier = parallel.read_durations(file, "standin")
    assert earlier == {"short": 0.5, "long": 9.2, "middle": 3.0}
    assert parallel.read_durations(file, "other") == {"a": 9.0}

    names = ["short", "new-few-steps", "long", "new-browser", "middle", "new-many-steps"]
    steps = {"new-few-steps": 2, "new-many-steps": 9}
    ordered = sorted(
        names, key=lambda n: parallel.order_key(n, earlier, browser=n == "new-browser", steps=steps.get(n, 1))
    )
    assert ordered == ["new-browser", "new-many-steps", "new-few-steps", "long", "middle", "short"]


def test_an_unreadable_durations_file_orders_nothing(tmp_path):
    (tmp_path / parallel.DURATIONS).write_text("{not json")
    assert parallel.read_durations(tmp_path / parallel.DURATIONS, "standin") == {}
    parallel.write_durations(tmp_path / parallel.DURATIONS, "standin", {"a": 1.23456})
    assert parallel.read_durations(tmp_path / parallel.DURATIONS, "standin") == {"a": 1.235}


def _dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_front_hands_each_callback_to_its_worker_s_receiver(tmp_path):
    params = {"status": "approved", "orderid": "8056", "merchant_order": "gk-1", "client_orderid": "gk-1"}
    params["control"] = callback_control("approved", "8056", "gk-1", demo.CONTROL_KEY)
    with CallbackReceiver(demo.CONTROL_KEY) as gw0, CallbackReceiver(demo.CONTROL_KEY) as gw1:
        register(tmp_path, "gw0", gw0.port_number)
        register(tmp_path, "gw1", gw1.port_number)
        register(tmp_path, "gw9", _dead_port())
        gw1.fail_next(1, 503)
        with CallbackFront(tmp_path) as front:
            public = f"http://127.0.0.1:{front.port}"
            assert worker_path(public + "/", "gw1") == f"{public}/gw1"
            refused = requests.get(f"{public}/gw1/callback", params=params, timeout=10)
            taken = requests.get(f"{public}/gw1/callback", params=params, timeout=10)
            unknown = requests.get(f"{public}/gw7/callback", params=params, timeout=10)
            dead = requests.get(f"{public}/gw9/callback", params=params, timeout=10)
            sneaky = requests.get(f"{public}/..%2Fgw0/callback", params=params, timeout=10)

    assert (refused.status_code, taken.status_code) == (503, 200)  # the receiver's own answers, as the gateway sees
    assert unknown.status_code == 404 and "gw7" in unknown.text
    assert dead.status_code == 502 and sneaky.status_code == 404
    arrived = gw1.callbacks()
    assert [(c.orderid, c.status, c.control_ok) for c in arrived] == [("8056", "approved", True)] * 2
    assert gw0.callbacks() == []
