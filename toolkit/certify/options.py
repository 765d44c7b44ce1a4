"""What ``gatekit certify`` is asked to run, and where its files go (``toolkit.certify.runner`` runs it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CertifyOptions:
    profile: str | None = None
    tags: str | None = None
    config_file: Path | None = None
    suite: Path | None = None
    suite_only: bool = False
    results: Path = Path("allure-results")
    reports: Path = Path("reports")
    workers: int = 0
    html: bool = True
    lenient: bool = False  # the embedded simulator forgives what the production gateway refuses
    record: Path | None = None  # HAR 1.2 recordings of every scenario (``--gateway-record``)
    history: str = "history.jsonl"  # the Allure history of this suite selection, in ``reports`` (runner.history_name)
