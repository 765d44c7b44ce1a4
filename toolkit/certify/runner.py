"""``gatekit certify``: run the suite against a profile, write Allure results, JUnit XML and an HTML report.

The suite (``features/`` and ``steps/``) is found in the current directory or ``GATEKIT_SUITE``.
The HTML report is made by Allure 3 (``npx allure generate``, pinned in package.json, installed
by ``make``); without it the results and JUnit XML are still written and the command says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class CertifyOptions:
    profile: str = "simulator"
    tags: str | None = None
    config_file: Path | None = None
    results: Path = Path("allure-results")
    reports: Path = Path("reports")
    workers: int = 0
    html: bool = True
    lenient: bool = False  # the embedded simulator forgives what the production gateway refuses


def suite_dir() -> Path:
    root = Path(os.environ.get("GATEKIT_SUITE", "."))
    if not (root / "steps").is_dir() or not (root / "features").is_dir():
        raise FileNotFoundError(f"no features/ and steps/ under {root.resolve()}: run from the gatekit checkout "
                                "or set GATEKIT_SUITE")  # fmt: skip
    return root


def pytest_args(options: CertifyOptions, root: Path) -> list[str]:
    args = [
        str(root / "steps"),
        f"--rootdir={root}",
        f"--gateway-profile={options.profile}",
        f"--alluredir={options.results}",
        f"--junitxml={options.reports / 'junit.xml'}",
        "-p", "no:terminal",
        "-p", "toolkit.certify.progress",
        # allure-pytest-bdd, when a merchant's environment has it, registers --alluredir beside allure-pytest
        "-p", "no:allure_pytest_bdd",
    ]  # fmt: skip
    if options.config_file:
        args.append(f"--gateway-config={options.config_file}")
    if options.tags:
        args += ["-m", options.tags]
    if options.workers:
        args += ["-n", str(options.workers)]
    if options.lenient:
        args.append("--simulator-lenient")
    return args


def allure_command(root: Path) -> list[str] | None:
    local = root / "node_modules" / ".bin" / "allure"
    if local.exists():
        return [str(local)]
    found = shutil.which("allure")
    return [found] if found else None


def make_html(options: CertifyOptions, root: Path) -> str:
    command = allure_command(root)
    if command is None:
        return "HTML report: not made (Allure 3 is not installed: run `make certify` or `npm ci`)"
    target = options.reports / "allure-report"
    result = subprocess.run([*command, "generate", str(options.results), "-o", str(target)],
                            capture_output=True, text=True, check=False)  # fmt: skip
    if result.returncode != 0:
        return f"HTML report: allure generate failed: {(result.stderr or result.stdout).strip()[:500]}"
    return f"HTML report: {(target / 'index.html').resolve()}"


def certify(options: CertifyOptions) -> int:
    """Run the suite; 0 when every flow passed, 1 when any failed, 2 when it could not run."""
    root = suite_dir()
    shutil.rmtree(options.results, ignore_errors=True)
    options.reports.mkdir(parents=True, exist_ok=True)
    # A separate interpreter: the suite must import toolkit itself (assertion rewriting, fresh state).
    code = subprocess.run([sys.executable, "-m", "pytest", *pytest_args(options, root)], check=False).returncode
    print(f"\nAllure results: {options.results.resolve()}\nJUnit XML: {(options.reports / 'junit.xml').resolve()}")
    if options.html:
        print(make_html(options, root))
    sys.stdout.flush()
    if code == pytest.ExitCode.OK:
        return 0
    return 1 if code == pytest.ExitCode.TESTS_FAILED else 2
