"""A team simulator on PostgreSQL outlives its database's outage (issue 34, #4).

``gatekit simulate --workers 2 --db postgresql://...``; the database stops; a worker is killed meanwhile. Before,
its replacement could not connect, the supervisor stopped everything ("worker did not start (exit status 2):
stopping") and the simulator stayed down after the database came back; and the surviving worker's pooled
connections, dead after the restart, answered the first requests with a 500. Now the surviving worker keeps
answering (a 503 that says the database does not answer while it is down), the supervisor tries the restart again
with a growing pause, and once the database is back every request is answered, by both workers.
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Iterator

import pytest
import requests

from tests.postgres import Cluster, cluster, skip_reason
from tests.simulator.test_stop_cycles import STOP_WITHIN
from tests.simulator.workers import Workers, start_workers
from toolkit.client import GatewayClient
from toolkit.errors import ServerError
from toolkit.testdata import sale_fields

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("outage")]  # (its own cluster and simulator: mostly waiting)


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    """A cluster of this test's own: it is stopped and started again."""
    if reason := skip_reason():
        pytest.skip(reason)
    with cluster() as running:
        yield running


def processes(workers: Workers, wanted: int) -> dict[str, requests.Session]:
    return workers.health_by_process(wanted)


def answering(workers: Workers, wanted: int, *, deadline: float) -> tuple[dict[str, requests.Session], list[int]]:
    """A keep-alive session on each of ``wanted`` processes whose health answers 200 (new connections until then,
    within ``deadline`` seconds), and every status seen on the way."""
    found: dict[str, requests.Session] = {}
    statuses: list[int] = []
    end = time.monotonic() + deadline
    while len(found) < wanted:
        assert time.monotonic() < end, f"{len(found)} of {wanted} processes answered: {statuses}"
        session = requests.Session()
        answer = session.get(f"{workers.root_url}/_sim/health", timeout=30)
        statuses.append(answer.status_code)
        process = answer.json().get("process") if answer.status_code == 200 else None
        if process is None or process in found:
            session.close()
            time.sleep(0.05)  # (a pool connecting again, or a process already found: ask again shortly)
        else:
            found[process] = session
    return found, statuses


def test_a_worker_killed_while_the_database_is_down_comes_back_with_it(own_cluster: Cluster) -> None:
    running = start_workers(2, "--db", own_cluster.new_database())
    try:
        with GatewayClient(running.client_config()) as client:
            client.sale(sale_fields())
        sessions = processes(running, 2)
        survivor, victim = sorted(sessions)
        own_cluster.stop()
        os.kill(int(victim.split(":")[1]), signal.SIGKILL)
        wait_for_line(running, "trying again in 0.5 s", deadline=60)  # the supervisor did not give up
        # the survivor answers, saying the database does not answer (a 503 after the pool's wait, not a 500)
        with GatewayClient(running.client_config(), session=sessions[survivor]) as client, \
                pytest.raises(ServerError, match="does not answer") as refused:  # fmt: skip
            client.sale(sale_fields())
        assert refused.value.http_status == 503, refused.value
        health = sessions[survivor].get(f"{running.root_url}/_sim/health", timeout=60)
        assert health.status_code == 503 and "does not answer" in health.json()["error"], health.text
        assert running.process.poll() is None
        own_cluster.start()
        back = time.monotonic()
        found, statuses = answering(running, 2, deadline=60)  # until two processes answer: the replacement started
        assert survivor in found and victim not in found
        assert 500 not in statuses, statuses  # (a 503 while a pool connects again; never a dead connection's 500)
        print(f"both workers answer {time.monotonic() - back:.1f} s after the database is back; {statuses}")
        for session in found.values():  # the survivor's pooled connections died with the database: replaced
            assert [session.get(f"{running.root_url}/_sim/health", timeout=30).status_code for _ in range(10)] == [
                200
            ] * 10
        with GatewayClient(running.client_config()) as client:
            for _ in range(20):  # new connections, spread over both workers by the kernel
                client.sale(sale_fields())
    finally:
        output = "".join(running.errors) + running.stop()
    assert "trying again in 0.5 s" in output, output
    assert "started again (pid" in output, output
    assert "stopping" not in output, output


def wait_for_line(running: Workers, text: str, *, deadline: float) -> None:
    """Read the supervisor's stderr as it comes (into ``running.errors``) until ``text`` shows, within ``deadline``
    seconds."""
    assert running.process.stderr is not None
    fd = running.process.stderr.fileno()
    end = time.monotonic() + deadline
    while text not in "".join(running.errors):
        left = end - time.monotonic()
        assert left > 0, f"no {text!r} from the supervisor within {deadline} s: {running.errors}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 65536)
            assert chunk, f"the supervisor ended: {running.errors}"
            running.errors.append(chunk.decode(errors="replace"))


def test_a_team_simulator_stops_at_once_while_its_database_is_down(own_cluster: Cluster) -> None:
    """SIGTERM while the database is down (it was stopped first: a host gone, a compose file stopped in the other
    order).  Before, each step of the stop waited for a connection as a request does (10 s), the scheduler's join
    gave up after 5 s more, and the worker's shutdown failed with a traceback; now the stop's writes wait a moment
    (``pgconnections.STOP_WAIT``), the journal's last lines are said lost, and the stop is as quick as any."""
    running = start_workers(2, "--db", own_cluster.new_database())
    try:
        with GatewayClient(running.client_config()) as client:
            client.sale(sale_fields())  # (a line for the journal, a scheduler holding its lease)
        own_cluster.stop()
        started = time.monotonic()
        running.process.send_signal(signal.SIGTERM)
        status = running.process.wait(timeout=60)
        took = time.monotonic() - started
    finally:
        output = "".join(running.errors) + running.stop()
    assert status == 0, output
    assert took < STOP_WITHIN, (took, output)
    assert "Traceback" not in output and "shutdown failed" not in output, output
