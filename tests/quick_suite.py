"""The embedded simulator's latency for the suite runs whose subject is not the wait for an outcome.

``make certify`` and a user's run decide 0.1 s after each request (``toolkit.certify.target.EMBEDDED_LATENCY``),
and most of a suite run's time is that wait: 17 s of a lenient run against 10-13 s at 0.03-0.05 s, for the same
CPU.  Tests that run the whole suite to check something else (a lenient simulator, pages in another style, the
reports' hygiene, a team simulator) use ``QUICK_LATENCY``: the status still says ``processing`` first, with
room for a loaded machine between a sale's answer and its first status.  The wheel's runs (what a user runs)
and the recordings of ``test_drift.py`` (whose differences are timings) keep the default.
"""

from __future__ import annotations

from pathlib import Path

QUICK_LATENCY = 0.05
QUICK_PROFILE = "quick"


def quick_profile(directory: Path) -> list[str]:
    """A profile file in ``directory`` and the ``pytest steps`` options that choose it: the embedded simulator,
    deciding ``QUICK_LATENCY`` after each request."""
    path = directory / "quick-gatekit.toml"
    path.write_text(f'[profiles.{QUICK_PROFILE}]\nbase = "simulator"\nsimulator = {{ latency = {QUICK_LATENCY} }}\n')
    return [f"--gateway-config={path}", f"--gateway-profile={QUICK_PROFILE}"]
