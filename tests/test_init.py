"""``gatekit init``: the scaffold of a merchant's repository, written and checked without running it.

Running the scaffold (``pytest`` and ``gatekit certify`` in it, from an installed wheel) is
``tests/test_wheel.py``'s job.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli import run
from toolkit._version import ALLURE_VERSION, __version__
from toolkit.commands.init import FILES
from toolkit.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[1]
SANDBOX_ENV = {
    "GATEWAY_BASE_URL": "https://sandbox.gateway.example/paynet",
    "GATEWAY_ENDPOINT_ID": "51494",
    "GATEWAY_LOGIN": "acme",
    "GATEWAY_CONTROL_KEY": "B17F59B4-A7DC-41B4-8FF9-37D986B43D20",
}

pytestmark = pytest.mark.usefixtures("clean_env")


def test_init_writes_every_file_and_says_what_to_do_next(capsys, tmp_path):
    code, out, err = run(capsys, "init", str(tmp_path / "shop"))

    assert (code, err) == (0, "")
    assert sorted(
        str(p.relative_to(tmp_path / "shop")) for p in (tmp_path / "shop").rglob("*") if p.is_file()
    ) == sorted(FILES)
    assert out.splitlines()[0] == f"gatekit init: wrote {len(FILES)} files in {tmp_path / 'shop'}"
    assert "gatekit certify --profile sandbox" in out and "  pytest " in out


def test_init_leaves_existing_files_alone_unless_forced(capsys, tmp_path):
    (tmp_path / "conftest.py").write_text("# ours\n")

    code, out, err = run(capsys, "init", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == f"gatekit init: {tmp_path}: conftest.py exist already (--force overwrites them)\n"
    assert (tmp_path / "conftest.py").read_text() == "# ours\n" and not (tmp_path / "gatekit.toml").exists()

    assert run(capsys, "init", str(tmp_path), "--force")[0] == 0
    assert "pytest_plugins" in (tmp_path / "conftest.py").read_text()


def test_the_sandbox_profile_takes_its_account_and_secrets_from_the_environment(capsys, tmp_path):
    run(capsys, "init", str(tmp_path))
    file = tmp_path / "gatekit.toml"

    config = load_config("sandbox", env=SANDBOX_ENV, file=file)
    assert (config.base_url, config.endpoint_id, config.login) == (
        "https://sandbox.gateway.example/paynet",
        "51494",
        "acme",
    )
    assert config.control_key.reveal() == SANDBOX_ENV["GATEWAY_CONTROL_KEY"]
    assert "CONTROL_KEY = " not in file.read_text().upper().replace("CONTROL_KEY_ENV", "")
    with pytest.raises(
        ConfigError, match=r"missing base_url \(GATEWAY_BASE_URL\), login \(GATEWAY_LOGIN\), control_key"
    ):
        load_config("sandbox", env={}, file=file)


def test_the_ci_files_certify_and_publish_the_allure_report_and_junit_xml(capsys, tmp_path):
    run(capsys, "init", str(tmp_path))

    for name in (".github/workflows/gatekit.yml", ".gitlab-ci.yml"):
        text = (tmp_path / name).read_text()
        assert 'pip install "$GATEKIT_INSTALL"' in text and "gatekit certify" in text, name
        assert "gatekit==" + __version__ in text and "@GATEKIT_INSTALL@" not in text, name  # the default
        assert f"npx --yes allure@{ALLURE_VERSION} generate allure-results -o reports/allure-report" in text, name
        assert "reports/junit.xml" in text and "@" + "GATEKIT_VERSION" not in text, name
        assert "GATEWAY_CONTROL_KEY" in text, name
    assert "secrets.GATEWAY_CONTROL_KEY" in (tmp_path / ".github/workflows/gatekit.yml").read_text()
    assert "junit: reports/junit.xml" in (tmp_path / ".gitlab-ci.yml").read_text()
    github = (tmp_path / ".github/workflows/gatekit.yml").read_text()
    assert "GATEKIT_INSTALL: ${{ vars.GATEKIT_INSTALL || 'gatekit==" + __version__ + "' }}" in github


def test_the_ci_files_install_gatekit_the_way_it_was_installed_here(monkeypatch):
    """A git checkout is installed again from git; a local wheel, which CI does not have, is said so."""
    import json

    from toolkit.commands import init

    class Found:
        def __init__(self, direct: dict[str, object]) -> None:
            self.direct = direct

        def read_text(self, name: str) -> str:
            return json.dumps(self.direct)

    cases = {
        "git": ({"url": "https://git.example/acme/gatekit.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}},
                "gatekit @ git+https://git.example/acme/gatekit.git@abc123", False),
        "wheel": ({"url": "file:///home/me/gatekit-0.1.0-py3-none-any.whl", "archive_info": {}},
                  f"gatekit=={__version__}", True),
        "url": ({"url": "https://files.example/gatekit-0.1.0-py3-none-any.whl", "archive_info": {}},
                "gatekit @ https://files.example/gatekit-0.1.0-py3-none-any.whl", False),
    }  # fmt: skip
    for direct, spec, warned in cases.values():
        monkeypatch.setattr(init.metadata, "distribution", lambda name, d=direct: Found(d))
        found, warning = init.install_spec()
        assert (found, warning is not None) == (spec, warned)
        if warning:
            assert "/home/me/gatekit-0.1.0-py3-none-any.whl, which CI does not have" in warning
            assert "GATEKIT_INSTALL" in warning


def test_the_scaffold_pins_the_allure_of_this_repository():
    pinned = json.loads((ROOT / "package.json").read_text())["devDependencies"]["allure"]
    assert pinned == ALLURE_VERSION


def test_the_scaffold_python_passes_the_linter(capsys, tmp_path):
    run(capsys, "init", str(tmp_path))
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", "E,F,W,I,B", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
