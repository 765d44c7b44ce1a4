"""A throwaway PostgreSQL cluster for the tests: Debian's server (``initdb``, ``pg_ctl``) in a temporary folder on a
free loopback port, as the ``postgres`` user when the tests run as root (PostgreSQL refuses root), stopped and
removed at the end.  ``GATEKIT_POSTGRES=off`` skips the tests that need it, saying so; so does a machine without
the server (``make test`` installs it with apt when it runs as root).  ``cluster(host=..., clients=..., wrap=...)``
runs one elsewhere: bound to another address, trusting a network of clients, its server inside a network namespace
(``wrap=("ip", "netns", "exec", NAME)``: tests/hosts).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

OFF = "GATEKIT_POSTGRES"


def _binary(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def skip_reason() -> str | None:
    if os.environ.get(OFF) == "off":
        return f"{OFF}=off: the PostgreSQL tests are switched off"
    if _binary("initdb") is None or _binary("pg_ctl") is None:
        return "needs Debian's PostgreSQL server (apt-get install postgresql; make test installs it as root)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "needs psycopg: pip install 'gatekit[postgres]'"
    return None


@dataclass
class Cluster:
    folder: Path
    port: int
    user: str
    host: str = "127.0.0.1"  # listen_addresses, and the host of url()
    wrap: tuple[str, ...] = ()  # a command prefix for the server's commands (a network namespace: ip netns exec)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def options(self) -> str:
        return f"-p {self.port} -k {self.folder} -c listen_addresses={self.host} -c fsync=off " \
               "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"  # fmt: skip

    def pg_ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``pg_ctl -D DATA ARGS`` as the ``postgres`` user, its server's output in the cluster's log (a server
        started by it would otherwise hold this call's pipes open)."""
        done = self.run([str(_binary("pg_ctl")), "-D", str(self.data), "-l", str(self.folder / "log"), *args], 90)
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl {' '.join(args)} failed: {done.stdout}{done.stderr}"
                               f"{(self.folder / 'log').read_text(errors='replace')}")  # fmt: skip
        return done

    def run(self, command: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        """COMMAND as the ``postgres`` user, inside ``wrap`` when given (``runuser`` then: it enters as root)."""
        if self.wrap and os.geteuid() == 0:
            command, options = [*self.wrap, "runuser", "-u", "postgres", "--", *command], {}
        else:
            options = _as_postgres()
        done: subprocess.CompletedProcess[str] = subprocess.run(
            command, capture_output=True, text=True, check=False, cwd=self.folder, timeout=timeout, **options
        )  # type: ignore[call-overload]
        return done

    def stop(self) -> None:
        """The server stopped (``-m fast``: its clients' connections are cut, as a database restart does)."""
        self.pg_ctl("-m", "fast", "-w", "stop")

    def start(self) -> None:
        self.pg_ctl("-o", self.options(), "-w", "-t", "60", "start")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database of this cluster; its URL."""
        import psycopg

        name = f"gatekit_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)


def _as_postgres() -> dict[str, object]:
    """Run a command as the ``postgres`` user when this process is root (initdb and postgres refuse root)."""
    return {"user": "postgres", "group": "postgres"} if os.geteuid() == 0 else {}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def cluster(host: str = "127.0.0.1", *, clients: str | None = None, wrap: tuple[str, ...] = ()) -> Iterator[Cluster]:
    """A throwaway cluster (initdb in a temporary folder, a free port), stopped and removed at the end: listening on
    ``host``, trusting the network ``clients`` (CIDR) besides loopback, its server run inside ``wrap``."""
    folder = Path(tempfile.mkdtemp(prefix="gatekit-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    running = Cluster(folder, _free_port(), "postgres", host, wrap)
    run = {"capture_output": True, "text": True, "check": False, "cwd": folder, **_as_postgres()}
    try:
        init = subprocess.run([str(_binary("initdb")), "-D", str(running.data), "-A", "trust", "-U", "postgres",
                               "--no-sync", "-E", "UTF8", "--locale=C"], timeout=120, **run)  # type: ignore[call-overload]  # fmt: skip
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stdout}{init.stderr}")
        if clients is not None:
            with (running.data / "pg_hba.conf").open("a") as hba:
                hba.write(f"host all all {clients} trust\n")
        running.start()
        try:
            yield running
        finally:
            running.run([str(_binary("pg_ctl")), "-D", str(running.data), "-m", "immediate", "-w", "stop"], 60)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Cluster]:
    if reason := skip_reason():
        pytest.skip(reason)
    with cluster() as running:
        yield running
