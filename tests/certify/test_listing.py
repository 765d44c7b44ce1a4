"""``gatekit certify --list`` shows what runs: a Scenario Outline once per example, titled as the run titles it,
so that its count is the count of ``--check`` and of the run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from toolkit.certify import catalog

OUTLINE = """\
Feature: Outlines
  Scenario Outline: A sale of <amount>
    Given a card that is approved
    When the merchant sends a sale of <amount> EUR
    Then the order is approved

    Examples:
      | amount |
      | 1.00   |
      | 2.00   |

    @big
    Examples:
      | amount |
      | 900.00 |

  Scenario Outline: A card that is declined
    Given a card that <description>
    When the merchant sends a sale of 10.00 EUR
    Then the order is declined with "Do not honor"

    Examples:
      | description |
      | is declined |

  Scenario: A plain scenario
    Given a card that is approved
"""


def gatekit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    return subprocess.run([sys.executable, "-m", "toolkit.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=180, check=False)  # fmt: skip


def test_an_outline_is_listed_once_per_example_with_the_runs_title_and_its_examples_tags(tmp_path):
    (tmp_path / "outlines.feature").write_text(OUTLINE)

    entries = catalog.read([tmp_path])

    assert [(entry.scenario, sorted(entry.tags)) for entry in entries] == [
        ("A sale of 1.00", []),
        ("A sale of 2.00", []),
        ("A sale of 900.00", ["big"]),
        ("A card that is declined (is declined)", []),
        ("A plain scenario", []),
    ]
    assert [entry.scenario for entry in catalog.select(entries, "big")] == ["A sale of 900.00"]


def test_list_counts_what_check_counts_for_gatekits_own_suite(tmp_path):
    listed = gatekit("certify", "--list", cwd=tmp_path)
    checked = gatekit("certify", "--check", cwd=tmp_path)

    assert (listed.returncode, checked.returncode) == (0, 0), listed.stderr + checked.stdout[-2000:]
    [listed_count] = re.findall(r"^(\d+) scenarios in \d+ flows", listed.stdout, re.MULTILINE)
    [checked_count] = re.findall(r"gatekit certify --check: (\d+) scenarios", checked.stdout)
    assert listed_count == checked_count
    assert "<" not in listed.stdout  # no outline's <placeholder> left
