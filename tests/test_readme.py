"""The README is true for a user who installed the wheel: its Python examples that start their own simulator
and its shell examples run as written, every `gatekit` command line is one the CLI accepts, and it cites
nothing a user does not have (the gateway family's internal notes, issue numbers)."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
RUNNABLE = [block for block in re.findall(r"```python\n(.*?)```", README, re.DOTALL) if "SimulatorServer()" in block]


def test_the_first_python_example_of_the_client_starts_its_own_simulator():
    client = README[README.index("## The client") :]
    first = re.search(r"```python\n(.*?)```", client, re.DOTALL)
    assert first is not None and "with SimulatorServer() as simulator:" in first.group(1)
    assert len(RUNNABLE) >= 2 and any("upload_cres_result" in block for block in RUNNABLE)


@pytest.mark.parametrize("block", RUNNABLE, ids=[f"example {n}" for n in range(1, len(RUNNABLE) + 1)])
def test_the_readme_examples_run_as_written(block: str):
    exec(compile(block, "README.md", "exec"), {"__name__": "readme_example"})


# --- what a user who installed the wheel reads ------------------------------------------------------------

SH_BLOCKS = re.findall(r"```sh\n(.*?)```", README, re.DOTALL)
REPOSITORY = README.index("## Working on gatekit (this repository)")
FOR_USERS = README[:REPOSITORY]


def commands(block: str) -> list[str]:
    """The command lines of a shell block: comments dropped, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", block)
    return [line.split("  #", 1)[0].split(" # ", 1)[0].strip().rstrip("&").strip()
            for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]  # fmt: skip


GATEKIT_LINES = [line for block in SH_BLOCKS for line in commands(block) if line.startswith("gatekit ")]
SYNOPSIS = re.compile(r"\[|\.\.\.|\b[A-Z]{3,}\b")  # `gatekit init [DIR]`, `OPERATION field=value ...`


@pytest.mark.parametrize(
    "pattern",
    [r"gateway-behaviour", r"behaviour (page|section)", r"\bsection \d", r"\bissue \d", r"\bspec \d", r"\.\./shared",
     r"\[sim\]", r"\[gw\]"],
)  # fmt: skip
def test_the_readme_cites_nothing_a_user_does_not_have(pattern: str):
    assert not re.search(pattern, README), re.search(pattern, README)


def test_every_gatekit_command_of_the_readme_is_one_the_cli_accepts():
    from toolkit.cli import build_parser

    parser = build_parser()
    checked = [line for line in GATEKIT_LINES if not SYNOPSIS.search(line.replace("EUR", "eur").replace("JOHN", ""))]
    assert len(checked) >= 15, checked
    for line in checked:
        try:
            parser.parse_args(shlex.split(line)[1:])
        except SystemExit:
            pytest.fail(f"README: {line!r} is refused by the command line")


def test_install_and_the_html_report_say_how_a_wheel_user_gets_them():
    install = FOR_USERS[FOR_USERS.index("## Install") : FOR_USERS.index("## Certify from your own repository")]
    assert "pip install ./gatekit-0.1.0-py3-none-any.whl" in install
    assert "./node_modules/.bin/allure" in install and "npx --yes allure@" in install


def test_install_lists_every_extra_of_pyproject_once():
    """Each extra on a line of its own (``- `name`: what it adds``), as pyproject.toml defines them."""
    import tomllib

    install = FOR_USERS[FOR_USERS.index("## Install") : FOR_USERS.index("## Certify from your own repository")]
    listed = re.findall(r"^- `(\w+)`: \S", install, re.M)
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert sorted(listed) == sorted(pyproject["project"]["optional-dependencies"]), listed


def test_certify_makes_the_html_report_with_npx_when_nothing_else_has_allure(tmp_path, monkeypatch):
    """What the README says: node_modules, then allure on the PATH, then npx (no Allure installed here)."""
    from toolkit._version import ALLURE_VERSION
    from toolkit.certify.runner import allure_command

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npx").write_text("#!/bin/sh\n")
    (bin_dir / "npx").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert allure_command(tmp_path) == [str(bin_dir / "npx"), "--yes", f"allure@{ALLURE_VERSION}"]
    (bin_dir / "allure").write_text("#!/bin/sh\n")
    (bin_dir / "allure").chmod(0o755)
    assert allure_command(tmp_path) == [str(bin_dir / "allure")]
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert allure_command(tmp_path) is None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_call_example_runs_as_written_against_gatekit_simulate(tmp_path):
    """The README's sale and status with `gatekit call`, against `gatekit simulate` (another port than 8080, given
    to the calls through GATEWAY_BASE_URL, which wins over the profile as the README says)."""
    block = next(block for block in SH_BLOCKS if "gatekit call sale client_orderid=inv-1" in block)
    simulate, sale, status = commands(block)
    port = _free_port()
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    gatekit = str(Path(sys.executable).with_name("gatekit"))
    server = subprocess.Popen([gatekit, *shlex.split(simulate)[1:-1], str(port)], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert simulate.endswith("--port 8080") and server.stdout is not None
        assert server.stdout.readline().startswith(f"simulator: http://127.0.0.1:{port}/paynet")
        env["GATEWAY_BASE_URL"] = f"http://127.0.0.1:{port}/paynet"
        sold = subprocess.run([gatekit, *shlex.split(sale)[1:]], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip
        assert sold.returncode == 0, sold.stdout + sold.stderr
        answer = json.loads(sold.stdout)
        orderid = answer["paynet-order-id"]
        assert sold.stderr.strip() == f"next: gatekit call status client_orderid=inv-1 orderid={orderid}"
        asked = shlex.split(status.replace("paynet-order-id=8056020", f"paynet-order-id={orderid}"))
        done = subprocess.run([gatekit, *asked[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["status"] in ("approved", "processing")
        assert "paynet-order-id is the answer's name; requests call it orderid" in done.stderr
    finally:
        server.terminate()
        server.communicate(timeout=30)


def test_the_notebooks_example_copies_them_as_written(tmp_path):
    block = next(block for block in SH_BLOCKS if "gatekit notebooks notebooks" in block)
    line = next(line for line in commands(block) if line.startswith("gatekit notebooks"))
    gatekit = str(Path(sys.executable).with_name("gatekit"))
    done = subprocess.run([gatekit, *shlex.split(line)[1:]], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0 and "jupyter lab notebooks" in done.stdout, done.stdout + done.stderr
    assert len(list((tmp_path / "notebooks").glob("*.ipynb"))) == 8  # (the README says eight)


def test_callbacks_are_said_to_arrive_at_least_once_with_the_advice_to_de_duplicate():
    """The gateway delivers callbacks at least once (behaviour section 4), and so does the simulator (a worker
    killed between sending and logging sends again): a merchant who reads "exactly once" writes a handler that
    charges twice (issue 34, #9)."""
    assert "at least once" in FOR_USERS
    assert "de-duplicate on (`orderid`, `type`, `status`)" in FOR_USERS
    for text in (
        FOR_USERS,
        *(path.read_text() for path in Path(__file__).resolve().parents[1].glob("toolkit/**/*.py")),
    ):
        for sentence in re.split(r"(?<=[.;])\s", text):
            assert not ("callback" in sentence.lower() and re.search(r"exactly once|delivered once\b", sentence)), (
                sentence
            )
