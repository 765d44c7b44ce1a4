"""The suite as a package: ``toolkit.suite`` finds features/ and steps/ wherever gatekit is installed,
the step modules import each other the way the wheel needs, and the command line starts without pytest.

The wheel itself is built and run by ``tests/test_wheel.py``; these checks are the fast ones.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from toolkit import suite
from toolkit.certify import catalog

ROOT = Path(__file__).resolve().parents[1]


def test_an_editable_install_reads_the_checkout_s_own_features_and_steps():
    assert suite.root() == ROOT
    assert suite.features_dir() == ROOT / "features"
    import toolkit.suite.steps as steps

    assert Path(steps.__file__).parent == ROOT / "steps"


def test_step_modules_import_shared_code_relatively():
    """The wheel ships steps/ as ``toolkit.suite.steps``: ``from steps.conftest import X`` would not resolve there."""
    offenders = []
    for path in sorted((ROOT / "steps").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            module = node.module if isinstance(node, ast.ImportFrom) and node.level == 0 else None
            if any(name == "steps" or name.startswith("steps.") for name in [*names, module or ""]):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == [], f"write `from .conftest import ...` instead of `from steps...` at {offenders}"


def test_the_sdist_carries_the_suite_that_setup_py_copies_into_the_wheel():
    manifest = (ROOT / "MANIFEST.in").read_text().splitlines()
    assert {"graft features", "graft steps", "graft notebooks"} <= set(manifest)
    assert (
        'SUITE = {"features": "**/*.feature", "steps": "**/*.py", "notebooks": "*.ipynb"}'
        in (ROOT / "setup.py").read_text()
    )


def test_every_feature_file_of_the_tree_is_in_the_catalogue():
    entries = catalog.read([suite.features_dir()])
    files = {entry.path for entry in entries}
    assert files == set((ROOT / "features").glob("**/*.feature"))
    assert all(entry.tags for entry in entries), "every scenario carries at least its flow's tag"


def test_the_command_line_starts_without_pytest():
    code = "import sys, toolkit.cli; toolkit.cli.build_parser(); print(sorted({m.split('.')[0] for m in sys.modules}))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    heavy = {"pytest", "_pytest", "pytest_bdd", "allure", "allure_commons", "selenium", "ipywidgets"}
    assert heavy.isdisjoint(ast.literal_eval(loaded)), loaded


# --- make wheel ----------------------------------------------------------------------------------------


def _make(*argv: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "--no-print-directory", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, check=False)  # fmt: skip


def test_make_wheel_installs_nothing_to_build_the_wheel(tmp_path: Path):
    """On a fresh checkout (no venv yet) ``make wheel`` builds the wheel alone: no venv filled with the
    development extras (minutes of ``pip install -q``), no dependency of gatekit; and it says what it does."""
    planned = _make("-n", "wheel", f"VENV={tmp_path / 'no-venv'}", f"DIST={tmp_path / 'dist'}")
    assert planned.returncode == 0, planned.stderr
    assert " install " not in planned.stdout and "-m venv" not in planned.stdout, planned.stdout
    assert "wheel" in planned.stdout and "--no-deps" in planned.stdout, planned.stdout
    assert "building the gatekit wheel alone" in planned.stdout, planned.stdout


def test_make_wheel_builds_the_wheel_in_seconds_with_the_checkout_s_own_setuptools(tmp_path: Path):
    """With the development venv made (``make install``), its setuptools builds the wheel: offline, no build
    environment to fill."""
    done = _make("wheel", f"DIST={tmp_path / 'dist'}", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout + done.stderr  # (the pip command is echoed by the shell, on stderr)
    assert "the venv's setuptools" in said and "--no-build-isolation" in said and " install " not in said, said
    [wheel] = (tmp_path / "dist").glob("gatekit-*.whl")
    assert done.stdout.rstrip().endswith(str(wheel)), done.stdout
