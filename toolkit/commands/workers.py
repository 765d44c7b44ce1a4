"""``gatekit simulate --workers N``: N simulator processes serving one port and one store.

The command's own process reserves the address (a socket bound with ``SO_REUSEPORT``, never listening),
prepares the store (a temporary SQLite file in WAL mode when no ``--db`` is given) and starts N worker
processes that each bind the same port with ``SO_REUSEPORT`` and listen: the kernel spreads new connections
over them evenly (a worker that dies takes only the connections it had).  Everything that must be one lives in the store
(orders, ids, the clock offset, fault plans, the callback queue, nonces, pages' sessions), and one worker at a
time does the timed work (the scheduler's lease: ``toolkit.simulator.scheduler``).  The header (base URL,
merchants) is printed once, when every worker is ready; each worker prints its own request lines.  A worker
that dies is started again (its lease is taken over by another at once); one that cannot start again (a shared
database down) is tried again with a growing pause while the others serve; Ctrl-C or SIGTERM stops them all.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    import socket

    from toolkit.commands.stopping import Stop
    from toolkit.simulator.settings import SimulatorSettings

READY_TIMEOUT = 60.0  # seconds every worker has to listen
RESTARTS = 5  # a worker that dies this many times within RESTART_WINDOW seconds is not started again
RESTART_WINDOW = 30.0
# a worker that cannot start again (its database down) is tried again after RETRY_FIRST s, doubling to RETRY_MAX
RETRY_FIRST, RETRY_MAX = 0.5, 30.0
STOP_GRACE = 10.0
# gatekit simulate's options a worker gets as they were given (``argv``; the control token through the
# environment); the others are the command's own: what the workers share is decided once, here
FORWARDED = frozenset({"host", "log_level", "config", "latency", "max_body", "public_url", "callback_host", "lenient",
                       "quiet", "control_token"})  # fmt: skip
OWN = frozenset({"port", "db", "workers", "reset", "ready_fd", "handler", "command", "help"})
EXIT_OK, EXIT_UNUSABLE = 0, 2  # as gatekit simulate's


class Workers:
    """The worker processes of one ``gatekit simulate --workers N``."""

    def __init__(self, args: argparse.Namespace, sock: socket.socket, db: str, out: TextIO = sys.stderr) -> None:
        self.args = args
        self.sock = sock
        self.db = db
        self.out = out
        self.processes: list[subprocess.Popen[bytes] | None] = [None] * args.workers
        self.deaths: list[list[float]] = [[] for _ in range(args.workers)]
        self.stopping = threading.Event()
        self.failed = threading.Event()
        self._lock = threading.Lock()

    def argv(self, ready_fd: int) -> list[str]:
        """A worker's command line: the same settings (``FORWARDED``), the reserved port and the store; no header
        of its own (``--ready-fd``: it says there when it listens)."""
        a = self.args
        argv = [sys.executable, "-m", "toolkit.cli", "simulate", "--port", str(self.sock.getsockname()[1]),
                "--ready-fd", str(ready_fd), "--db", self.db, "--host", a.host, "--log-level", a.log_level]  # fmt: skip
        for flag, value in (("--config", a.config), ("--latency", a.latency), ("--max-body", a.max_body),
                            ("--public-url", a.public_url)):  # fmt: skip
            if value is not None:
                argv += [flag, str(value)]
        for host in a.callback_host:
            argv += ["--callback-host", host]
        argv += ["--lenient"] if a.lenient else []
        argv += ["--quiet"] if a.quiet else []
        return argv

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        token = self.args.control_token
        if token is not None:  # through the environment: a flag would show in ps
            env["GATEKIT_CONTROL_TOKEN"] = token
        return env

    def spawn(self, index: int) -> subprocess.Popen[bytes]:
        """Start worker ``index``; returns once it listens (RuntimeError if it does not within READY_TIMEOUT)."""
        read, write = os.pipe()
        try:
            process = subprocess.Popen(self.argv(write), pass_fds=(write,), env=self._environment())
        finally:
            os.close(write)
        try:
            ready, _, _ = select.select([read], [], [], READY_TIMEOUT)
            if not ready or os.read(read, 1) != b"1":
                process.kill()
                process.wait()
                raise RuntimeError(f"worker {index + 1} did not start (exit status {process.returncode})")
        finally:
            os.close(read)
        self.processes[index] = process
        return process

    def start(self) -> None:
        for index in range(len(self.processes)):
            self.spawn(index)
        for index in range(len(self.processes)):
            threading.Thread(target=self._watch, args=(index,), name=f"gatekit-worker-{index + 1}", daemon=True).start()

    def _watch(self, index: int) -> None:
        """Start worker ``index`` again whenever it ends without being asked to (killed, crashed)."""
        while not self.stopping.is_set():
            process = self.processes[index]
            if process is None:
                return
            code = process.wait()
            if self.stopping.is_set():
                return
            now = time.monotonic()
            recent = [at for at in self.deaths[index] if now - at < RESTART_WINDOW] + [now]
            self.deaths[index] = recent
            how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
            if len(recent) >= RESTARTS:
                self._say(f"worker {index + 1} (pid {process.pid}) ended ({how}) {len(recent)} times in "
                          f"{RESTART_WINDOW:g} s: stopping")  # fmt: skip
                self.failed.set()
                return
            again = self._restart(index, f"worker {index + 1} (pid {process.pid}) ended ({how})")
            if again is None:
                return

    def _restart(self, index: int, ended: str) -> subprocess.Popen[bytes] | None:
        """Start worker ``index`` again; while it cannot start (its database down, say), try again after a pause
        that doubles up to ``RETRY_MAX`` (the other workers serve meanwhile). None once the command stops."""
        pause = RETRY_FIRST
        while not self.stopping.is_set():
            try:
                again = self.spawn(index)
            except RuntimeError as exc:
                self._say(f"{ended}; {exc}; trying again in {pause:g} s")
                if self.stopping.wait(pause):
                    return None
                pause = min(pause * 2, RETRY_MAX)
                continue
            if self.stopping.is_set():  # (the command stopped while it started: stop it too)
                self._end(again)
                return None
            self._say(f"{ended}; started again (pid {again.pid})")
            return again
        return None

    def _say(self, text: str) -> None:
        with self._lock:
            print(f"gatekit simulate: {text}", file=self.out, flush=True)

    def stop(self) -> None:
        """SIGTERM to every worker, then SIGKILL to those still running after STOP_GRACE seconds."""
        self.stopping.set()
        self._end(*(p for p in self.processes if p is not None and p.poll() is None))

    @staticmethod
    def _end(*running: subprocess.Popen[bytes]) -> None:
        for process in running:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE
        for process in running:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes if p is not None]


def _answers(host: str, port: int) -> bool:
    """Something accepts connections on ``host:port`` (another gatekit simulate --workers, whose sockets a new
    one with SO_REUSEPORT could bind beside)."""
    import socket as sockets

    target = "127.0.0.1" if host in ("0.0.0.0", "") else "::1" if host == "::" else host
    try:
        with sockets.create_connection((target, port), timeout=0.5):
            return True
    except OSError:
        return False


def _stop_when(failed: threading.Event, stop: Stop) -> None:
    failed.wait()
    stop.set()


def temporary_database() -> tuple[str, Path]:
    """A temporary SQLite file for the workers' shared store, and its folder (removed at exit)."""
    folder = Path(tempfile.mkdtemp(prefix="gatekit-simulator-"))
    return str(folder / "simulator.db"), folder


