"""The wheel as a user meets it: built once from a copy of this tree, installed without extras into one
fresh virtual environment, then the commands a merchant types, run from empty directories.

Economy: the wheel is built without build isolation (setuptools comes with the ``test`` extra), the
venv is made without pip (this environment's pip installs into it with ``--python``), the wheel is
found with ``--find-links`` and its dependencies come through pip's cache.  The venv is made once per
run (``installed``), shared by the xdist workers.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import suite_passes
from tests.once_per_run import once_per_run
from tests.sample_requests import PAN, SALE
from toolkit.certify import catalog
from toolkit.cli import COMMANDS
from toolkit.commands.init import FILES

ROOT = Path(__file__).resolve().parents[1]
NOT_SOURCE = shutil.ignore_patterns(".*", "node_modules", "build", "dist", "reports", "allure-*", "__pycache__",
                                    "*.egg-info", ".ipynb_checkpoints", "tests", "benchmarks")  # fmt: skip
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]


@dataclass(frozen=True)
class Installed:
    wheel: Path
    bin: Path

    def run(self, *argv: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
        env.update(PATH=f"{self.bin}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(self.bin.parent))
        return subprocess.run([str(self.bin / argv[0]), *argv[1:]], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=timeout, check=False)  # fmt: skip


def _checked(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Built once per run and shared by the xdist workers (a minute or more each otherwise)."""

    def build(work: Path) -> dict[str, str]:
        built = _build(work)
        return {"wheel": str(built.wheel), "bin": str(built.bin)}

    paths = once_per_run(tmp_path_factory, "wheel", build)
    return Installed(Path(paths["wheel"]), Path(paths["bin"]))


def _build(work: Path) -> Installed:
    shutil.copytree(ROOT, work / "source", ignore=NOT_SOURCE)
    _checked([*PIP, "wheel", "--no-deps", "--no-build-isolation", "-w", str(work / "dist"), str(work / "source")])
    [wheel] = (work / "dist").glob("gatekit-*.whl")
    _checked([sys.executable, "-m", "venv", "--without-pip", str(work / "venv")])
    python = work / "venv" / "bin" / "python"
    _checked([*PIP, "--python", str(python), "install", "--no-compile", "-c", str(ROOT / "constraints.txt"),
              "--find-links", str(work / "dist"), "gatekit"])  # fmt: skip
    return Installed(wheel, python.parent)


