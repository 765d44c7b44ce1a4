"""A payment team's deployment on the hosts of tests/hosts/network.py, each program started as a user starts it:

    db       PostgreSQL (tests/postgres.py's throwaway cluster) bound to the db host's address
    sim1     gatekit simulate --workers 2 --host <sim1> --port 8080 --db postgresql://postgres@<db>:<port>/gatekit
    sim2     the same on <sim2>, over the same database
    master   the test's merchant client (this process's threads enter it), gatekit load's Locust master
    worker   gatekit listen (the test's callback receiver), gatekit load's Locust workers and their receivers

The simulators require the control token (they listen beyond loopback): the test's control calls carry it from
the master host.  ``Log`` keeps what ran where and the figures, printed at the end (``pytest -s``, make test-hosts).
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from tests.hosts.network import Network
from tests.postgres import Cluster, cluster
from tests.simulator.workers import Workers, start_workers
from toolkit import demo

ROLES = {"db": 10, "sim1": 11, "sim2": 12, "master": 21, "worker": 22}
SIMULATORS = ("sim1", "sim2")
SIM_PORT = 8080
LISTEN_PORT = 9101  # the test's receiver (gatekit listen) on the worker host
LATE_PORT = 9102  # a receiver started only once a simulator host is stopped (the merchant was down meanwhile)
LOAD_PORTS = (9100, 9103)  # one per Locust worker on the worker host
MASTER_PORT = 5557
TOKEN = os.environ.get("GATEKIT_CONTROL_TOKEN") or f"hosts-{secrets.token_hex(12)}"


@dataclass
class Log:
    """What ran on each host, and the figures of the run, for the person reading the output."""

    places: dict[str, list[str]] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)

    def ran(self, role: str, what: str) -> None:
        self.places.setdefault(role, []).append(what)

    def figure(self, text: str) -> None:
        self.figures.append(text)

    def text(self, network: Network) -> str:
        lines = [f"hosts of this run (network namespaces, {network.cidr} on a bridge in {network.bridge}):"]
        for role, host in network.hosts.items():
            lines.append(f"  {role:<7} {host.address:<13} {host.namespace}")
            lines += [f"            {what}" for what in self.places.get(role, [])]
        return "\n".join([*lines, "figures:", *(f"  {figure}" for figure in self.figures)])


class Listener:
    """``gatekit listen`` on a host: every arrival (a JSON line) kept by orderid."""

    def __init__(self, network: Network, role: str, port: int) -> None:
        host = network[role]
        self.url = f"http://{host.address}:{port}/callback"
        command = [*host.wrap, sys.executable, "-m", "toolkit.cli", "listen", "--host", host.address, "--port",
                   str(port), "--control-key", demo.CONTROL_KEY]  # fmt: skip
        shown = [part if part != demo.CONTROL_KEY else '"$GATEWAY_CONTROL_KEY"' for part in command]  # (never the key)
        self.command = "gatekit " + " ".join(shown[len(host.wrap) + 3 :])
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.arrivals: dict[str, list[dict[str, Any]]] = {}
        self._changed = threading.Condition()
        lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, args=(lines,), daemon=True)
        self._reader.start()
        try:
            first = lines.get(timeout=30)
        except queue.Empty:
            first = ""
        if not first:
            self.process.kill()
            raise AssertionError(f"{self.command} did not start: {self.process.communicate()[1]}")

    def _read(self, first: queue.Queue[str]) -> None:
        assert self.process.stdout is not None
        first.put(self.process.stdout.readline())
        for line in self.process.stdout:
            record = json.loads(line)
            if record.get("kind") == "callback":
                with self._changed:
                    self.arrivals.setdefault(record["params"].get("orderid", ""), []).append(record)
                    self._changed.notify_all()

    def wait_for(self, orderids: list[str], timeout: float) -> list[str]:
        """The orderids of ``orderids`` without a callback once each has one or ``timeout`` seconds have passed."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while missing := [orderid for orderid in orderids if orderid not in self.arrivals]:
                if not self._changed.wait(max(0.0, deadline - time.monotonic())) and time.monotonic() >= deadline:
                    return missing
        return []

    def stop(self) -> None:
        """SIGTERM, then its end and its last line awaited (the reader thread reads its output to the end)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        self._reader.join(timeout=30)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


@dataclass
class Team:
    network: Network
    database: Cluster
    database_url: str
    simulators: dict[str, Workers]
    listener: Listener
    log: Log
    stopped: set[str] = field(default_factory=set)

    def serving(self) -> list[str]:
        return [role for role in SIMULATORS if role not in self.stopped]

    def lease_holder(self, timeout: float = 15.0) -> str:
        """The simulator host whose process holds the scheduler's lease, asked on new connections until one says
        so (a lease whose holder died is taken over once it has run out: 5 s after its last renewal)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for role in self.serving():
                with requests.Session() as session:
                    health = session.get(f"{self.simulators[role].root_url}/_sim/health", timeout=10,
                                         headers={"Authorization": f"Bearer {TOKEN}"}).json()  # fmt: skip
                if health["scheduler"]:
                    return role
            time.sleep(0.05)  # (a poll: holders renew every second)
        raise AssertionError(f"no process of {self.serving()} held the scheduler's lease within {timeout:g} s")

    def kill(self, role: str) -> list[int]:
        """Every process of a simulator host killed (SIGKILL: the supervisor first, so that it starts none again)."""
        workers = self.simulators[role]
        pids = [workers.process.pid, *workers.pids]
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        workers.process.communicate(timeout=30)
        self.stopped.add(role)
        return pids


