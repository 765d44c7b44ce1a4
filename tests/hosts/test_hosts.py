"""The team simulator across hosts: PostgreSQL on one host, ``gatekit simulate --workers 2`` on two others, Locust's
master and worker on two more, each bound to its own address in its own network namespace (tests/hosts/team.py
draws the deployment).  The test's merchant client acts from the master host; callbacks go to the worker host.

It shows: both simulator hosts serve the same orders; one clock; the money rules under follow-ups of one order
racing on both hosts; callbacks delivered across hosts at least once, none lost; ``gatekit load`` distributed over
the hosts with its reports written; and, last (it stops a host for good), a simulator host whose processes are
killed while the other keeps serving and delivers what was left to send.

``make test`` runs a short pass; ``make test-hosts`` the long one (more orders, a longer load with two Locust
workers): ``GATEKIT_HOSTS_ORDERS``, ``GATEKIT_HOSTS_LOAD_SECONDS``, ``GATEKIT_HOSTS_LOAD_WORKERS``.  Skipped, saying
why, where hosts cannot be made (not root, no ``ip netns``) or PostgreSQL is missing.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import requests

from tests import postgres
from tests.hosts import network as hosts
from tests.hosts.team import LATE_PORT, ROLES, SIMULATORS, TOKEN, Listener, Team, deployed, run_load
from tests.simulator.rules.test_ledger import Step, assert_true, ledger, run_step
from toolkit.client import GatewayClient
from toolkit.models import AsyncResponse, Status
from toolkit.simcontrol import SimulatorControl
from toolkit.testdata import preauth_fields, sale_fields

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("hosts")]

ORDERS = int(os.environ.get("GATEKIT_HOSTS_ORDERS", "6"))
LOAD_SECONDS = int(os.environ.get("GATEKIT_HOSTS_LOAD_SECONDS", "2"))
LOAD_WORKERS = int(os.environ.get("GATEKIT_HOSTS_LOAD_WORKERS", "1"))
CALLBACK_WAIT = 30.0  # seconds for every callback of a batch (they come within a second or two)
TAKEOVER_WAIT = 30.0  # seconds for the other host to deliver what the stopped one left (its lease lapses in 5)


@pytest.fixture(scope="module")
def team() -> Iterator[Team]:
    if reason := hosts.skip_reason() or postgres.skip_reason():
        pytest.skip(reason)
    network = hosts.Network.create(ROLES)
    try:
        with deployed(network) as running:
            yield running
    finally:
        network.remove()


@pytest.fixture(autouse=True)
def on_the_master_host(team: Team) -> Iterator[None]:
    """The test's own requests leave from the master host (this thread, and the threads it starts, enter it)."""
    with team.network["master"].entered():
        yield


def client(team: Team, role: str) -> GatewayClient:
    return GatewayClient(team.simulators[role].client_config())


def control(team: Team, role: str) -> SimulatorControl:
    return team.simulators[role].control(token=TOKEN)


def processes_now(team: Team, role: str, wanted: int = 2, attempts: int = 100) -> dict[str, float]:
    """The clock of each process of a simulator host (``/_sim/health`` on new connections until each answered)."""
    seen: dict[str, float] = {}
    for _ in range(attempts):
        with requests.Session() as session:
            health = session.get(f"{team.simulators[role].root_url}/_sim/health", timeout=10,
                                 headers={"Authorization": f"Bearer {TOKEN}"}).json()  # fmt: skip
        seen.setdefault(health["process"], health["now"])
        if len(seen) == wanted:
            return seen
    raise AssertionError(f"{len(seen)} of {wanted} processes of {role} answered in {attempts} connections")


