"""The explorer's exports go where the merchant's suite is, and the message names the command that runs them."""

from __future__ import annotations

import os
import subprocess
import sys

from toolkit.exporter.place import default_export_path, how_to_run, project_root

FEATURE = """\
@exported
Feature: Recorded in the explorer
  Scenario: Recorded in the explorer: sale
    Given a card that is approved
    When the merchant sends a sale of 10.00 EUR
    Then the order is approved
"""


def test_a_merchant_project_gets_its_features_exported_folder(tmp_path):
    shop = tmp_path / "shop"
    (shop / "notebooks").mkdir(parents=True)
    (shop / "gatekit.toml").write_text("")

    path = default_export_path(env={}, start=shop / "notebooks")  # a notebook's kernel runs in its folder

    assert path == shop / "features" / "exported" / "explorer.feature"
    assert project_root(shop / "notebooks") == shop
    assert how_to_run(path, env={}, start=shop / "notebooks") == (
        f"it runs with: cd {shop} && gatekit certify (only the exported scenarios: --tags exported)"
    )


def test_gatekit_suite_names_the_folder(tmp_path):
    env = {"GATEKIT_SUITE": str(tmp_path / "acceptance")}
    assert default_export_path(env=env, start=tmp_path) == tmp_path / "acceptance" / "exported" / "explorer.feature"
    elsewhere = tmp_path / "other" / "x.feature"
    assert how_to_run(elsewhere, env=env, start=tmp_path).endswith(
        f"gatekit certify --suite {tmp_path / 'other'} --suite-only"
    )


def test_the_saved_export_runs_with_the_command_the_message_names(tmp_path):
    """As a merchant would: the file where the explorer puts it, then `gatekit certify` there, as it says."""
    (tmp_path / "gatekit.toml").write_text("")
    path = default_export_path(env={}, start=tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(FEATURE)
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    command = [sys.executable, "-m", "toolkit.cli", "certify", "--no-html", "--tags", "exported"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert any(line.startswith("Recorded in the explorer") and "PASS" in line for line in done.stdout.splitlines())
