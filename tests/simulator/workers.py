"""``gatekit simulate --workers N`` started as a user starts it (a subprocess), for the team-simulator tests."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import requests

from toolkit.config import GatewayConfig, simulator_config
from toolkit.simcontrol import SimulatorControl


@dataclass
class Workers:
    process: subprocess.Popen[str]
    base_url: str
    header: list[str]
    errors: list[str] = field(default_factory=list)

    @property
    def root_url(self) -> str:
        return self.base_url.removesuffix("/paynet")

    def client_config(self, **overrides: Any) -> GatewayConfig:
        return simulator_config(self.base_url).with_overrides(**overrides)

    def control(self, **options: Any) -> SimulatorControl:
        return SimulatorControl(self.root_url, **options)

    @property
    def pids(self) -> list[int]:
        line = next(line for line in self.header if line.startswith("workers: "))
        return [int(pid) for pid in line.split("(pids ", 1)[1].split(")", 1)[0].split(", ")]

    def health_by_process(self, wanted: int, attempts: int = 200) -> dict[str, requests.Session]:
        """A keep-alive session on each of ``wanted`` different processes (new connections until they are seen)."""
        found: dict[str, requests.Session] = {}
        for _ in range(attempts):
            session = requests.Session()
            process = session.get(f"{self.root_url}/_sim/health", timeout=10).json()["process"]
            if process in found or len(found) == wanted:
                session.close()
            else:
                found[process] = session
            if len(found) == wanted:
                return found
        raise AssertionError(f"only {len(found)} of {wanted} worker processes answered in {attempts} connections")

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        out, err = self.process.communicate(timeout=30)
        return out + err


def start_workers(count: int, *extra: str, env: dict[str, str] | None = None, timeout: float = 60,
                  wrap: Sequence[str] = ()) -> Workers:  # fmt: skip
    """``gatekit simulate --workers COUNT --port 0 EXTRA...``; returns once its header is printed (all listen).
    ``wrap``: a command prefix (``ip netns exec NAME``: a host of tests/hosts)."""
    command = [*wrap, sys.executable, "-m", "toolkit.cli", "simulate", "--workers", str(count), "--port", "0",
               "--quiet", *extra]  # fmt: skip
    clean = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**clean, **(env or {})})  # fmt: skip
    assert process.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(process.stdout.readline() if process.stdout else ""),
                     daemon=True).start()  # fmt: skip
    header: list[str] = []
    deadline = time.monotonic() + timeout
    while not header or not header[-1].startswith("stop: "):
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            line = ""
        if not line:
            process.kill()
            out, err = process.communicate()
            raise AssertionError(f"gatekit simulate --workers {count} did not start: {header} {out} {err}")
        header.append(line.rstrip("\n"))
        if not header[-1].startswith("stop: "):
            threading.Thread(target=lambda: lines.put(process.stdout.readline() if process.stdout else ""),
                             daemon=True).start()  # fmt: skip
    return Workers(process, header[0].removeprefix("simulator: "), header)