def test_the_wheel_carries_every_feature_and_step_of_the_tree(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    tree = [*ROOT.glob("features/**/*.feature"), *ROOT.glob("steps/*.py")]
    assert tree and {f"toolkit/suite/{path.relative_to(ROOT)}" for path in tree} <= names
    assert {"toolkit/suite/__init__.py", "toolkit/certify/certify.ini", "toolkit/scaffold/conftest.py.tmpl",
            "toolkit/certify/allurerc.mjs"} <= names  # fmt: skip
    # the merchant's checkout page of the Hosted Fields scenarios
    assert {f"toolkit/certify/checkout/checkout.{kind}" for kind in ("html", "js", "css")} <= names
    entry_points = next(name for name in names if name.endswith(".dist-info/entry_points.txt"))
    assert (
        "[pytest11]\ngatekit = toolkit.certify.plugin" in zipfile.ZipFile(installed.wheel).read(entry_points).decode()
    )


def test_every_command_starts_without_extras(installed, tmp_path):
    help_text = installed.run("gatekit", "--help", cwd=tmp_path)
    assert help_text.returncode == 0 and all(f"    {name}" in help_text.stdout for name in COMMANDS), help_text.stderr
    for argv in (["operations"], ["keys", "generate", "--out", "keys"], ["listen", "--help"],
                 ["sign", "status", "client_orderid=inv-1", "orderid=1"]):  # fmt: skip
        done = installed.run("gatekit", *argv, cwd=tmp_path)
        assert done.returncode == 0, f"gatekit {' '.join(argv)}: {done.stderr}"
    copied = installed.run("gatekit", "notebooks", "nb", cwd=tmp_path)  # the notebooks come with the wheel
    assert copied.returncode == 0 and "jupyter lab nb" in copied.stdout, copied.stdout + copied.stderr
    assert "  07-load.ipynb  needs gatekit[load], not installed here: pip install 'gatekit[load]'" in copied.stdout
    assert sorted(p.name for p in (tmp_path / "nb").iterdir()) == sorted(p.name for p in ROOT.glob("notebooks/*.ipynb"))
    extras = installed.run("python", "-c", "import selenium", cwd=tmp_path)
    assert "No module named 'selenium'" in extras.stderr, "the venv must hold no extras"


@pytest.fixture
def simulator(installed: Installed, tmp_path: Path) -> Iterator[str]:
    """``gatekit simulate --port 0`` of the installed package; its base URL."""
    process = subprocess.Popen([str(installed.bin / "gatekit"), "simulate", "--port", "0"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        ready, _, _ = select.select([process.stdout], [], [], 30)
        line = process.stdout.readline() if ready and process.stdout else ""
        assert line.startswith("simulator: http://127.0.0.1:"), line + (process.stderr.read() if process.stderr else "")
        yield line.split(": ", 1)[1].strip()
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)


def test_call_sale_against_the_installed_simulator(installed, simulator, tmp_path):
    fields = [f"{name}={value}" for name, value in SALE.items()]
    done = installed.run("gatekit", "call", "sale", *fields, "--base-url", simulator, cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert '"type": "async-response"' in done.stdout and PAN not in done.stdout + done.stderr


def flow_rows(stdout: str) -> dict[str, list[str]]:
    """The per-flow table: flow name -> verdict, passed, failed, skipped."""
    lines = stdout[stdout.index("\nFlow ") :].splitlines()[2:]
    rows = [line for line in lines[: lines.index("")] if not line.startswith(" ")]
    return {" ".join(row.split()[:-4]): row.split()[-4:] for row in rows}


def test_certify_in_an_empty_directory_passes_every_flow_and_writes_the_reports(installed, tmp_path):
    tags = suite_passes.certify_tags(suite_passes.WHEEL_TAGS)  # (the whole suite in make test-long)
    done = installed.run("gatekit", "certify", "--no-html", *tags, cwd=tmp_path)

    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    rows = flow_rows(done.stdout)
    selected = catalog.select(catalog.read([ROOT / "features"]), tags[1] if tags else None)
    # without the [browser] extra the real-browser scenarios are skipped, saying what to install: a flow whose
    # scenarios run are all real-browser ones is a SKIP, every other a PASS
    browser = [entry for entry in selected if "browser" in entry.tags]
    only_browser = {entry.flow for entry in browser} - {entry.flow for entry in selected if entry not in browser}
    expected = {entry.flow: "SKIP" if entry.flow in only_browser else "PASS" for entry in selected}
    assert browser and {flow: row[0] for flow, row in rows.items()} == expected, rows
    assert all(row[2] == "0" for row in rows.values()), rows
    assert sum(int(row[3]) for row in rows.values()) == len(browser), rows
    needs_browser = r"^  skipped (\d+): needs the real-browser payer: pip install 'gatekit\[browser\]'"
    said = re.findall(needs_browser, done.stdout, re.M)
    assert sum(map(int, said)) == len(browser), done.stdout[-3000:]
    junit = ET.parse(tmp_path / "reports" / "junit.xml").getroot().find("testsuite")
    passed = sum(int(row[1]) for row in rows.values())
    assert junit is not None and int(junit.get("tests", "0")) == passed + len(browser)
    assert (junit.get("failures"), junit.get("errors"), junit.get("skipped")) == ("0", "0", str(len(browser)))
    assert (tmp_path / "reports" / "summary.md").read_text().startswith("## ✅ gatekit certification: PASS")
    results = list((tmp_path / "allure-results").glob("*-result.json"))
    assert (
        len(results) == int(junit.get("tests", "0")) and (tmp_path / "allure-results/environment.properties").exists()
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["allure-results", "reports"]
    # identities from the feature's path inside the suite, never the install path (moving the venv keeps trends)
    found = [json.loads(path.read_text()) for path in results]
    for result in found:
        labels = {label["name"]: label["value"] for label in result["labels"] if label["name"] != "tag"}
        assert re.fullmatch(r"[a-z_0-9]+/[a-z_0-9]+\.feature: .+", result["fullName"]), result["fullName"]
        assert labels["parentSuite"] == "gatekit" and labels["package"].startswith("gatekit."), labels
        assert "site-packages" not in json.dumps([result["fullName"], labels, result.get("titlePath")])
    assert any(r["fullName"] == "three_ds/sale_3ds.feature: The payer passes the 3-D Secure 2 challenge"
               for r in found), sorted(r["fullName"] for r in found)[:20]  # fmt: skip


def test_init_then_pytest_and_certify_pass_in_the_scaffold(installed, tmp_path):
    assert installed.run("gatekit", "init", "shop", cwd=tmp_path).returncode == 0
    shop = tmp_path / "shop"
    assert all((shop / name).is_file() for name in FILES)

    tests = installed.run("pytest", "-q", "-p", "no:cacheprovider", cwd=shop)
    assert tests.returncode == 0 and "2 passed" in tests.stdout, tests.stdout[-3000:] + tests.stderr[-2000:]
    certified = installed.run("gatekit", "certify", "--no-html", *suite_passes.certify_tags(suite_passes.SCAFFOLD_TAGS),
                              cwd=shop)  # fmt: skip
    assert certified.returncode == 0, certified.stdout[-4000:] + certified.stderr[-2000:]
    rows = flow_rows(certified.stdout)
    assert rows["Checkout by card"] == ["PASS", "2", "0", "0"] and len(rows) > 1
    own = [json.loads(path.read_text()) for path in (shop / "allure-results").glob("*-result.json")]
    own = [result for result in own if result["fullName"].startswith("checkout.feature: ")]
    assert len(own) == 2 and all({"name": "parentSuite", "value": "features"} in result["labels"] for result in own), [
        r["fullName"] for r in own
    ]
    assert all(row[0] == "PASS" for row in rows.values()), rows
    listed = installed.run("gatekit", "certify", "--list", "--tags", "checkout", cwd=shop)
    assert listed.stdout.startswith("Checkout by card  (features/checkout.feature)\n"), listed.stdout + listed.stderr