def prepare_store(db: str) -> None:
    """The schema made (or migrated) once, before the workers open the file together."""
    from toolkit.simulator.storage import open_store

    open_store(db).close()


def supervise(args: argparse.Namespace, settings: SimulatorSettings) -> int:
    """Run ``args.workers`` worker processes until Ctrl-C or SIGTERM; the exit status."""
    from toolkit.commands.simheader import describe_lines
    from toolkit.commands.stopping import Stop, stop_on_signals, wait_until_stopped
    from toolkit.simulator.server import bind

    folder = None
    db = args.db
    if db == ":memory:":
        db, folder = temporary_database()
    try:
        try:
            prepare_store(db)
            if args.port and _answers(args.host, args.port):  # SO_REUSEPORT would let us join another group
                print(f"gatekit simulate: cannot listen on {args.host}:{args.port}: something answers there already "
                      "(another gatekit simulate?)", file=sys.stderr)  # fmt: skip
                return EXIT_UNUSABLE
            sock = bind(args.host, args.port, reuse_port=True)  # the port reserved: the workers bind it too
        except OSError as exc:
            print(f"gatekit simulate: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_UNUSABLE
        except Exception as exc:  # sqlite3.Error, StoreError: the database cannot be used
            from toolkit.simulator.storage.postgres import without_password

            print(f"gatekit simulate: database {without_password(db)}: {exc}", file=sys.stderr)
            return EXIT_UNUSABLE
        workers = Workers(args, sock, db)
        with Stop() as stop, stop_on_signals(stop):
            try:
                workers.start()
            except RuntimeError as exc:
                workers.stop()
                print(f"gatekit simulate: {exc}", file=sys.stderr)
                return EXIT_UNUSABLE
            port = sock.getsockname()[1]
            note = " (temporary: removed at exit)" if folder is not None else ""
            from toolkit.simulator.storage.postgres import without_password

            lines = describe_lines(settings, args.host, port, f"{without_password(db)}{note}")
            lines.insert(1, f"workers: {args.workers} processes (pids {', '.join(map(str, workers.pids))}), one store")
            print("\n".join(lines), flush=True)
            threading.Thread(target=_stop_when, args=(workers.failed, stop), daemon=True).start()
            wait_until_stopped(stop)
            workers.stop()
        sock.close()
        print(f"stopped: {lines[0].removeprefix('simulator: ')}", flush=True)
        return EXIT_UNUSABLE if workers.failed.is_set() else EXIT_OK
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
