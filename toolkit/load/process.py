"""Locust as ``gatekit load``'s child process: started in a session of its own, told to stop once, waited for.

Ctrl-C and SIGTERM reach ``gatekit load`` alone (a terminal's Ctrl-C reaches only its foreground process group,
``kill PID`` only that process); the command's handler sets a ``Stop`` (``toolkit.commands.stopping``), and
its main thread, woken by it, sends one SIGTERM to Locust's process group (Locust, and the workers
``--processes`` forks). Locust then stops its users, writes the reports (``toolkit.load.ending``) and exits;
only then does the command stop its embedded simulator, so no request in flight meets a simulator that has gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Protocol

EXITED_CHECK = 0.1  # seconds between two looks at whether Locust has ended (a signal wakes the wait at once)


class StopRequest(Protocol):
    """What ``run_locust`` needs of a stop request (``toolkit.commands.stopping.Stop``)."""

    def is_set(self) -> bool: ...

    def wait(self, timeout: float | None = None) -> bool: ...


def run_locust(command: Sequence[str], env: Mapping[str, str], stop: StopRequest) -> int:
    """Run ``command`` until it ends; once ``stop`` is set, one SIGTERM to its process group. Its exit status
    (negative: the signal that ended it)."""
    process = subprocess.Popen(list(command), env=dict(env), start_new_session=True)
    try:
        while process.poll() is None:
            if stop.wait(EXITED_CHECK):
                signal_group(process, signal.SIGTERM)
                return process.wait()  # (Locust stops its users, writes the reports, ends)
        return process.returncode
    finally:
        if process.poll() is None:  # (an error of this process: Locust is not left running without it)
            signal_group(process, signal.SIGKILL)
            process.wait()


def signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    """``signum`` to the process group ``process`` leads (not reaped yet: its id is still its own)."""
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signum)
