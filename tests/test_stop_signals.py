"""A command that serves until SIGTERM or Ctrl-C stops whatever its threads are doing when the signal comes
(``toolkit.commands.stopping``):

- the kernel hands a process's signal to any thread, and Python runs the handler in the main thread only: a main
  thread asleep in a wait must still wake (the wakeup descriptor);
- the handler runs between any two bytecodes of the main thread, which may hold any lock then: a handler that
  takes one (``threading.Event.set`` while the main thread was inside ``Event.wait``) deadlocked ``gatekit
  simulate`` about once in ten stops (issue 34, #3). The test raises the signal at every line the wait runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The signal goes to a sleeping thread (pthread_kill), as the kernel may send a process's SIGTERM there.
OTHER_THREAD = """
import signal, sys, threading, time
from toolkit.commands.stopping import Stop, stop_on_signals, wait_until_stopped
for _ in range(20):
    with Stop() as stop, stop_on_signals(stop):
        other = threading.Thread(target=time.sleep, args=(60,), daemon=True)
        other.start()
        threading.Timer(0.02, signal.pthread_kill, (other.ident, signal.{signal})).start()
        wait_until_stopped(stop)
print("stopped", flush=True)
"""

# The signal raised at the k-th line the main thread runs inside the wait, for every k until the wait blocks
# (then a timer's thread raises it). ``{make}``, ``{install}`` and ``{wait}`` choose what is under test.
EVERY_LINE = """
import contextlib, signal, sys, threading
from toolkit.commands.stopping import Stop, stop_on_signals, wait_until_stopped

@contextlib.contextmanager
def handler_that_sets(stop):  # the handler of an older gatekit (with threading.Event)
    def handler(signum, frame):
        stop.set()
    before = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)

def once(k):
    stop = {make}
    lines = 0
    def tracer(frame, event, arg):
        nonlocal lines
        if event == "line":
            lines += 1
            if lines == k:
                signal.raise_signal(signal.SIGTERM)
        return tracer
    late = threading.Timer(0.05, signal.raise_signal, (signal.SIGTERM,))
    with {install}(stop):
        late.start()
        sys.settrace(tracer)
        try:
            {wait}
        finally:
            sys.settrace(None)
            late.cancel()
    return lines

k = 1
while k <= once(k):
    k += 1
print("stopped at every line of", k - 1, flush=True)
"""


def run(script: str, timeout: float) -> subprocess.CompletedProcess[str]:
    # (subprocess.run kills the child with SIGKILL at the timeout: a deadlocked handler cannot stop it)
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          check=False)  # fmt: skip


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_a_signal_another_thread_takes_still_stops_the_wait(name: str) -> None:
    done = run(OTHER_THREAD.format(signal=name), timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, "stopped\n", "")


def test_a_signal_at_any_line_of_the_wait_stops_it() -> None:
    done = run(EVERY_LINE.format(make="Stop()", install="stop_on_signals", wait="wait_until_stopped(stop)"), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("stopped at every line of "), done.stdout
    assert int(done.stdout.split()[-1]) >= 3  # the wait's own lines were reached, not only the timer's signal


def test_the_every_line_test_catches_a_handler_that_takes_a_lock() -> None:
    """What ``Stop`` replaces: ``threading.Event`` set by the handler while ``Event.wait`` holds its lock."""
    script = EVERY_LINE.format(
        make="threading.Event()", install="handler_that_sets", wait="while not stop.wait(0.2): pass"
    )
    with pytest.raises(subprocess.TimeoutExpired):
        run(script, timeout=3)