def test_both_simulator_hosts_serve_the_same_orders(team: Team) -> None:
    one, other = client(team, "sim1"), client(team, "sim2")
    with one, other:
        for n in range(ORDERS):
            made_on, read_on = (one, other) if n % 2 == 0 else (other, one)
            order = made_on.sale(sale_fields(amount=Decimal("12.00")))
            ids = {"client_orderid": order.client_orderid, "orderid": order.orderid}
            assert read_on.status(ids).status is Status.APPROVED, order.orderid
        preauth = one.preauth(preauth_fields(amount=Decimal("30.00")))
        ids = {"client_orderid": preauth.client_orderid, "orderid": preauth.orderid}
        capture = other.capture(ids, amount=Decimal("30.00"), currency="EUR")
        assert capture.orderid == preauth.orderid
    with control(team, "sim1") as first, control(team, "sim2") as second:
        counted = {first.health()["transactions"], second.health()["transactions"]}
    assert len(counted) == 1, counted
    team.log.figure(f"orders: {ORDERS} sales made alternately on sim1 and sim2, each read back on the other host; "
                    f"a preauth on sim1 captured on sim2; {counted.pop()} transactions seen alike by both")  # fmt: skip


def test_one_clock_moved_on_one_host_is_the_clock_of_the_other(team: Team) -> None:
    before = processes_now(team, "sim2")
    with control(team, "sim1") as first:
        first.advance_clock(3600)
    after = processes_now(team, "sim2")
    assert set(after) == set(before)
    moved = {process: after[process] - before[process] for process in after}
    assert all(3600 <= seconds < 3600 + 30 for seconds in moved.values()), moved
    team.log.figure(f"clock: advanced 3600 s through sim1; both processes of sim2 moved by "
                    f"{', '.join(f'{s:.1f}' for s in moved.values())} s")  # fmt: skip


