"""What ``gatekit certify`` is asked to run, and where its files go (``toolkit.certify.runner`` runs it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Against a gateway the run does not start, this many scenarios (each waiting on one order at a time) run at once
# unless the profile's ``in_flight`` or ``--in-flight`` says otherwise (a sandbox's rate limits): certify.parallel
IN_FLIGHT = 12
MAX_IN_FLIGHT = 64


@dataclass(frozen=True)
class CertifyOptions:
    profile: str | None = None
    tags: str | None = None
    config_file: Path | None = None
    suite: Path | None = None
    suite_only: bool = False
    results: Path = Path("allure-results")
    reports: Path = Path("reports")
    workers: int = 0  # pytest-xdist workers: scenarios side by side (``--in-flight``, ``-n``; 0 one process)
    embedded: bool = True  # the run starts the simulator itself (the profile ``simulator``, or one based on it)
    html: bool = True
    lenient: bool = False  # the embedded simulator forgives what the production gateway refuses
    record: Path | None = None  # HAR 1.2 recordings of every scenario (``--gateway-record``)
    history: str = "history.jsonl"  # the Allure history of this suite selection, in ``reports`` (runner.history_name)
