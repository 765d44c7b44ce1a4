"""What the command line and ``import toolkit`` load: the modules, never a time (issue 12, start-up).

Each check runs a fresh interpreter and lists ``sys.modules`` after the command: ``gatekit --help``,
``gatekit sign`` and ``gatekit call`` must not load the simulator, FastAPI or pytest, and
``--help`` not the HTTP client either (``sign`` does: it signs the request ``GatewayClient`` prepares).
Every command checked must also succeed: a command that fails early loads little.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolkit
from toolkit.cli import COMMANDS, EXIT_TRANSPORT, EXIT_USAGE

ROOT = Path(__file__).resolve().parents[1]

# Run the CLI in-process, then write the names of the loaded modules to the file given first.
RUN_CLI = """
import json, sys
import toolkit.cli
try:
    code = toolkit.cli.main(sys.argv[2:])
finally:
    with open(sys.argv[1], "w") as out:
        json.dump(sorted(sys.modules), out)
sys.exit(code)
"""

SERVER_SIDE = ("toolkit.simulator", "fastapi", "starlette", "uvicorn", "pydantic", "pytest", "_pytest", "pytest_bdd")
CLIENT_SIDE = ("requests", "urllib3", "toolkit.client", "toolkit.transport", "toolkit.simcontrol")
REPORTS = ("allure", "allure_commons", "selenium", "toolkit.diagram", "toolkit.certify.plugin")


def loaded_by(tmp_path: Path, *argv: str, exit_code: int = 0) -> set[str]:
    """The modules loaded once ``gatekit ARGV`` has run and ended with ``exit_code`` (its output is thrown away)."""
    listing = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", RUN_CLI, str(listing), *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=_clean_environ(),  # no GATEWAY_*/GATEKIT_* settings; no gatekit.toml in tmp_path
    )
    assert done.returncode == exit_code, f"gatekit {' '.join(argv)}: exit {done.returncode}\n{done.stderr[-2000:]}"
    return set(json.loads(listing.read_text()))


def _clean_environ() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}


def among(modules: set[str], packages: tuple[str, ...]) -> set[str]:
    """The modules of ``modules`` that are one of ``packages`` or inside one."""
    return {name for name in modules if any(name == p or name.startswith(p + ".") for p in packages)}


def test_help_loads_neither_the_server_nor_the_client(tmp_path):
    modules = loaded_by(tmp_path, "--help")
    assert "toolkit.cli" in modules and "toolkit.commands.simulate" in modules  # every command is registered
    assert among(modules, SERVER_SIDE + CLIENT_SIDE + REPORTS) == set()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_commands_help_loads_neither_the_server_nor_the_client(tmp_path, command):
    assert among(loaded_by(tmp_path, command, "--help"), SERVER_SIDE + CLIENT_SIDE + REPORTS) == set()


def test_sign_loads_the_signing_code_but_not_the_server(tmp_path):
    argv = ["sign", "sale", "client_orderid=1", "amount=10.42", "--no-validate", "--nonce", "n", "--timestamp", "1"]
    modules = loaded_by(tmp_path, *argv)
    assert {"toolkit.signing", "toolkit.auth"} <= modules  # it did sign
    # requests comes with toolkit.client (GatewayClient.prepare builds a requests.PreparedRequest)
    assert among(modules, SERVER_SIDE + REPORTS) == set()


def test_call_loads_the_client_but_not_the_server(tmp_path):
    # nothing listens on port 9 of loopback: the call fails at once, after the client was used
    argv = ["call", "status", "client_orderid=1", "orderid=1", "--base-url", "http://127.0.0.1:9"]
    modules = loaded_by(tmp_path, *argv, exit_code=EXIT_TRANSPORT)
    assert {"toolkit.client", "requests"} <= modules
    assert among(modules, SERVER_SIDE + REPORTS) == set()


def test_simulate_loads_the_simulator_when_it_runs(tmp_path):
    # a settings file that does not exist: the command stops (exit 2) after importing the simulator's settings
    modules = loaded_by(
        tmp_path, "simulate", "--config", str(tmp_path / "missing.toml"), "--port", "0", exit_code=EXIT_USAGE
    )
    assert "toolkit.simulator.settings" in modules


def test_import_toolkit_alone_loads_nothing_of_its_own():
    code = "import json, sys, toolkit; print(json.dumps(sorted(m for m in sys.modules if m.startswith('toolkit'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # toolkit._ipython: a look at sys.modules that registers the notebook views by name in a running kernel
    assert json.loads(out) == ["toolkit", "toolkit._ipython", "toolkit._version"]


def test_every_public_name_is_the_object_of_its_module():
    for name in toolkit.__all__:
        if name == "__version__":
            continue
        module = importlib.import_module(toolkit._LAZY[name])
        assert getattr(toolkit, name) is getattr(module, name), name


def test_the_public_names_are_those_that_type_checkers_see():
    """``__all__``, the lazy table and the ``if TYPE_CHECKING:`` imports name the same things from the same modules."""
    tree = ast.parse((ROOT / "toolkit" / "__init__.py").read_text())
    guarded = next(node for node in tree.body if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test))
    typed = {alias.name: node.module for node in guarded.body if isinstance(node, ast.ImportFrom)
             for alias in node.names}  # fmt: skip
    assert typed == toolkit._LAZY
    assert set(toolkit.__all__) == {*toolkit._LAZY, "__version__"}
    assert set(toolkit.__all__) <= set(dir(toolkit))


def test_from_toolkit_import_works_for_every_name_and_an_unknown_name_is_an_attribute_error():
    code = f"from toolkit import {', '.join(toolkit.__all__)}; import toolkit; toolkit.no_such_name"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "AttributeError: module 'toolkit' has no attribute 'no_such_name'" in result.stderr


def test_the_pytest_plugin_loads_neither_the_simulator_nor_the_client_until_a_fixture_runs():
    """Every pytest process loads the plugin; the xdist controller runs no test, so it never needs them."""
    plugins = ("toolkit.certify.plugin", "toolkit.certify.fixtures", "toolkit.certify.target", "toolkit.steps")
    code = f"import json, sys; import {', '.join(plugins)}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert among(set(json.loads(out)), ("toolkit.simulator", "fastapi", "uvicorn", *CLIENT_SIDE)) == set()
