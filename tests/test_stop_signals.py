"""A command that serves until SIGTERM or Ctrl-C stops even when another of its threads takes the signal
(``toolkit.commands.common.wait_until_stopped``): the kernel hands a process's signal to any thread, Python runs
the handler in the main thread only, and a main thread blocked in an untimed wait never ran it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The signal goes to a sleeping thread (pthread_kill), as the kernel may send a process's SIGTERM there.
SCRIPT = """
import signal, sys, threading, time
from toolkit.commands.common import stop_on_signals, wait_until_stopped
stop = threading.Event()
with stop_on_signals(stop):
    other = threading.Thread(target=time.sleep, args=(60,), daemon=True)
    other.start()
    threading.Timer(0.3, signal.pthread_kill, (other.ident, signal.{signal})).start()
    {wait}
print("stopped", flush=True)
"""


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_a_signal_another_thread_takes_still_stops_the_wait(name: str) -> None:
    script = SCRIPT.format(signal=name, wait="wait_until_stopped(stop)")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=20,
                          check=False)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, "stopped\n", "")


def test_an_untimed_wait_misses_it() -> None:
    """What ``wait_until_stopped`` replaces: ``stop.wait()`` alone is still waiting long after the signal."""
    script = SCRIPT.format(signal="SIGTERM", wait="stop.wait()")
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=3)
