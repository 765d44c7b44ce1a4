"""``gatekit simulate`` started and stopped with SIGTERM again and again, alone and with ``--workers 2``: every stop
ends the process within ``STOP_WITHIN`` seconds, with exit status 0 (issue 34, #3: one stop in about ten hung).

``GATEKIT_STOP_CYCLES`` sets the cycles per form (3 here; ``make test-stops`` runs 50).
"""

from __future__ import annotations

import os
import signal
import time
import urllib.request

import pytest

from tests.simulator.test_api_simulate import Simulate

CYCLES = int(os.environ.get("GATEKIT_STOP_CYCLES", "3"))
STOP_WITHIN = 5.0
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("args", [(), ("--workers", "2")], ids=["single", "workers-2"])
def test_every_sigterm_stops_the_simulator_within_5_s(args: tuple[str, ...]) -> None:
    took: list[float] = []
    for cycle in range(CYCLES):
        sim = Simulate("--quiet", *args)
        try:
            health = sim.base_url.removesuffix("/paynet") + "/_sim/health"
            with urllib.request.urlopen(health, timeout=10) as answer:  # serving, then stopped
                assert answer.status == 200
            started = time.monotonic()
            sim.process.send_signal(signal.SIGTERM)
            status = sim.process.wait(timeout=30)
            took.append(time.monotonic() - started)
            assert status == 0, (cycle, status)
        finally:
            sim.close()
    slowest = max(took)
    print(f"{CYCLES} stops of gatekit simulate {' '.join(args)}: slowest {slowest:.2f} s, "
          f"median {sorted(took)[len(took) // 2]:.2f} s")  # fmt: skip
    assert slowest < STOP_WITHIN, took
