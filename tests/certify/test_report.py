"""The certification report of a run that fails on purpose (``tests/failing_suite``), read as Allure and CI read it.

One ``gatekit certify`` run (``GATEKIT_BROWSER=off``: its browser scenario is skipped with the reason)
whose scenarios each fail in their own way: the Allure results name them by their Gherkin titles, tell
Failed from Broken, fall into gatekit's categories, keep their labels when skipped, carry each tag once,
no local paths and no fixture noise; the JUnit XML and the Markdown summary name them the same way.
When Allure 3 is installed (``node_modules``, as ``make certify`` installs it), its report applies the
categories too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from toolkit.certify.categories import category_of

ROOT = Path(__file__).resolve().parents[2]
SUITE = Path(__file__).resolve().parents[1] / "failing_suite"
FLOW = "A run that fails on purpose"
# title -> (Allure status, category)
EXPECTED = {
    "A declined card where the merchant expects an approval": ("failed", "Declined"),
    "A sale signed with the wrong control key": ("failed", "Refused by the gateway"),
    "The gateway fails to process the sale": ("failed", "Simulator or gateway fault"),
    "Nothing answers at the gateway's address": ("broken", "Transport: no answer"),
    "The payer never answers the 3-D Secure challenge": ("failed", "No outcome in time"),
    "An approved sale of another amount than expected": ("failed", "Assertion: the gateway answered otherwise"),
    "A page the payer cannot read": ("failed", "The payer lost its way"),
    "A step whose own code is wrong": ("broken", "Test defects"),
    "An approved sale": ("passed", None),
    "A payment page in a real browser": ("skipped", None),
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    where = tmp_path_factory.mktemp("failing")
    shutil.copytree(SUITE, where, dirs_exist_ok=True)
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    env |= {"GATEKIT_BROWSER": "off", "GITHUB_RUN_ID": "42", "GITHUB_REPOSITORY": "acme/shop"}
    command = [sys.executable, "-m", "toolkit.cli", "certify", "--no-html", "--suite-only", "--suite", "features"]
    done = subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, timeout=300, check=False)
    return where, done


@pytest.fixture(scope="module")
def results(run: tuple[Path, subprocess.CompletedProcess[str]]) -> dict[str, dict[str, Any]]:
    where, done = run
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    found = [json.loads(path.read_text()) for path in (where / "allure-results").glob("*-result.json")]
    return {result["name"]: result for result in found}


def test_scenarios_are_named_by_their_gherkin_titles(results):
    assert set(results) == set(EXPECTED)


def test_failed_and_broken_and_categories_follow_the_cause(results):
    seen = {
        name: (result["status"], category_of(result["status"], result.get("statusDetails", {}).get("message")))
        for name, result in results.items()
    }
    assert seen == EXPECTED


def test_every_scenario_keeps_its_labels_even_when_skipped_and_each_tag_once(results):
    for name, result in results.items():
        labels = [(label["name"], label["value"]) for label in result["labels"]]
        kinds = dict(labels)
        assert (kinds["epic"], kinds["story"]) == (FLOW, name), labels
        assert kinds["feature"] in ("sale", "status", "sale_form", FLOW), labels
        tags = Counter(value for kind, value in labels if kind == "tag")
        assert all(count == 1 for count in tags.values()), tags
    untagged = results["A step whose own code is wrong"]  # (no operation tag: under its flow, not "general")
    assert [label["value"] for label in untagged["labels"] if label["name"] == "feature"] == [FLOW]
    skipped = results["A payment page in a real browser"]
    assert skipped["statusDetails"]["message"].startswith("Skipped: GATEKIT_BROWSER=off")
    assert {label["value"] for label in skipped["labels"] if label["name"] == "tag"} >= {"browser", "sale_form"}


def test_identities_come_from_the_feature_path_inside_its_suite(results, run):
    where, _ = run
    for name, result in results.items():
        labels = {label["name"]: label["value"] for label in result["labels"] if label["name"] != "tag"}
        assert result["fullName"] == f"failures.feature: {name}", result["fullName"]
        assert (labels["parentSuite"], labels["package"]) == ("features", "features.failures"), labels
        assert str(where) not in json.dumps([result["fullName"], labels, result["titlePath"]])


def test_the_description_is_the_gherkin_without_a_local_path(results, run):
    where, _ = run
    for result in results.values():
        description = result["description"]
        assert description.startswith("```gherkin\nFeature: A run that fails on purpose\n"), description
        assert str(where) not in description and ".feature" not in description
    text = results["A declined card where the merchant expects an approval"]["description"]
    assert "    Given a card that is declined\n    When the merchant sends a sale of 10.00 EUR\n" in text


def test_passing_fixtures_leave_no_set_up_or_tear_down_entries(run):
    where, _ = run
    containers = [json.loads(path.read_text()) for path in (where / "allure-results").glob("*-container.json")]
    entries = [entry for c in containers for entry in (*c.get("befores", ()), *c.get("afters", ()))]
    assert containers and all(entry.get("status") in ("failed", "broken") for entry in entries), entries


def test_the_progress_lines_and_the_junit_xml_use_the_titles(run):
    where, done = run
    assert f"FAILED  {FLOW}: A declined card where the merchant expects an approval" in done.stdout
    assert f"SKIPPED {FLOW}: A payment page in a real browser" in done.stdout
    cases = {case.get("name"): case for case in ET.parse(where / "reports" / "junit.xml").getroot().iter("testcase")}
    assert set(cases) == set(EXPECTED)
    assert {case.get("classname") for case in cases.values()} == {FLOW}


def test_the_markdown_summary_has_the_flow_table_the_failures_and_links(run):
    where, done = run
    summary = (where / "reports" / "summary.md").read_text()
    assert summary.startswith("## ❌ gatekit certification: FAIL\n")
    assert f"| {FLOW} | ❌ FAIL | 1 | 8 | 1 |" in summary
    assert f"- **{FLOW}**: The gateway fails to process the sale: `toolkit.errors.ServerError: sale:" in summary
    assert "1 × GATEKIT_BROWSER=off: the real-browser payer is switched off" in summary
    assert "[JUnit XML](junit.xml)" in summary and "(https://github.com/acme/shop/actions/runs/42)" in summary
    assert "Allure report" not in summary  # --no-html: no report to link
    assert f"Summary (Markdown, for CI): {where / 'reports' / 'summary.md'}" in done.stdout


ALLURE = ROOT / "node_modules" / ".bin" / "allure"


@pytest.mark.skipif(not ALLURE.exists(), reason="Allure 3 is not installed here (npm ci, as make certify does)")
def test_allure_3_applies_gatekits_categories(run, tmp_path):
    where, _ = run
    config = tmp_path / "allurerc.mjs"  # gatekit's configuration, with the report as files to read back
    config.write_text(
        (ROOT / "toolkit" / "certify" / "allurerc.mjs").read_text().replace("singleFile: true", "singleFile: false")
    )
    env = {**os.environ, "GATEKIT_ALLURE_RESULTS": str(where / "allure-results"), "GATEKIT_REPORTS": str(tmp_path)}
    argv = [
        str(ALLURE),
        "generate",
        str(where / "allure-results"),
        "-o",
        str(tmp_path / "html"),
        "--config",
        str(config),
    ]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    tree = json.loads((tmp_path / "html" / "widgets" / "categories.json").read_text())
    counts = {node["name"]: node["statistic"]["total"] for node in tree["nodes"].values() if node["type"] == "category"}
    assert counts == Counter(category for _, category in EXPECTED.values() if category)
    assert (tmp_path / "history.jsonl").is_file()  # historyPath: the next report shows the trend


def test_a_page_the_payer_cannot_read_is_attached_with_what_it_looked_for(run, results):
    """The report carries why the payer was lost (what it looked for, the page's forms) and the page, masked."""
    where, _ = run
    result = results["A page the payer cannot read"]
    assert "no payment form: looked for a form with a card-number input" in result["statusDetails"]["message"]

    def steps(step: dict[str, Any]) -> list[dict[str, Any]]:
        return [step, *(inner for child in step.get("steps", []) for inner in steps(child))]

    found = [s for s in steps(result) if s["name"].startswith("Payer could not find its way on ")]
    assert found, [s["name"] for s in steps(result)]
    names = {a["name"]: a["source"] for a in found[0]["attachments"]}
    assert set(names) == {"what the payer looked for, and what the page has",
                          "the page the payer could not read (HTML, masked)"}  # fmt: skip
    why = (where / "allure-results" / names["what the payer looked for, and what the page has"]).read_text()
    page = (where / "allure-results" / names["the page the payer could not read (HTML, masked)"]).read_text()
    assert "no payment form" in why and "HTTP 404" in why and "does not exist" in page