def test_follow_ups_of_one_order_racing_on_both_hosts_never_exceed_what_was_charged(team: Team) -> None:
    """Six captures of 40.00 of a 100.00 preauth sent at once, half to each host; then six returns of 30.00 and two
    chargebacks of 20.00 at once: at most 100.00 is captured, at most what was captured comes back (the ledger is
    read from the other host too)."""
    with client(team, "sim1") as one, control(team, "sim2") as reader:
        orders = [one.preauth(preauth_fields(amount=Decimal("100.00"))) for _ in range(max(1, ORDERS // 3))]
        for order in orders:
            race(team, order, CAPTURES)
            assert_true(reader, order.orderid, ["6 captures of 40.00 at once on sim1 and sim2"])
            race(team, order, RETURNS)
            assert_true(reader, order.orderid, ["6 returns of 30.00 and 2 chargebacks of 20.00 at once"])
        figures = [ledger(reader, order.orderid) for order in orders]
    assert all(money.charged_final == 8000 for money in figures), figures  # (two of the six captures fit)
    back = sorted({f"{money.back_final / 100:.2f}" for money in figures})
    team.log.figure(f"money: {len(orders)} preauth(s) of 100.00, each with 6 captures of 40.00 racing on both hosts: "
                    f"80.00 captured of each; then 6 returns of 30.00 and 2 chargebacks of 20.00 racing: "
                    f"{' or '.join(back)} back of each; every ledger true")  # fmt: skip


CAPTURES: list[Step] = [("capture", 40)] * 6
RETURNS: list[Step] = [("return", 30)] * 6 + [("chargeback", 20)] * 2


def race(team: Team, order: AsyncResponse, steps: list[Step]) -> None:
    """Each step from a client of its own, to sim1 and sim2 in turn, all released together."""
    barrier = threading.Barrier(len(steps))
    errors: list[BaseException] = []

    def hit(role: str, step: Step) -> None:
        try:
            with client(team, role) as own, control(team, role) as own_control:
                barrier.wait(timeout=30)
                run_step(own, own_control, order, step)
        except BaseException as exc:  # (reported below, not lost in a thread)
            errors.append(exc)

    threads = [threading.Thread(target=hit, args=(SIMULATORS[n % 2], step)) for n, step in enumerate(steps)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [], errors


def test_callbacks_cross_hosts_at_least_once_and_none_is_lost(team: Team) -> None:
    with client(team, "sim1") as one, client(team, "sim2") as other:
        made = [(one if n % 2 == 0 else other).sale(sale_fields(server_callback_url=team.listener.url))
                for n in range(ORDERS)]  # fmt: skip
    orderids = [order.orderid for order in made]
    missing = team.listener.wait_for(orderids, CALLBACK_WAIT)
    assert missing == [], f"no callback for {missing}"
    arrivals = [record for orderid in orderids for record in team.listener.arrivals[orderid]]
    assert all(record["control_ok"] for record in arrivals), arrivals
    assert {record["params"]["status"] for record in arrivals} == {"approved"}
    sender = team.lease_holder()
    team.log.figure(f"callbacks: {len(orderids)} sales on both hosts, {len(arrivals)} callbacks to "
                    f"{team.listener.url} sent by {sender} (the scheduler's lease), none lost, "
                    "control verified")  # fmt: skip


def test_load_runs_distributed_with_its_master_and_workers_on_their_own_hosts(team: Team, tmp_path: Path) -> None:
    users = 4 * LOAD_WORKERS
    results, _ = run_load(team, tmp_path, workers=LOAD_WORKERS, seconds=LOAD_SECONDS, users=users)
    assert results["workers"] == LOAD_WORKERS and results["users"] == users
    flows = {row["name"]: row for row in results["rows"] if row["type"] == "flow"}
    assert flows and all(row["failures"] == 0 for row in flows.values()), flows
    callbacks = results["callbacks"]
    assert callbacks["received"] >= callbacks["expected"] > 0 and callbacks["lost"] == 0, callbacks
    reports = tmp_path / "reports"
    for name in ("summary.md", "results.json", "report.html", "load_stats.csv"):
        assert (reports / name).stat().st_size > 0, name
    assert (reports / "summary.md").read_text().startswith("# gatekit load: PASS")
    done = sum(row["requests"] for row in flows.values())
    team.log.figure(f"load: {LOAD_WORKERS} Locust worker(s) on the worker host, master on the master host, "
                    f"{users} users for {LOAD_SECONDS} s against sim1: {done} flows, callbacks "
                    f"{callbacks['received']}/{callbacks['expected']} (lost {callbacks['lost']}); "
                    f"reports summary.md, results.json, report.html, CSV")  # fmt: skip


def test_a_stopped_simulator_host_leaves_the_other_serving_and_sending_its_callbacks(team: Team) -> None:
    """The host whose process holds the scheduler's lease has its processes killed while callbacks wait to be sent
    (the merchant's receiver is down): the other host serves the orders made on it at once, takes the lease over
    once it has run out, and delivers every callback when the receiver is up (the clock moved past the retries)."""
    stopped = team.lease_holder()
    survivor = next(role for role in SIMULATORS if role != stopped)
    late_url = f"http://{team.network['worker'].address}:{LATE_PORT}/callback"
    with client(team, "sim1") as one, client(team, "sim2") as other:
        made = [(one if n % 2 == 0 else other).sale(sale_fields(server_callback_url=late_url)) for n in range(ORDERS)]
    with control(team, stopped) as holder:
        assert holder.health()["callbacks_pending"] >= 1
    killed_at = time.monotonic()
    pids = team.kill(stopped)
    with client(team, survivor) as serving:
        for order in made:  # (half of them made on the stopped host)
            ids = {"client_orderid": order.client_orderid, "orderid": order.orderid}
            assert serving.status(ids).status is Status.APPROVED
        fresh = serving.sale(sale_fields())
    served = time.monotonic() - killed_at
    late = Listener(team.network, "worker", LATE_PORT)
    try:
        assert team.lease_holder(TAKEOVER_WAIT) == survivor
        taken_over = time.monotonic() - killed_at
        with control(team, survivor) as survivors:
            survivors.advance_clock(120)  # every retry due at once
        missing = late.wait_for([order.orderid for order in made], TAKEOVER_WAIT)
        delivered = time.monotonic() - killed_at
        assert missing == [], f"lost with {stopped}: {missing}"
    finally:
        late.stop()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{team.simulators[stopped].root_url}/paynet/openapi.json", timeout=5)
    team.log.figure(f"stopped host: {stopped} ({team.network[stopped].address}, pids {pids} killed with SIGKILL) "
                    f"held the scheduler's lease with {len(made)} callbacks waiting for a receiver that was down; "
                    f"{survivor} answered their status and a new sale ({fresh.orderid}) {served:.1f} s after the "
                    f"kill, took the lease over {taken_over:.1f} s after it, and delivered all {len(made)} "
                    f"callbacks {delivered:.1f} s after it")  # fmt: skip
