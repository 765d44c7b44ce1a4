"""A simulator for a whole team (issue 21): ``gatekit simulate --workers N`` on one store, as users start it.

N processes accept on one port and share one SQLite file (a temporary one without ``--db``).  Requests sent on
keep-alive connections that the test knows land on different processes (``/_sim/health`` names the process
that answers) show that everything that must be one is one: orders and money rules, the clock, fault plans,
OAuth nonces, the callback queue (each callback delivered once while no worker dies; at least once when one does),
and that a worker killed with ``kill -9`` under load loses no acknowledged order while another process takes the
scheduler's lease over.
"""

from __future__ import annotations

import os
import random
import signal
import string
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import suite_passes
from tests.postgres import postgres  # noqa: F401  (the session's cluster)
from tests.simulator.rules.test_ledger import (
    CONCURRENT_STEPS,
    EXAMPLES,
    HOUR,
    STEPS,
    Step,
    all_at_once,
    assert_true,
    run_step,
)
from tests.simulator.workers import Workers, start_workers
from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.errors import AuthenticationError, GatewayError, TransportError
from toolkit.models import Status
from toolkit.testdata import payout_fields, preauth_fields, sale_fields

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("workers")]


STORES = [(2, "sqlite"), (4, "sqlite"), (2, "postgres"), (4, "postgres")]


def database(request: pytest.FixtureRequest, store: str) -> list[str]:
    """``--db`` for ``store``: a database of the session's throwaway PostgreSQL cluster, or nothing (SQLite)."""
    return ["--db", request.getfixturevalue("postgres").new_database()] if store == "postgres" else []


@pytest.fixture(scope="module", params=STORES, ids=[f"{n} workers on {store}" for n, store in STORES])
def workers(request: pytest.FixtureRequest) -> Iterator[Workers]:
    count, store = request.param
    running = start_workers(count, "--latency", str(HOUR), *database(request, store))
    yield running
    running.stop()


def test_every_worker_answers_and_one_holds_the_scheduler_lease(workers: Workers) -> None:
    sessions = workers.health_by_process(len(workers.pids))
    holders = [s.get(f"{workers.root_url}/_sim/health", timeout=10).json()["scheduler"] for s in sessions.values()]
    assert sorted(holders) == [False] * (len(holders) - 1) + [True]
    assert {int(name.split(":")[1]) for name in sessions} == set(workers.pids)


def test_an_order_made_on_one_worker_is_followed_up_on_another(workers: Workers) -> None:
    first, second = list(workers.health_by_process(2).values())
    with GatewayClient(workers.client_config(), session=first) as one, \
            GatewayClient(workers.client_config(), session=second) as other, workers.control() as control:  # fmt: skip
        order = one.preauth(preauth_fields(amount=Decimal("50.00")))
        control.force_status(order.orderid, "approved")
        assert other.status({"client_orderid": order.client_orderid, "orderid": order.orderid}).status is (
            Status.APPROVED
        )
        capture = other.capture({"client_orderid": order.client_orderid, "orderid": order.orderid},
                                amount=Decimal("20.00"), currency="EUR")  # fmt: skip
        assert capture.orderid == order.orderid


def test_money_rules_hold_when_follow_ups_of_one_order_hit_every_worker_at_once(workers: Workers) -> None:
    """Captures, returns, voids, chargebacks and decisions of the same orders from 24 clients at once, each on
    a connection of its own (spread over the workers by the kernel): every ledger stays true."""
    with GatewayClient(workers.client_config()) as client, workers.control() as control:
        orders = []
        for _ in range(4):
            order = client.preauth(preauth_fields(amount=Decimal("100.00")))
            control.force_status(order.orderid, "approved")
            orders.append(order)
        for round_ in range(2):
            for order in orders:
                all_at_once(workers, order, CONCURRENT_STEPS)  # type: ignore[arg-type]
                assert_true(control, order.orderid, [f"round {round_}"])
        control.advance_clock(HOUR + 1)
        for order in orders:
            assert_true(control, order.orderid, ["every decision made"])