def simulator_flags(network: Network, database_url: str) -> list[str]:
    ports = sorted((LISTEN_PORT, LATE_PORT, *LOAD_PORTS))
    hosts = [f"--callback-host={network['worker'].address}:{port}" for port in ports]
    return ["--port", str(SIM_PORT), "--db", database_url, *hosts]


@contextmanager
def deployed(network: Network) -> Iterator[Team]:
    """PostgreSQL on the db host, ``gatekit simulate --workers 2`` on each simulator host, ``gatekit listen`` on the
    worker host; stopped in the reverse order at the end."""
    log = Log()
    with ExitStack() as stack:
        db = network["db"]
        database = stack.enter_context(cluster(db.address, clients=network.cidr, wrap=db.wrap))
        database_url = _create_database(database, "gatekit")
        log.ran("db", f"PostgreSQL (pg_ctl start as the postgres user, in {database.folder}): "
                      f"listen_addresses={db.address}, port {database.port}, pg_hba trusting {network.cidr}; "
                      "database gatekit")  # fmt: skip
        simulators = {}
        for role in SIMULATORS:
            host = network[role]
            flags = ["--host", host.address, *simulator_flags(network, database_url)]
            simulators[role] = start_workers(2, *flags, env={"GATEKIT_CONTROL_TOKEN": TOKEN}, wrap=host.wrap)
            stack.callback(simulators[role].stop)
            pids = ", ".join(map(str, simulators[role].pids))
            log.ran(role, f"gatekit simulate --workers 2 {' '.join(flags)} (control token required; pids {pids})")
        listener = Listener(network, "worker", LISTEN_PORT)
        stack.callback(listener.stop)
        log.ran("worker", listener.command)
        log.ran("master", "the test's merchant client and control calls (GatewayClient, SimulatorControl)")
        team = Team(network, database, database_url, simulators, listener, log)
        try:
            yield team
        finally:
            print("\n" + log.text(network), flush=True)


def _create_database(database: Cluster, name: str) -> str:
    """A database made through the cluster's Unix socket (a file: this namespace reaches it); its URL for the hosts."""
    import psycopg

    with psycopg.connect(host=str(database.folder), port=database.port, user=database.user, dbname="postgres",
                         autocommit=True) as connection:  # fmt: skip
        connection.execute(f"CREATE DATABASE {name}")
    return database.url(name)


def load_profile(folder: Path, network: Network) -> Path:
    """gatekit.toml with the team profile: the simulator on sim1, as the README's two-machine recipe has it."""
    path = folder / "gatekit.toml"
    path.write_text(
        f'[profiles.team]\nbase = "simulator"\nbase_url = "http://{network["sim1"].address}:{SIM_PORT}/paynet"\n'
    )
    return path


def run_load(team: Team, folder: Path, *, workers: int, seconds: int, users: int) -> tuple[dict[str, Any], str]:
    """``gatekit load --master`` on the master host and ``--worker`` processes on the worker host (each its own
    callback receiver), as the README's two-machine recipe; the master's results.json and its output."""
    network = team.network
    load_profile(folder, network)
    reports = folder / "reports"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("GATEWAY_", "GATEKIT_"))},
           "GATEKIT_CONTROL_TOKEN": TOKEN}  # fmt: skip
    gatekit = [sys.executable, "-m", "toolkit.cli", "load", "--profile", "team"]
    master = network["master"]
    master_flags = ["--max-rps", "1000", "--master", "--master-bind-host", master.address, "--expect-workers",
                    str(workers), "--headless", "-u", str(users), "-r", str(users), "-t", f"{seconds}s",
                    "--think", "0,0.2", "--reports", str(reports), "--", "--only-summary"]  # fmt: skip
    started = subprocess.Popen([*master.wrap, *gatekit, *master_flags], cwd=folder, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
    team.log.ran("master", "gatekit load --profile team " + " ".join(master_flags))
    worker = network["worker"]
    processes = []
    for port in LOAD_PORTS[:workers]:
        flags = ["--worker", "--master-host", master.address, "--master-port", str(MASTER_PORT),
                 "--callback-bind", f"{worker.address}:{port}"]  # fmt: skip
        processes.append(subprocess.Popen([*worker.wrap, *gatekit, *flags], cwd=folder, env=env, text=True,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT))  # fmt: skip
        team.log.ran("worker", "gatekit load --profile team " + " ".join(flags))
    try:
        output, _ = started.communicate(timeout=seconds + 120)
        for process in processes:
            process.communicate(timeout=60)
    finally:
        for process in [started, *processes]:
            if process.poll() is None:
                process.kill()
                process.communicate()
    assert started.returncode == 0, output[-4000:]
    return json.loads((reports / "results.json").read_text()), output