@settings(max_examples=max(5, EXAMPLES // 4), deadline=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(["preauth", "sale"]), steps=st.lists(st.tuples(STEPS, st.integers(0, 3)), min_size=1,
                                                                 max_size=10))  # fmt: skip
def test_any_sequence_of_follow_ups_spread_over_the_workers_keeps_the_ledger_true(
    workers: Workers, kind: str, steps: list[tuple[Step, int]]
) -> None:
    """test_ledger's property, each step sent through a worker the example chooses."""
    sessions = list(workers.health_by_process(len(workers.pids)).values())
    clients = [GatewayClient(workers.client_config(), session=session) for session in sessions]
    controls = [workers.control(session=session) for session in sessions]
    build = preauth_fields if kind == "preauth" else sale_fields
    order = clients[0].call(kind, build(amount=Decimal("100.00")))
    controls[-1].force_status(order.orderid, "approved")
    history = [f"{kind} 100.00 approved"]
    for step, which in steps:
        index = which % len(sessions)
        history.append(f"worker {index}: {run_step(clients[index], controls[index], order, step)}")
        assert_true(controls[(index + 1) % len(sessions)], order.orderid, history)
    controls[0].advance_clock(HOUR + 1)
    assert_true(controls[-1], order.orderid, [*history, "every decision made"])


def test_the_clock_and_a_fault_plan_set_through_one_worker_apply_on_every_worker(workers: Workers) -> None:
    sessions = workers.health_by_process(len(workers.pids))
    with workers.control(session=next(iter(sessions.values()))) as control:
        before = [s.get(f"{workers.root_url}/_sim/health", timeout=10).json()["now"] for s in sessions.values()]
        control.advance_clock(86_400)
        after = [s.get(f"{workers.root_url}/_sim/health", timeout=10).json()["now"] for s in sessions.values()]
        assert all(later - earlier >= 86_400 for earlier, later in zip(before, after, strict=True)), (before, after)
        control.add_fault("status", "error", count=len(sessions))
        failed = 0
        for session in sessions.values():  # one status on each worker: each takes one of the planned faults
            with GatewayClient(workers.client_config(), session=session) as client:
                try:
                    client.status({"client_orderid": "nobody", "orderid": "1"})
                except GatewayError as error:
                    failed += "injected fault" in str(error)
        assert failed == len(sessions)
        assert control.faults() == []


def test_a_nonce_replayed_on_another_worker_is_refused(workers: Workers) -> None:
    first, second = list(workers.health_by_process(2).values())
    nonce = "team-" + "".join(random.choices(string.ascii_letters, k=20))  # (no digits: nothing masking could take)
    with GatewayClient(workers.client_config(), session=first, nonce=lambda: nonce) as one:
        assert one.payout(payout_fields()).orderid
    with GatewayClient(workers.client_config(), session=second, nonce=lambda: nonce) as other, \
            pytest.raises(AuthenticationError, match=f"oauth_nonce {nonce} already used"):  # fmt: skip
        other.payout(payout_fields())


def test_every_callback_is_delivered_once_while_no_worker_dies(workers: Workers) -> None:
    """Forty sales decided at once by the control API, through every worker: one delivery each, whichever
    worker holds the lease (a worker killed between sending and logging makes it at least once: README)."""
    sessions = list(workers.health_by_process(len(workers.pids)).values())
    demo_key = workers.client_config().control_key
    with CallbackReceiver(demo_key) as receiver, workers.control() as control:
        orders = []
        for index in range(40):
            with GatewayClient(workers.client_config(), session=sessions[index % len(sessions)]) as client:
                orders.append(client.sale(sale_fields(server_callback_url=receiver.callback_url)))
        for order in orders:
            control.force_status(order.orderid, "approved")
        for order in orders:
            receiver.wait_for_callback(orderid=order.orderid, timeout=20)
        for order in orders:  # every row delivered, after one attempt: nothing is left that could be sent again
            deliveries = control.wait_for_callbacks(order.orderid, attempts=1, timeout=20)
            assert [(d["state"], d["tries"], len(d["attempts"])) for d in deliveries] == [("delivered", 1, 1)]
        counts = {order.orderid: len(receiver.callbacks(orderid=order.orderid)) for order in orders}
        assert set(counts.values()) == {1}, counts


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_a_worker_killed_under_load_loses_no_acknowledged_order_and_its_lease_is_taken_over(
    request: pytest.FixtureRequest, store: str
) -> None:
    running = start_workers(2, *database(request, store))
    try:
        holder = next(name for name, session in running.health_by_process(2).items()
                      if session.get(f"{running.root_url}/_sim/health", timeout=10).json()["scheduler"])  # fmt: skip
        acknowledged: list[tuple[str, str]] = []
        failures: list[str] = []
        stop = threading.Event()

        def load() -> None:
            while not stop.is_set():
                try:  # a new connection each time: the kernel spreads them over the workers
                    with GatewayClient(running.client_config()) as client:
                        order = client.sale(sale_fields())
                    acknowledged.append((order.client_orderid, order.orderid))
                except (TransportError, requests.RequestException) as exc:  # the killed worker's connections
                    failures.append(type(exc).__name__)

        threads = [threading.Thread(target=load) for _ in range(4)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 30
        while len(acknowledged) < 100 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(int(holder.split(":")[1]), signal.SIGKILL)
        seen = len(acknowledged)
        while len(acknowledged) < seen + 100 and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.set()
        for thread in threads:
            thread.join()
        assert len(acknowledged) >= seen + 100, f"the load stopped after the kill: {len(acknowledged)}, {failures}"
        with GatewayClient(running.client_config()) as client:
            for client_orderid, orderid in acknowledged:
                assert client.status({"client_orderid": client_orderid, "orderid": orderid}).orderid == orderid
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:  # the other worker takes the lease over at once (the holder is gone)
            holders = [s.get(f"{running.root_url}/_sim/health", timeout=10).json()
                       for s in running.health_by_process(2).values()]  # fmt: skip
            if any(h["scheduler"] for h in holders):
                break
            time.sleep(0.1)
        assert any(h["scheduler"] and h["process"] != holder for h in holders), holders
    finally:
        output = running.stop()
    assert f"(pid {holder.split(':')[1]}) ended (killed by signal 9); started again" in output, output


@pytest.mark.parametrize("store", ["postgres"])
def test_the_certification_suite_passes_against_two_workers(
    request: pytest.FixtureRequest, store: str, tmp_path: Path
) -> None:
    """``gatekit certify`` with a profile based on the simulator that points at the team's simulator: every
    scenario runs, the @simulator ones through its control API (the clock, faults, forced statuses)."""
    running = start_workers(2, "--latency", "0.1", *database(request, store))
    try:
        (tmp_path / "gatekit.toml").write_text(
            f'[profiles.team]\nbase = "simulator"\nbase_url = "{running.base_url}"\n'
        )
        env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
        command = [sys.executable, "-m", "toolkit.cli", "certify", "--profile", "team", "--no-html", "--in-flight", "3",
                   *suite_passes.certify_tags(suite_passes.TEAM_TAGS)]  # fmt: skip
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
    finally:
        running.stop()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    junit = ET.parse(tmp_path / "reports" / "junit.xml").getroot().find("testsuite")
    assert junit is not None and int(junit.get("tests", "0")) >= (80 if suite_passes.FULL else 20)
    assert (junit.get("failures"), junit.get("errors"), junit.get("skipped")) == ("0", "0", "0"), done.stdout[-3000:]


def test_a_second_team_simulator_on_the_same_port_is_refused_in_one_line() -> None:
    """SO_REUSEPORT would let a second ``--workers`` group bind the port beside the first, each with its own
    store, each answering half the connections: the second is refused instead."""
    first = start_workers(2)
    try:
        port = first.base_url.rsplit(":", 1)[1].split("/", 1)[0]
        command = [sys.executable, "-m", "toolkit.cli", "simulate", "--workers", "2", "--port", port]
        second = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    finally:
        first.stop()
    assert second.returncode == 2, second.stdout + second.stderr
    assert second.stderr.strip() == (
        f"gatekit simulate: cannot listen on 127.0.0.1:{port}: something answers there already (another gatekit "
        "simulate?)"
    )
